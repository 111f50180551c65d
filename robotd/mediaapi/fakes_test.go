package mediaapi_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"image"
	"image/color"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/hardware/media"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/internal/testkit/apitest"
	"github.com/robothub/robothub/robotd/mediaapi"
)

// fakeRobot is the robot's recorder, speaker and camera as the routes see them.
type fakeRobot struct {
	mu        sync.Mutex
	recording bool
	pushed    []float32
	played    []string
	stops     int
	camErr    error
}

var _ mediaapi.Robot = (*fakeRobot)(nil)

func (r *fakeRobot) StartRecording() { r.mu.Lock(); r.recording = true; r.mu.Unlock() }
func (r *fakeRobot) StopRecording()  { r.mu.Lock(); r.recording = false; r.mu.Unlock() }

// AudioSample answers max frames of a ramp, 0.25 apart, left then right.
func (r *fakeRobot) AudioSample(max int) ([]float32, error) {
	out := make([]float32, 0, 2*max)
	for i := range max {
		out = append(out, float32(i)*0.25, -float32(i)*0.25)
	}
	return out, nil
}

func (r *fakeRobot) PushAudio(samples []float32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pushed = append(r.pushed, samples...)
	return nil
}

func (r *fakeRobot) PlaySound(file string) (time.Duration, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if strings.HasPrefix(file, "missing") {
		return 0, fault.NotFoundf("sound %s not found: a WAV file on the robot, an uploaded sound, or a built-in sound", file)
	}
	r.played = append(r.played, file)
	return 1500 * time.Millisecond, nil
}

func (r *fakeRobot) StopSound() error { r.mu.Lock(); r.stops++; r.mu.Unlock(); return nil }

func (r *fakeRobot) CameraSpecs() (robot.CameraSpecs, error) {
	return robot.CameraSpecs{Name: "sim", Width: 2, Height: 1, K: [9]float64{100, 0, 1, 0, 100, 0.5, 0, 0, 1}}, nil
}

// CameraFrame is 2x1: a red pixel and a blue one.
func (r *fakeRobot) CameraFrame() (*image.RGBA, error) {
	if r.camErr != nil {
		return nil, r.camErr
	}
	img := image.NewRGBA(image.Rect(0, 0, 2, 1))
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	img.Set(1, 0, color.RGBA{0, 0, 255, 255})
	return img, nil
}

func (r *fakeRobot) playedSounds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string{}, r.played...)
}

type daemon struct {
	*apitest.Server
	robot     *fakeRobot
	soundsDir string
	media     *media.Media
}

// serve serves the media routes as robotd's route table does. With m nil the daemon has no media
// devices (the robot's backend speaks itself); loopback devices stand in for a robot's own.
func serve(t *testing.T, m *media.Media, mediaSocket string) *daemon {
	t.Helper()
	d := &daemon{robot: &fakeRobot{}, soundsDir: t.TempDir(), media: m}
	h := mediaapi.New(mediaapi.Config{Robot: d.robot, Media: m, SoundsDir: d.soundsDir, MediaSocket: mediaSocket})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/audio/start_recording", h.StartRecording)
	mux.HandleFunc("POST /api/audio/stop_recording", h.StopRecording)
	mux.HandleFunc("GET /api/audio/sample", h.AudioSample)
	mux.HandleFunc("POST /api/audio/push_sample", h.PushAudio)
	mux.HandleFunc("POST /api/audio/play_sound", h.PlaySound)
	mux.HandleFunc("POST /api/audio/stop_sound", h.StopSound)
	mux.HandleFunc("GET /api/camera/specs", h.CameraSpecs)
	mux.HandleFunc("GET /api/camera/frame", h.CameraFrame)
	mux.HandleFunc("POST /api/media/release", h.MediaRelease)
	mux.HandleFunc("POST /api/media/acquire", h.MediaAcquire)
	mux.HandleFunc("GET /api/media/status", h.MediaStatus)
	mux.HandleFunc("GET /api/media/devices", h.MediaDevices)
	mux.HandleFunc("GET /api/media/ipc", h.MediaSocket)
	mux.HandleFunc("POST /api/media/webrtc/offer", h.WebRTCOffer)
	mux.HandleFunc("POST /api/media/play_sound", h.MediaPlaySound)
	mux.HandleFunc("POST /api/media/stop_sound", h.MediaStopSound)
	mux.HandleFunc("POST /api/media/clear_incoming_audio", h.ClearIncomingAudio)
	mux.HandleFunc("POST /api/media/sounds/upload", h.UploadSound)
	mux.HandleFunc("GET /api/media/sounds", h.ListSounds)
	mux.HandleFunc("DELETE /api/media/sounds/{filename}", h.DeleteSound)
	mux.HandleFunc("GET /api/volume/current", h.GetVolume)
	mux.HandleFunc("POST /api/volume/set", h.SetVolume)
	mux.HandleFunc("POST /api/volume/test-sound", h.TestSound)
	mux.HandleFunc("GET /api/volume/microphone/current", h.GetMicVolume)
	mux.HandleFunc("POST /api/volume/microphone/set", h.SetMicVolume)
	d.Server = apitest.Serve(t, mux)
	return d
}

// loopbackMedia is a microphone and a speaker that need no hardware (the speaker's sound is what
// the microphone hears), and no camera.
func loopbackMedia(t *testing.T) *media.Media {
	t.Helper()
	m := media.Open(media.Options{Camera: media.DeviceNone, Microphone: media.DeviceLoopback, Speaker: media.DeviceLoopback})
	t.Cleanup(m.Close)
	return m
}

// upload posts a file as the dashboard's form does.
func (d *daemon) upload(t *testing.T, name string, data []byte) (int, map[string]any) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", d.URL+"/api/media/sounds/upload", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	code, _, raw := d.Send(t, req)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("upload %s: %d %q", name, code, raw)
	}
	return code, out
}

// wav is a short 16-bit PCM mono WAV file at 16 kHz.
func wav(frames int) []byte {
	var b bytes.Buffer
	dataLen := uint32(2 * frames)
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, 36+dataLen)
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(16000), uint32(32000), uint16(2), uint16(16)} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, dataLen)
	b.Write(make([]byte, dataLen))
	return b.Bytes()
}
