package mediaapi_test

import (
	"bytes"
	"encoding/json"
	"image/jpeg"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/fault"
)

func TestRecorderAndSamples(t *testing.T) {
	d := serve(t, nil, "")
	code, out := d.Object(t, "POST", "/api/audio/start_recording", "")
	if code != http.StatusOK || out["status"] != "recording" || out["sample_rate"] != 16000.0 || out["channels"] != 2.0 || !d.robot.recording {
		t.Fatalf("start_recording: %d %v", code, out)
	}
	if _, out := d.Object(t, "POST", "/api/audio/stop_recording", ""); out["status"] != "stopped" || d.robot.recording {
		t.Fatalf("stop_recording: %v", out)
	}
	// Samples are the public SDK's (n, 2) array.
	code, data := d.Call(t, "GET", "/api/audio/sample?max=2", "")
	var got struct {
		SampleRate int          `json:"sample_rate"`
		Samples    [][2]float64 `json:"samples"`
	}
	if code != http.StatusOK || json.Unmarshal(data, &got) != nil || !slices.Equal(got.Samples, [][2]float64{{0, 0}, {0.25, -0.25}}) {
		t.Fatalf("sample: %d %s", code, data)
	}
	for _, q := range []string{"-1", "many", "1.5"} {
		d.Refused(t, "GET", "/api/audio/sample?max="+q, "", 422, "max: must be a non-negative integer number of frames")
	}
}

func TestPushAudio(t *testing.T) {
	d := serve(t, nil, "")
	// Mono samples play on both channels.
	code, out := d.Object(t, "POST", "/api/audio/push_sample", `{"samples": [0.5, -0.5]}`)
	if code != http.StatusOK || out["status"] != "queued" || out["samples"] != 2.0 {
		t.Fatalf("push mono: %d %v", code, out)
	}
	if _, out := d.Object(t, "POST", "/api/audio/push_sample", `{"samples": [[0.1, 0.2]]}`); out["samples"] != 1.0 {
		t.Fatalf("push stereo: %v", out)
	}
	if want := []float32{0.5, 0.5, -0.5, -0.5, 0.1, 0.2}; !slices.Equal(d.robot.pushed, want) {
		t.Fatalf("the robot got %v, want %v", d.robot.pushed, want)
	}
	for _, c := range []struct{ body, text string }{
		{`{}`, "body: field samples is required: [left, right] frames (or mono samples) in [-1, 1] at 16000 Hz"},
		{`{"samples": [[0.1, 0.2, 0.3]]}`, "samples[0]: a frame is [left, right], got 3 values"},
		{`{"samples": "loud"}`, "samples: expected numbers (mono) or [left, right] pairs in [-1, 1]"},
	} {
		d.Refused(t, "POST", "/api/audio/push_sample", c.body, 422, c.text)
	}
	if len(d.robot.pushed) != 6 {
		t.Fatalf("refused pushes reached the robot: %v", d.robot.pushed)
	}
}

func TestPlaySoundFindsUploadedSounds(t *testing.T) {
	d := serve(t, nil, "")
	if err := os.WriteFile(filepath.Join(d.soundsDir, "beep.wav"), wav(16), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := d.Object(t, "POST", "/api/audio/play_sound", `{"file": "beep.wav"}`)
	if code != http.StatusOK || out["status"] != "playing" || out["duration"] != 1.5 {
		t.Fatalf("play_sound: %d %v", code, out)
	}
	d.Object(t, "POST", "/api/audio/play_sound", `{"file": "wake_up.wav"}`)
	// A path is the robot's, never joined to the uploads.
	d.Object(t, "POST", "/api/audio/play_sound", `{"file": "/usr/share/sounds/beep.wav"}`)
	if want := []string{filepath.Join(d.soundsDir, "beep.wav"), "wake_up.wav", "/usr/share/sounds/beep.wav"}; !slices.Equal(d.robot.playedSounds(), want) {
		t.Fatalf("played %q, want %q", d.robot.playedSounds(), want)
	}
	d.Refused(t, "POST", "/api/audio/play_sound", `{"file": "missing.wav"}`, 404, "sound missing.wav not found")
	d.Refused(t, "POST", "/api/audio/play_sound", ``, 422, "body: a JSON object is required")
	if code, out := d.Object(t, "POST", "/api/audio/stop_sound", ""); code != http.StatusOK || out["status"] != "stopped" || d.robot.stops != 1 {
		t.Fatalf("stop_sound: %d %v", code, out)
	}
}

func TestCamera(t *testing.T) {
	d := serve(t, nil, "")
	req, _ := http.NewRequest("GET", d.URL+"/api/camera/frame", nil)
	code, h, data := d.Send(t, req)
	want := append([]byte("P6\n2 1\n255\n"), 255, 0, 0, 0, 0, 255)
	if code != http.StatusOK || h.Get("Content-Type") != "image/x-portable-pixmap" || !bytes.Equal(data, want) {
		t.Fatalf("frame: %d %s %q", code, h.Get("Content-Type"), data)
	}
	req, _ = http.NewRequest("GET", d.URL+"/api/camera/frame?format=jpeg", nil)
	code, h, data = d.Send(t, req)
	img, err := jpeg.Decode(bytes.NewReader(data))
	if code != http.StatusOK || h.Get("Content-Type") != "image/jpeg" || err != nil || img.Bounds().Dx() != 2 {
		t.Fatalf("jpeg frame: %d %s %v", code, h.Get("Content-Type"), err)
	}
	d.Refused(t, "GET", "/api/camera/frame?format=gif", "", 422, "format: must be ppm or jpeg")
	d.robot.camErr = fault.Unavailablef("the camera is not connected")
	d.Refused(t, "GET", "/api/camera/frame", "", 503, "the camera is not connected")

	code, specs := d.Object(t, "GET", "/api/camera/specs", "")
	k, _ := specs["K"].([]any)
	res, _ := specs["default_resolution"].(map[string]any)
	if code != http.StatusOK || specs["name"] != "sim" || len(k) != 3 || res["width"] != 2.0 || res["height"] != 1.0 {
		t.Fatalf("specs: %d %v", code, specs)
	}
	if row, _ := k[1].([]any); row[2] != 0.5 {
		t.Fatalf("K %v: want the 3x3 matrix row by row", k)
	}
}

func TestWithoutMediaDevices(t *testing.T) {
	d := serve(t, nil, "")
	if code, st := d.Object(t, "GET", "/api/media/status", ""); code != http.StatusOK || st["released"] != false {
		t.Fatalf("status: %d %v", code, st)
	}
	_, dev := d.Object(t, "GET", "/api/media/devices", "")
	if spk, _ := dev["speaker"].(map[string]any); !strings.Contains(spk["error"].(string), "speaker off (--speaker none or --no-media)") {
		t.Fatalf("devices: %v; want the speaker's error to say it is off", dev)
	}
	d.Refused(t, "POST", "/api/media/play_sound", `{"file": "wake_up.wav"}`, 503, "speaker off")
	d.Refused(t, "POST", "/api/volume/test-sound", "", 503, "speaker off")
	d.Refused(t, "GET", "/api/volume/current", "", 503, "speaker off")
	d.Refused(t, "GET", "/api/volume/microphone/current", "", 503, "microphone off")
	d.Refused(t, "GET", "/api/media/ipc", "", 404, "this daemon has no local media socket: use /api/camera/frame and /api/audio")
	if len(d.robot.playedSounds()) != 0 {
		t.Fatalf("sounds played with no speaker: %q", d.robot.playedSounds())
	}
}

func TestLoopbackMediaReleaseAndVolume(t *testing.T) {
	d := serve(t, loopbackMedia(t), "/run/robot/media.sock")
	if code, out := d.Object(t, "GET", "/api/media/ipc", ""); code != http.StatusOK || out["socket"] != "/run/robot/media.sock" {
		t.Fatalf("ipc: %d %v", code, out)
	}
	if code, out := d.Object(t, "POST", "/api/volume/set", `{"volume": 40}`); code != http.StatusOK || out["volume"] != 40.0 {
		t.Fatalf("set volume: %d %v", code, out)
	}
	// The new volume is heard: the test sound plays, as the public daemon does.
	if played := d.robot.playedSounds(); !slices.Equal(played, []string{"impatient1.wav"}) {
		t.Fatalf("played %q after a volume change", played)
	}
	for _, body := range []string{`{"volume": 101}`, `{"volume": -1}`, `{}`} {
		d.Refused(t, "POST", "/api/volume/set", body, 422, "volume: an integer from 0 to 100 is required")
	}
	d.Refused(t, "POST", "/api/volume/set", `{"volume": 4.5}`, 422, "body: field volume: expected int")
	if _, out := d.Object(t, "GET", "/api/volume/current", ""); out["volume"] != 40.0 {
		t.Fatalf("volume after refused sets: %v", out)
	}
	if code, out := d.Object(t, "POST", "/api/volume/microphone/set", `{"volume": 70}`); code != http.StatusOK || out["volume"] != 70.0 {
		t.Fatalf("set microphone volume: %d %v", code, out)
	}
	if _, out := d.Object(t, "GET", "/api/volume/microphone/current", ""); out["volume"] != 70.0 {
		t.Fatalf("microphone volume: %v", out)
	}

	// Released, the devices are the app's: what plays says so, until they are acquired again.
	if code, out := d.Object(t, "POST", "/api/media/release", ""); code != http.StatusOK || out["status"] != "ok" {
		t.Fatalf("release: %d %v", code, out)
	}
	if _, st := d.Object(t, "GET", "/api/media/status", ""); st["released"] != true {
		t.Fatalf("status after release: %v", st)
	}
	d.Refused(t, "POST", "/api/media/play_sound", `{"file": "wake_up.wav"}`, 503, "the robot's media are released (release_media): call acquire_media first")
	d.Refused(t, "POST", "/api/audio/push_sample", `{"samples": [0.1]}`, 503, "released")
	d.Refused(t, "POST", "/api/audio/start_recording", "", 503, "released")
	if d.robot.recording || len(d.robot.pushed) != 0 {
		t.Fatal("released media reached the robot")
	}
	d.Object(t, "POST", "/api/media/acquire", "")
	if code, out := d.Object(t, "POST", "/api/media/play_sound", `{"file": "wake_up.wav"}`); code != http.StatusOK || out["status"] != "ok" {
		t.Fatalf("play after acquire: %d %v", code, out)
	}
	d.Refused(t, "POST", "/api/media/play_sound", `{}`, 422, "body: field file is required: a WAV file on the robot, an uploaded sound's name, or a built-in sound (wake_up.wav)")
	for _, path := range []string{"/api/media/stop_sound", "/api/media/clear_incoming_audio"} {
		if code, out := d.Object(t, "POST", path, ""); code != http.StatusOK || out["status"] != "ok" {
			t.Fatalf("%s: %d %v", path, code, out)
		}
	}
}

func TestUploadListAndDeleteSounds(t *testing.T) {
	d := serve(t, nil, "")
	code, out := d.upload(t, "beep.wav", wav(160))
	if code != http.StatusOK || out["path"] != filepath.Join(d.soundsDir, "beep.wav") {
		t.Fatalf("upload: %d %v", code, out)
	}
	// A name with directories keeps its last part only: nothing is written outside the sounds.
	if code, out := d.upload(t, `..\..\evil.wav`, wav(16)); code != http.StatusOK || out["path"] != filepath.Join(d.soundsDir, "evil.wav") {
		t.Fatalf("upload with a path: %d %v", code, out)
	}
	for _, c := range []struct {
		name   string
		data   []byte
		status int
		text   string
	}{
		{"song.mp3", []byte("ID3"), 400, "file: song.mp3 is not a .wav file: the robot plays WAV sounds"},
		{"noise.wav", []byte("not a wave at all, but long enough to have a header......"), 400, "file: noise.wav is not a sound the robot can play"},
		{".hidden.wav", wav(16), 400, `file: ".hidden.wav" is not a file name`},
	} {
		code, out := d.upload(t, c.name, c.data)
		if detail, _ := out["detail"].(string); code != c.status || !strings.Contains(detail, c.text) {
			t.Errorf("upload %s: %d %v, want %d %q", c.name, code, out, c.status, c.text)
		}
	}
	d.Refused(t, "POST", "/api/media/sounds/upload", `{"file": "beep.wav"}`, 422, "body: a multipart form with a field file is required")

	code, data := d.Call(t, "GET", "/api/media/sounds", "")
	if code != http.StatusOK || strings.TrimSpace(string(data)) != `{"files":["beep.wav","evil.wav"]}` {
		t.Fatalf("sounds: %d %s", code, data)
	}
	d.Refused(t, "DELETE", "/api/media/sounds/.hidden", "", 400, `filename: ".hidden" is not an uploaded sound's name`)
	d.Refused(t, "DELETE", "/api/media/sounds/nope.wav", "", 404, "File 'nope.wav' not found")
	if code, out := d.Object(t, "DELETE", "/api/media/sounds/beep.wav", ""); code != http.StatusOK || out["status"] != "ok" {
		t.Fatalf("delete: %d %v", code, out)
	}
	if _, data := d.Call(t, "GET", "/api/media/sounds", ""); strings.TrimSpace(string(data)) != `{"files":["evil.wav"]}` {
		t.Fatalf("sounds after delete: %s", data)
	}
}

func TestWebRTCOffer(t *testing.T) {
	d := serve(t, nil, "")
	for _, body := range []string{`{"type": "answer", "sdp": "v=0"}`, `{"type": "offer"}`} {
		d.Refused(t, "POST", "/api/media/webrtc/offer", body, 422, `body: {"type": "offer", "sdp": "..."} is required`)
	}
	d.Refused(t, "POST", "/api/media/webrtc/offer", `{"type": "offer", "sdp": "v=0"}`, 503, "this daemon serves no WebRTC")
}
