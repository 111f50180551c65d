package robotd_test

import (
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/hubtest"

	"github.com/robothub/robothub/internal/hubemu/localhub"
	"github.com/robothub/robothub/internal/testkit/facetest"
)

// facesHub serves a local hub whose one model repo, local/faces, holds the BlazeFace models of
// the test assets, as the public hub serves YuNet's.
func facesHub(t testing.TB, assets string) *hubtest.Hub {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "local", "faces")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{facetest.BlazeFace128, facetest.BlazeFace256} {
		data, err := os.ReadFile(filepath.Join(assets, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return hubtest.Start(t, localhub.Config{ModelsDir: filepath.Dir(filepath.Dir(dir))})
}

// faceLeftFrame writes a 640×480 JPEG: a grey wall with the photograph's left face pasted left of
// centre, its centre at (220, 240), so X = 220/320 - 1 = -0.31.
func faceLeftFrame(t testing.TB) string {
	photo := facetest.LoadPhoto(t)
	frame := image.NewRGBA(image.Rect(0, 0, 640, 480))
	draw.Draw(frame, frame.Bounds(), image.NewUniform(color.RGBA{128, 128, 128, 255}), image.Point{}, draw.Src)
	face := facetest.PhotoFaces[0]
	from := image.Pt(int(face.X)-180, int(face.Y)-180)
	draw.Draw(frame, image.Rect(40, 60, 400, 420), photo, from, draw.Src)
	p := filepath.Join(t.TempDir(), "face-left.jpg")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := jpeg.Encode(f, frame, &jpeg.Options{Quality: 92}); err != nil {
		t.Fatal(err)
	}
	return p
}

type trackedFace struct {
	Detected bool     `json:"detected"`
	X        *float64 `json:"x"`
}

// Head tracking end to end: the daemon finds ONNX Runtime by its flag, downloads the face model
// from a model repo of the hub into its data dir, and its camera sees a face left of centre: the
// tracked face is there, and the head turns to its left (yaw > 0, as the public SDK counts it),
// then comes back when tracking stops.
func TestHeadTrackingTurnsTheHeadTowardAFace(t *testing.T) {
	parallel(t)
	assets := facetest.Assets(t)
	hubSrv := facesHub(t, assets)
	frame := faceLeftFrame(t)
	d := startDaemon(t, daemonOptions{args: []string{"--hub-url", hubSrv.URL,
		"--onnxruntime", filepath.Join(assets, facetest.Runtime),
		"--face-model-repo", "local/faces", "--face-model-file", facetest.BlazeFace256,
		"--camera", "gst:filesrc location=" + frame + " ! jpegdec ! imagefreeze is-live=true",
		"--microphone", "none", "--speaker", "none"}})
	d.waitRobot(10*time.Second, "awake and still", func(s robotState) bool { return s.Awake && s.Move == nil })

	// The detector loads in the background: tracking answers 503 "still loading" until it is ready.
	deadline := time.Now().Add(60 * time.Second)
	for {
		var got detail
		code := d.call("POST", "/api/media/tracking/enable", map[string]any{"weight": 1}, &got)
		if code == 200 {
			break
		}
		if code != 503 || !strings.Contains(got.Detail, "still loading") || time.Now().After(deadline) {
			t.Fatalf("tracking/enable: %d %q", code, got.Detail)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(d.dataDir, "models", "models--local--faces")); err != nil {
		t.Fatalf("the model was not downloaded into the data dir: %v", err)
	}

	var face trackedFace
	deadline = time.Now().Add(20 * time.Second)
	for !face.Detected {
		if time.Now().After(deadline) {
			t.Fatalf("no face tracked: %+v", face)
		}
		time.Sleep(50 * time.Millisecond)
		d.call("GET", "/api/media/tracking/face", nil, &face)
	}
	if face.X == nil || math.Abs(*face.X-(-0.31)) > 0.1 {
		t.Fatalf("tracked face at x=%v, want -0.31 (left of centre)", face.X)
	}
	d.waitRobot(10*time.Second, "the head to turn left toward the face", func(s robotState) bool { return s.HeadPose.Yaw > 0.15 })

	if code := d.call("POST", "/api/media/tracking/disable", nil, nil); code != 200 {
		t.Fatalf("tracking/disable: %d", code)
	}
	d.waitRobot(10*time.Second, "the head back to the app's target", func(s robotState) bool { return math.Abs(s.HeadPose.Yaw) < 0.02 })
}

// Without ONNX Runtime and without a face model, starting head tracking is 503 naming both and
// where they were looked for; the simulated robot works on.
func TestHeadTrackingWithoutRuntimeOrModelSaysWhatIsMissing(t *testing.T) {
	parallel(t)
	empty := t.TempDir()
	getenv := func(k string) string {
		switch k {
		case "LD_LIBRARY_PATH":
			return empty
		case "ORT_DYLIB_PATH":
			return ""
		}
		return os.Getenv(k)
	}
	d := startDaemon(t, daemonOptions{getenv: getenv})
	d.waitRobot(10*time.Second, "awake", func(s robotState) bool { return s.Awake })
	var got detail
	deadline := time.Now().Add(30 * time.Second)
	for {
		code := d.call("POST", "/api/media/tracking/enable", map[string]any{"weight": 0.5}, &got)
		if code != 503 {
			t.Fatalf("tracking/enable: %d %q, want 503", code, got.Detail)
		}
		if !strings.Contains(got.Detail, "still loading") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the detector is still loading after 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, want := range []string{
		"head tracking is not available",
		"ONNX Runtime's shared library (libonnxruntime) was not found",
		filepath.Join(empty, "libonnxruntime.so"), "--onnxruntime", "ORT_DYLIB_PATH",
		"face_detection_yunet_2023mar.onnx", "opencv/face_detection_yunet", filepath.Join(d.dataDir, "models"),
	} {
		if !strings.Contains(got.Detail, want) {
			t.Errorf("the 503 says %q: it does not name %q", got.Detail, want)
		}
	}
	var face trackedFace
	if code := d.call("GET", "/api/media/tracking/face", nil, &face); code != 200 || face.Detected {
		t.Fatalf("tracking/face: %d %+v", code, face)
	}
}
