package facedetect

import (
	"errors"
	"image"
	"image/draw"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/internal/testkit/facetest"
)

func openDetector(t testing.TB, model string) *Detector {
	t.Helper()
	dir := facetest.Assets(t)
	rt, err := OpenRuntime(filepath.Join(dir, facetest.Runtime))
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

// inPixels is where a face lies in the pixels of frame.
func inPixels(f robot.Face, frame image.Rectangle) (x, y, w float64) {
	return float64(frame.Min.X) + (f.X+1)/2*float64(frame.Dx()), float64(frame.Min.Y) + (f.Y+1)/2*float64(frame.Dy()), f.Width * float64(frame.Dx())
}

func TestDetectorFindsTheThreeFacesOfAPhotograph(t *testing.T) {
	d := openDetector(t, facetest.BlazeFace256)
	if d.Model != "BlazeFace" {
		t.Fatalf("model %q", d.Model)
	}
	photo := facetest.LoadPhoto(t)
	faces, err := d.Detect(photo)
	if err != nil {
		t.Fatal(err)
	}
	if len(faces) != len(facetest.PhotoFaces) {
		t.Fatalf("found %d faces, want %d: %+v", len(faces), len(facetest.PhotoFaces), faces)
	}
	for _, want := range facetest.PhotoFaces {
		found := false
		for _, f := range faces {
			x, y, w := inPixels(f, photo.Bounds())
			if math.Abs(x-want.X) < 40 && math.Abs(y-want.Y) < 40 && math.Abs(w-want.W) < 60 && f.Score > 0.6 {
				found = true
			}
		}
		if !found {
			t.Errorf("no face at (%v, %v) of width %v: found %+v", want.X, want.Y, want.W, faces)
		}
	}
}

func TestDetectorFindsAFaceLeftOfCentreInACrop(t *testing.T) {
	for _, model := range []string{facetest.BlazeFace128, facetest.BlazeFace256} {
		t.Run(model, func(t *testing.T) {
			d := openDetector(t, model)
			photo := facetest.LoadPhoto(t)
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
			want := (facetest.PhotoFaces[0].X-300)/640*2 - 1 // -0.33
			if math.Abs(f.X-want) > 0.1 || f.X >= 0 || math.Abs(f.Roll) > 0.3 {
				t.Fatalf("face %+v: want X %.2f (left of centre), upright", f, want)
			}
		})
	}
}

func TestDetectorFindsNoFaceInAFlatFrame(t *testing.T) {
	d := openDetector(t, facetest.BlazeFace256)
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
	dir := facetest.Assets(t)
	rt, err := OpenRuntime(filepath.Join(dir, facetest.Runtime))
	if err != nil {
		t.Fatal(err)
	}
	model, err := os.ReadFile(filepath.Join(dir, facetest.BlazeFace128))
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
