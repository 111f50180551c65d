package robotd_test

import (
	"bytes"
	"context"
	bin "encoding/binary"
	"io"
	"mime/multipart"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"
	"github.com/robothub/robothub/robotd/cmd/robotdaemon"

	"github.com/robothub/robothub/core/robot"
)

func needGst(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("gst-launch-1.0"); err != nil {
		t.Skip("GStreamer is not installed (.ci/run installs it)")
	}
}

// The robot without its devices: every media route says which device is missing and why, and the
// motors go on.
func TestMediaRoutesWithoutDevicesSayWhatIsMissing(t *testing.T) {
	parallel(t)
	d := startDaemon(t, daemonOptions{args: []string{"--no-media"}})
	var st map[string]bool
	if d.call("GET", "/api/media/status", nil, &st); st["available"] || !st["no_media"] || st["released"] {
		t.Fatalf("media status with --no-media: %v", st)
	}
	d.expectError("POST", "/api/media/play_sound", map[string]string{"file": "wake_up.wav"}, 503, "speaker off (--speaker none or --no-media)")
	d.expectError("POST", "/api/audio/start_recording", nil, 503, "microphone off")
	d.expectError("GET", "/api/camera/frame", nil, 503, "the camera gives no image")
	d.expectError("GET", "/api/volume/current", nil, 503, "speaker off")
	// No XMOS board here: the direction of arrival is null, as the public daemon answers; the
	// board's parameters say what was looked for.
	var doa any = "unset"
	if code := d.call("GET", "/api/state/doa", nil, &doa); code != 200 || doa != nil {
		t.Fatalf("doa without the board: %d %v", code, doa)
	}
	d.expectError("GET", "/api/audio/config/parameter/DOA_VALUE_RADIANS", nil, 503, "no XMOS audio device found: looked for USB 38fb:1001")
	d.expectError("POST", "/api/audio/config/apply", map[string]any{"config": []map[string]any{{"name": "PP_AGCONOFF", "values": []int{1}}}}, 503, "2886:001a")
	if code := d.call("POST", "/api/move/play/wake_up", nil, nil); code != 200 {
		t.Fatalf("wake_up without media: %d", code)
	}
}

// GStreamer's test sources through the daemon's flags: frames and sound, release and acquire.
func TestMediaRoutesOnTestDevices(t *testing.T) {
	parallel(t)
	needGst(t)
	out := filepath.Join(t.TempDir(), "speaker.wav")
	d := startDaemon(t, daemonOptions{args: []string{"--camera", "test", "--microphone", "test", "--speaker", "file:" + out, "--camera-mode", "320x240@30"}})

	var specs struct {
		Name                  string
		Available_resolutions []struct{ Width, Height, FPS int }
		Default_resolution    struct{ Width, Height, FPS int }
		K                     [3][3]float64
		D                     []float64
	}
	if code := d.call("GET", "/api/camera/specs", nil, &specs); code != 200 || specs.Default_resolution.Width != 320 || specs.K[2][2] != 1 || specs.K[0][2] != 160 {
		t.Fatalf("camera specs: %d %+v", code, specs)
	}
	resp, err := d.get("/api/camera/frame")
	if err != nil {
		t.Fatal(err)
	}
	frame := new(bytes.Buffer)
	frame.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.HasPrefix(frame.Bytes(), []byte("P6\n320 240\n255\n")) {
		t.Fatalf("camera frame: %d %q", resp.StatusCode, frame.Bytes()[:min(20, frame.Len())])
	}

	// The test microphone is loud; its level reaches the recorder.
	d.call("POST", "/api/audio/start_recording", nil, nil)
	wait.For(t, 15*time.Second, "the test microphone to be recorded", func() bool {
		var rec struct{ Samples [][2]float64 }
		d.call("GET", "/api/audio/sample", nil, &rec)
		for _, f := range rec.Samples {
			if f[0] > 0.05 || f[1] > 0.05 {
				return true
			}
		}
		return false
	})

	// Volume, then a sound uploaded and played by its name reaches the speaker's file.
	var vol struct {
		Volume           int
		Platform, Device string
	}
	if code := d.call("POST", "/api/volume/set", map[string]int{"volume": 80}, &vol); code != 200 || vol.Volume != 80 || vol.Device != "file:"+out {
		t.Fatalf("set volume: %d %+v", code, vol)
	}
	d.expectError("POST", "/api/volume/set", map[string]int{"volume": 101}, 422, "volume: an integer from 0 to 100")
	code, body := upload(t, d, "beep.wav", wavTone(16000, 0.5))
	if code != 200 || !strings.Contains(body, filepath.Join(d.dataDir, "sounds", "beep.wav")) {
		t.Fatalf("upload: %d %s", code, body)
	}
	if code, body := upload(t, d, "evil.sh", []byte("#!/bin/sh\nrm -rf /\n")); code != 400 || !strings.Contains(body, "not a .wav file") {
		t.Fatalf("upload of a script: %d %s", code, body)
	}
	if code, body := upload(t, d, "fake.wav", []byte("RIFF....WAVEjunk")); code != 400 || !strings.Contains(body, "not a sound the robot can play") {
		t.Fatalf("upload of a fake WAV: %d %s", code, body)
	}
	var files map[string][]string
	if d.call("GET", "/api/media/sounds", nil, &files); strings.Join(files["files"], ",") != "beep.wav" {
		t.Fatalf("sounds: %v", files)
	}
	d.expectError("DELETE", "/api/media/sounds/.upload-x", nil, 400, "is not an uploaded sound")
	d.expectError("DELETE", "/api/media/sounds/nope.wav", nil, 404, "File 'nope.wav' not found")

	// Release: the devices close, every call says so; acquire: they work again.
	d.call("POST", "/api/media/release", nil, nil)
	var st map[string]bool
	if d.call("GET", "/api/media/status", nil, &st); st["available"] || !st["released"] {
		t.Fatalf("status after release: %v", st)
	}
	d.expectError("GET", "/api/camera/frame", nil, 503, "")
	d.expectError("POST", "/api/audio/push_sample", map[string]any{"samples": []float64{0.1}}, 503, "acquire_media")
	d.call("POST", "/api/media/acquire", nil, nil)
	if d.call("GET", "/api/media/status", nil, &st); !st["available"] || st["released"] {
		t.Fatalf("status after acquire: %v", st)
	}
	if resp, err := d.get("/api/camera/frame"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("frame after acquire: %v %v", resp, err)
	}
	if code := d.call("POST", "/api/media/play_sound", map[string]string{"file": "beep.wav"}, nil); code != 200 {
		t.Fatalf("play_sound: %d", code)
	}
	wait.For(t, 15*time.Second, "the beep to be played", func() bool {
		var dev struct{ Speaker_queued float64 }
		d.call("GET", "/api/media/devices", nil, &dev)
		return dev.Speaker_queued == 0
	})
	d.stop() // the speaker's WAV gets its header
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := robot.DecodeWAV(data)
	if err != nil {
		t.Fatalf("the speaker's file: %v", err)
	}
	loud := 0
	for _, s := range samples {
		if s > 0.3 { // the beep, 0.5 at volume 80: 0.4
			loud++
		}
	}
	if loud < 16000 {
		t.Fatalf("the speaker's file has %d loud samples: the uploaded beep (1 s) did not reach it", loud)
	}
}

func upload(t *testing.T, d *daemon, name string, data []byte) (int, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(data)
	mw.Close()
	resp, err := d.post("/api/media/sounds/upload", mw.FormDataContentType(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// wavTone is a mono 16-bit WAV of one second at a constant level v, which a threshold finds.
func wavTone(rate int, v float64) []byte {
	data := make([]byte, 0, rate*2)
	for i := 0; i < rate; i++ {
		data = bin.LittleEndian.AppendUint16(data, uint16(int16(v*32767)))
	}
	b := []byte("RIFF")
	b = bin.LittleEndian.AppendUint32(b, uint32(36+len(data)))
	b = append(b, "WAVEfmt "...)
	b = bin.LittleEndian.AppendUint32(b, 16)
	b = bin.LittleEndian.AppendUint16(b, 1)
	b = bin.LittleEndian.AppendUint16(b, 1)
	b = bin.LittleEndian.AppendUint32(b, uint32(rate))
	b = bin.LittleEndian.AppendUint32(b, uint32(rate*2))
	b = bin.LittleEndian.AppendUint16(b, 2)
	b = bin.LittleEndian.AppendUint16(b, 16)
	b = append(b, "data"...)
	b = bin.LittleEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// The hardware config's media section names the devices of a robot built differently; a flag
// given wins over it; the motors read the same file.
func TestHardwareConfigNamesTheMediaDevices(t *testing.T) {
	parallel(t)
	needGst(t)
	motors, err := os.ReadFile(filepath.Join("..", "adapters", "hardware", "hardware.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "hardware.yaml")
	section := "\nmedia:\n  camera: test\n  microphone: none\n  speaker: none\n  camera_mode: 320x240@15\n"
	if err := os.WriteFile(cfg, append(motors, section...), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemonOptions{args: []string{"--sim=bus", "--hardware-config", cfg, "--speaker", "test"}})
	var dev struct {
		Camera, Microphone, Speaker struct{ Device, Error string }
		Camera_mode                 string
	}
	d.call("GET", "/api/media/devices", nil, &dev)
	if dev.Camera.Device != "test" || dev.Camera_mode != "320x240@15" || !strings.Contains(dev.Microphone.Error, "off") || dev.Speaker.Device != "test" {
		t.Fatalf("devices from the hardware config (speaker from the flag): %+v", dev)
	}
	resp, err := d.get("/api/camera/frame")
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 15)
	_, _ = io.ReadFull(resp.Body, head)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(head) != "P6\n320 240\n255\n" {
		t.Fatalf("a frame at the config's size: %d %q", resp.StatusCode, head)
	}
	// The motors of the same file drive the emulated bus.
	if h := d.hardware(); h.Hardware == nil || len(h.Hardware.Motors) != 9 {
		t.Fatalf("the motors of the hardware config: %+v", h)
	}

	// A misspelt media key stops the daemon at start, naming it, as a misspelt motor key does.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, append(motors, "\nmedia:\n  camra: test\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	err = robotdaemon.Run(context.Background(), []string{"robot-daemon", "--sim=bus", "--hardware-config", bad, "--port", "0",
		"--data-dir", t.TempDir(), "--hub-url", "none"}, os.Getenv, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--hardware-config "+bad+": hardware config: media:") || !strings.Contains(err.Error(), "field camra not found") {
		t.Fatalf("a misspelt media key: %v", err)
	}
	// --no-media with a device flag is a contradiction; with the config's devices it is not (the
	// flag wins over the file).
	err = robotdaemon.Run(context.Background(), []string{"robot-daemon", "--sim=bus", "--hardware-config", cfg, "--no-media", "--camera", "test",
		"--port", "0", "--data-dir", t.TempDir(), "--hub-url", "none"}, os.Getenv, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--no-media and --camera test: choose one") {
		t.Fatalf("--no-media --camera test: %v", err)
	}
	off := startDaemon(t, daemonOptions{args: []string{"--sim=bus", "--hardware-config", cfg, "--no-media"}})
	var st map[string]bool
	if off.call("GET", "/api/media/status", nil, &st); !st["no_media"] {
		t.Fatalf("--no-media over a config that names devices: %v", st)
	}
}
