// Package facetest finds what the face detector's tests run on: ONNX Runtime, face models and a
// photograph with known faces, which .ci/face-assets fetches from the npm registry into a cache
// outside the repository.
package facetest

import (
	"image"
	"image/draw"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"
)

// Files in Assets.
const (
	Runtime      = "libonnxruntime.so.1"      // ONNX Runtime 1.30.0 of onnxruntime-node
	BlazeFace128 = "blazeface-front-128.onnx" // MediaPipe's short-range BlazeFace
	BlazeFace256 = "blazeface-back-256.onnx"  // MediaPipe's full-range BlazeFace
	Photo        = "faces-1.jpg"              // face-api's demo photograph sample1.jpg
)

// PhotoFaces are the faces of Photo (1920×1280: three women side by side), measured by hand on
// the photograph: their centres and widths in its pixels.
var PhotoFaces = []struct{ X, Y, W float64 }{
	{515, 505, 190},  // left, upright
	{940, 558, 180},  // middle, head tilted
	{1570, 340, 155}, // right, head leaning far
}

// Assets returns the folder .ci/face-assets fills ($ROBOTHUB_FACE_ASSETS, else
// <user cache>/robothub/face-assets). Without it the test skips, saying how to fetch it, except
// on CI ($CI set), which must run the real detector.
func Assets(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("ROBOTHUB_FACE_ASSETS")
	if dir == "" {
		cache, _ := os.UserCacheDir()
		dir = filepath.Join(cache, "robothub", "face-assets")
	}
	if _, err := os.Stat(filepath.Join(dir, Runtime)); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must run the face detector on ONNX Runtime: run .ci/face-assets first (%v)", err)
		}
		t.Skipf("no ONNX Runtime in %s: run .ci/face-assets to fetch it and the test models (%v)", dir, err)
	}
	return dir
}

// LoadPhoto decodes Photo.
func LoadPhoto(t testing.TB) *image.RGBA {
	t.Helper()
	f, err := os.Open(filepath.Join(Assets(t), Photo))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, err := jpeg.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	rgba := image.NewRGBA(src.Bounds())
	draw.Draw(rgba, rgba.Bounds(), src, image.Point{}, draw.Src)
	return rgba
}
