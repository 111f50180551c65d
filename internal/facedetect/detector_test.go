package facedetect

import (
	"errors"
	"image"
	"image/draw"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/robot"
)

// assets is the folder .ci/face-assets fills from the npm registry: ONNX Runtime, BlazeFace models
// and a photograph with three faces. Without it the tests that run the real model skip, except on
// CI, which must run them.
func assets(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("ROBOTHUB_FACE_ASSETS")
	if dir == "" {
		cache, _ := os.UserCacheDir()
		dir = filepath.Join(cache, "robothub", "face-assets")
	}
	if _, err := os.Stat(filepath.Join(dir, "libonnxruntime.so.1")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must run the face detector on ONNX Runtime: run .ci/face-assets first (%v)", err)
		}
		t.Skipf("no ONNX Runtime in %s: run .ci/face-assets to fetch it and the test models (%v)", dir, err)
	}
	return dir
}

func openDetector(t testing.TB, model string) *Detector {
	t.Helper()
	dir := assets(t)
	rt, err := OpenRuntime(filepath.Join(dir, "libonnxruntime.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, model))
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(rt, data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

// FacesPhoto is face-api's demo photograph sample1.jpg (1920×1280): three women side by side.
// Their faces' centres and widths, measured by hand on the photograph, in its pixels.
var photoFaces = []struct{ x, y, w float64 }{
	{515, 505, 190},  // left, upright
	{940, 558, 180},  // middle, head tilted
	{1570, 340, 155}, // right, head leaning far
}

func loadPhoto(t testing.TB) *image.RGBA {
	t.Helper()
	f, err := os.Open(filepath.Join(assets(t), "faces-1.jpg"))
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

// inPixels is where a face lies in the pixels of frame.
func inPixels(f robot.Face, frame image.Rectangle) (x, y, w float64) {
	return float64(frame.Min.X) + (f.X+1)/2*float64(frame.Dx()), float64(frame.Min.Y) + (f.Y+1)/2*float64(frame.Dy()), f.Width * float64(frame.Dx())
}

func TestDetectorFindsTheThreeFacesOfAPhotograph(t *testing.T) {
	d := openDetector(t, "blazeface-back-256.onnx")
	if d.Model != "BlazeFace" {
		t.Fatalf("model %q", d.Model)
	}
	photo := loadPhoto(t)
	faces, err := d.Detect(photo)
	if err != nil {
		t.Fatal(err)
	}
	if len(faces) != len(photoFaces) {
		t.Fatalf("found %d faces, want %d: %+v", len(faces), len(photoFaces), faces)
	}
	for _, want := range photoFaces {
		found := false
		for _, f := range faces {
			x, y, w := inPixels(f, photo.Bounds())
			if math.Abs(x-want.x) < 40 && math.Abs(y-want.y) < 40 && math.Abs(w-want.w) < 60 && f.Score > 0.6 {
				found = true
			}
		}
		if !found {
			t.Errorf("no face at (%v, %v) of width %v: found %+v", want.x, want.y, want.w, faces)
		}
	}
}

func TestDetectorFindsAFaceLeftOfCentreInACrop(t *testing.T) {
	for _, model := range []string{"blazeface-front-128.onnx", "blazeface-back-256.onnx"} {
		t.Run(model, func(t *testing.T) {
			d := openDetector(t, model)
			photo := loadPhoto(t)
			// Around the left face only, 4:3, the face in the left half.
			crop := photo.SubImage(image.Rect(300, 250, 940, 730)).(*image.RGBA)
			faces, err := d.Detect(crop)
			if err != nil {
				t.Fatal(err)
			}
			if len(faces) == 0 {
				t.Fatal("no face")
			}
			f := faces[0]
			want := (photoFaces[0].x-300)/640*2 - 1 // -0.33
			if math.Abs(f.X-want) > 0.1 || f.X >= 0 || math.Abs(f.Roll) > 0.3 {
				t.Fatalf("face %+v: want X %.2f (left of centre), upright", f, want)
			}
		})
	}
}

func TestDetectorFindsNoFaceInAFlatFrame(t *testing.T) {
	d := openDetector(t, "blazeface-back-256.onnx")
	frame := image.NewRGBA(image.Rect(0, 0, 640, 480))
	draw.Draw(frame, frame.Bounds(), image.NewUniform(image.White), image.Point{}, draw.Src)
	faces, err := d.Detect(frame)
	if err != nil || len(faces) != 0 {
		t.Fatalf("faces %+v err %v: want none", faces, err)
	}
	if _, err := d.Detect(image.NewRGBA(image.Rectangle{})); err == nil {
		t.Fatal("an empty frame was detected on")
	}
}

func TestNewRefusesWhatIsNotAFaceModel(t *testing.T) {
	dir := assets(t)
	rt, err := OpenRuntime(filepath.Join(dir, "libonnxruntime.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	model, err := os.ReadFile(filepath.Join(dir, "blazeface-front-128.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"truncated": model[:len(model)/2], "empty": nil, "text": []byte("not a model")} {
		if _, err := New(rt, data, Options{}); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}

func TestFindRuntimeSaysWhereItLooked(t *testing.T) {
	empty := t.TempDir()
	env := map[string]string{"LD_LIBRARY_PATH": empty}
	_, err := FindRuntime("", func(k string) string { return env[k] })
	if _, statErr := os.Stat("/usr/lib/libonnxruntime.so"); statErr == nil {
		t.Skip("this machine has ONNX Runtime installed system-wide")
	}
	if err == nil || !strings.Contains(err.Error(), "ONNX Runtime's shared library (libonnxruntime) was not found") ||
		!strings.Contains(err.Error(), filepath.Join(empty, "libonnxruntime.so")) || !strings.Contains(err.Error(), LibraryEnv) {
		t.Fatalf("err %v", err)
	}
	notLib := filepath.Join(empty, "libonnxruntime.so")
	os.WriteFile(notLib, []byte("not a library"), 0o644)
	env[LibraryEnv] = notLib
	_, err = FindRuntime("", func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), LibraryEnv) || !strings.Contains(err.Error(), notLib) {
		t.Fatalf("err %v", err)
	}
	if _, err := FindRuntime(filepath.Join(empty, "missing.so"), os.Getenv); err == nil || errors.Is(err, os.ErrExist) {
		t.Fatalf("err %v", err)
	}
}
