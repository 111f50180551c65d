package mediaapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/google/renameio/v2"

	"github.com/pion/webrtc/v4"

	"github.com/robothub/robothub/adapters/hardware/media"
	"github.com/robothub/robothub/adapters/hardware/xvf3800"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/robot"

	"github.com/robothub/robothub/robotd/httpapi"
)

// The media routes: the public daemon's media, camera, volume, audio-config and state/doa
// operations with its shapes, on the daemon's media devices (adapters/hardware/media).

// maxSoundUpload caps an uploaded sound, as the public daemon does (25 MiB).
const maxSoundUpload = 25 << 20

// testSound is what the volume routes play, as the public daemon's do.
const testSound = "impatient1.wav"

func (s *Handlers) MediaRelease(w http.ResponseWriter, r *http.Request) {
	s.media.Release()
	httpapi.WriteJSON(w, http.StatusOK, httpapi.StatusOK{Status: "ok"})
}

func (s *Handlers) MediaAcquire(w http.ResponseWriter, r *http.Request) {
	s.media.Acquire()
	httpapi.WriteJSON(w, http.StatusOK, httpapi.StatusOK{Status: "ok"})
}

func (s *Handlers) MediaStatus(w http.ResponseWriter, r *http.Request) {
	st := s.media.Status()
	httpapi.WriteJSON(w, http.StatusOK, map[string]bool{"available": st.Available, "released": st.Released, "no_media": st.NoMedia})
}

// mediaDevices is our extension: each device's name and, when it does not work, why.
type mediaDevices struct {
	Camera     media.DeviceStatus `json:"camera"`
	Microphone media.DeviceStatus `json:"microphone"`
	Speaker    media.DeviceStatus `json:"speaker"`
	Released   bool               `json:"released"`
	CameraMode string             `json:"camera_mode"`
	// SpeakerQueued is how many seconds of sound wait for the speaker.
	SpeakerQueued float64 `json:"speaker_queued"`
}

func (s *Handlers) MediaDevices(w http.ResponseWriter, r *http.Request) {
	st := s.media.Status()
	httpapi.WriteJSON(w, http.StatusOK, mediaDevices{Camera: st.Camera, Microphone: st.Microphone, Speaker: st.Speaker,
		Released: st.Released, CameraMode: s.media.Mode().String(), SpeakerQueued: s.media.Queued()})
}

// MediaSocket tells a local SDK where the media socket is (ours).
func (s *Handlers) MediaSocket(w http.ResponseWriter, r *http.Request) {
	if s.mediaSocket == "" {
		httpapi.WriteError(w, r, s.log, fault.NotFoundf("this daemon has no local media socket: use /api/camera/frame and /api/audio"))
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"socket": s.mediaSocket})
}

// sessionDescription is a WebRTC offer or answer, as browsers' RTCSessionDescription.
type sessionDescription struct {
	Type string `json:"type"`
	SDP  string `json:"sdp"`
}

// WebRTCOffer answers a WebRTC offer (ours; no trickle): the peer receives the camera and
// the microphones, and their level on a data channel it opens.
func (s *Handlers) WebRTCOffer(w http.ResponseWriter, r *http.Request) {
	var req sessionDescription
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if req.Type != "offer" || req.SDP == "" {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError(`body: {"type": "offer", "sdp": "..."} is required`))
		return
	}
	if s.webrtc == nil {
		httpapi.WriteError(w, r, s.log, fault.Unavailablef("this daemon serves no WebRTC"))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	answer, err := s.webrtc.Answer(ctx, webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: req.SDP})
	if err != nil {
		if errors.Is(err, media.ErrReleased) {
			err = mediaUnavailable(err)
		} else if strings.HasPrefix(err.Error(), "sdp:") {
			err = httpapi.BodyError(err.Error())
		}
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, sessionDescription{Type: "answer", SDP: answer.SDP})
}

// soundPath resolves a play_sound file: an uploaded sound by its name, else what PlaySound takes
// (a path on the robot, or a built-in sound's name).
func (s *Handlers) soundPath(file string) string {
	if s.soundsDir != "" && file != "" && filepath.Base(file) == file {
		if p := filepath.Join(s.soundsDir, file); fileExists(p) {
			return p
		}
	}
	return file
}

func fileExists(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular()
}

func (s *Handlers) MediaPlaySound(w http.ResponseWriter, r *http.Request) {
	var req struct {
		File *string `json:"file"`
	}
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if req.File == nil {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError("body: field file is required: a WAV file on the robot, an uploaded sound's name, or a built-in sound (wake_up.wav)"))
		return
	}
	if err := s.speakerReady(); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if _, err := s.robot.PlaySound(s.soundPath(*req.File)); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.StatusOK{Status: "ok"})
}

func (s *Handlers) MediaStopSound(w http.ResponseWriter, r *http.Request) {
	s.media.StopPlaying()
	httpapi.WriteJSON(w, http.StatusOK, httpapi.StatusOK{Status: "ok"})
}

func (s *Handlers) ClearIncomingAudio(w http.ResponseWriter, r *http.Request) {
	s.media.StopPlaying()
	httpapi.WriteJSON(w, http.StatusOK, httpapi.StatusOK{Status: "ok"})
}

// speakerReady says why nothing can be played now, or nil.
func (s *Handlers) speakerReady() error {
	return mediaUnavailable(s.media.Play(nil))
}

func (s *Handlers) UploadSound(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxSoundUpload+1<<20)
	file, header, err := r.FormFile("file")
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpapi.WriteError(w, r, s.log, httpapi.BodyError(fmt.Sprintf("file: larger than %d MiB", maxSoundUpload>>20)))
			return
		}
		httpapi.WriteError(w, r, s.log, httpapi.BodyError("body: a multipart form with a field file is required: "+err.Error()))
		return
	}
	defer file.Close()
	name := filepath.Base(strings.ReplaceAll(header.Filename, `\`, "/"))
	if name == "" || name == "." || name == ".." || name == "/" || strings.HasPrefix(name, ".") {
		httpapi.WriteError(w, r, s.log, fault.Refusedf("file: %q is not a file name", header.Filename))
		return
	}
	// The daemon plays WAV files itself (PCM or float, any rate and channel count); other formats
	// would need a decoder pipeline for each play.
	if strings.ToLower(filepath.Ext(name)) != ".wav" {
		httpapi.WriteError(w, r, s.log, fault.Refusedf("file: %s is not a .wav file: the robot plays WAV sounds", name))
		return
	}
	data, err := io.ReadAll(io.LimitReader(file, maxSoundUpload+1))
	if err != nil {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError("file: "+err.Error()))
		return
	}
	if len(data) > maxSoundUpload {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError(fmt.Sprintf("file: larger than %d MiB", maxSoundUpload>>20)))
		return
	}
	if _, err := robot.DecodeWAV(data); err != nil {
		httpapi.WriteError(w, r, s.log, fault.Refusedf("file: %s is not a sound the robot can play: %v", name, err))
		return
	}
	if err := os.MkdirAll(s.soundsDir, 0o700); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	dest := filepath.Join(s.soundsDir, name)
	if err := renameio.WriteFile(dest, data, 0o600); err != nil { // whole or not at all
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok", "path": dest})
}

func (s *Handlers) ListSounds(w http.ResponseWriter, r *http.Request) {
	files := []string{}
	entries, _ := os.ReadDir(s.soundsDir)
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			files = append(files, e.Name())
		}
	}
	slices.Sort(files)
	httpapi.WriteJSON(w, http.StatusOK, map[string][]string{"files": files})
}

func (s *Handlers) DeleteSound(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("filename")
	if name == "" || filepath.Base(name) != name || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		httpapi.WriteError(w, r, s.log, fault.Refusedf("filename: %q is not an uploaded sound's name", name))
		return
	}
	p := filepath.Join(s.soundsDir, name)
	if !fileExists(p) {
		httpapi.WriteError(w, r, s.log, fault.NotFoundf("File '%s' not found", name))
		return
	}
	if err := os.Remove(p); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.StatusOK{Status: "ok"})
}

// --- volume ---

type volumeResponse struct {
	Volume   int    `json:"volume"`
	Platform string `json:"platform"`
	Device   string `json:"device"`
}

type volumeRequest struct {
	Volume *int `json:"volume"`
}

func (s *Handlers) decodeVolume(w http.ResponseWriter, r *http.Request) (int, bool) {
	var req volumeRequest
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return 0, false
	}
	if req.Volume == nil || *req.Volume < 0 || *req.Volume > 100 {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError("volume: an integer from 0 to 100 is required"))
		return 0, false
	}
	return *req.Volume, true
}

func (s *Handlers) GetVolume(w http.ResponseWriter, r *http.Request) {
	v, err := s.media.Volume()
	if err != nil {
		httpapi.WriteError(w, r, s.log, mediaUnavailable(err))
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, volumeResponse{v, runtime.GOOS, s.media.SpeakerDevice()})
}

func (s *Handlers) SetVolume(w http.ResponseWriter, r *http.Request) {
	v, ok := s.decodeVolume(w, r)
	if !ok {
		return
	}
	if err := s.media.SetVolume(v); err != nil {
		httpapi.WriteError(w, r, s.log, mediaUnavailable(err))
		return
	}
	if s.speakerReady() == nil { // let the user hear the new volume, as the public daemon does
		if _, err := s.robot.PlaySound(testSound); err != nil {
			s.log.Warn("playing the test sound", "err", err)
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, volumeResponse{v, runtime.GOOS, s.media.SpeakerDevice()})
}

func (s *Handlers) TestSound(w http.ResponseWriter, r *http.Request) {
	if err := s.speakerReady(); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if _, err := s.robot.PlaySound(testSound); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok", "message": "Test sound played"})
}

func (s *Handlers) GetMicVolume(w http.ResponseWriter, r *http.Request) {
	v, err := s.media.MicrophoneVolume()
	if err != nil {
		httpapi.WriteError(w, r, s.log, mediaUnavailable(err))
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, volumeResponse{v, runtime.GOOS, s.media.MicrophoneDevice()})
}

func (s *Handlers) SetMicVolume(w http.ResponseWriter, r *http.Request) {
	v, ok := s.decodeVolume(w, r)
	if !ok {
		return
	}
	if err := s.media.SetMicrophoneVolume(v); err != nil {
		httpapi.WriteError(w, r, s.log, mediaUnavailable(err))
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, volumeResponse{v, runtime.GOOS, s.media.MicrophoneDevice()})
}

// --- camera ---

// resolutionInfo and cameraSpecsResponse are the public daemon's camera specs.
type resolutionInfo struct {
	Name       string  `json:"name"`
	Width      int     `json:"width"`
	Height     int     `json:"height"`
	FPS        int     `json:"fps"`
	CropFactor float64 `json:"crop_factor"`
}

type cameraSpecsResponse struct {
	Name                 string           `json:"name"`
	AvailableResolutions []resolutionInfo `json:"available_resolutions"`
	DefaultResolution    resolutionInfo   `json:"default_resolution"`
	K                    [3][3]float64    `json:"K"`
	D                    []float64        `json:"D"`
}

func (s *Handlers) CameraSpecs(w http.ResponseWriter, r *http.Request) {
	specs, err := s.robot.CameraSpecs()
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	mode := s.media.Mode()
	res := resolutionInfo{Name: fmt.Sprintf("R%dx%dat%dfps", specs.Width, specs.Height, mode.FPS), Width: specs.Width, Height: specs.Height, FPS: mode.FPS, CropFactor: 1}
	k := specs.K
	httpapi.WriteJSON(w, http.StatusOK, cameraSpecsResponse{Name: specs.Name, AvailableResolutions: []resolutionInfo{res}, DefaultResolution: res,
		K: [3][3]float64{{k[0], k[1], k[2]}, {k[3], k[4], k[5]}, {k[6], k[7], k[8]}}, D: append([]float64{}, specs.D...)})
}

// --- the audio board (XVF3800): direction of arrival, parameters ---

// openBoard opens the robot's audio board for one request, as the public daemon does: control
// requests are stateless, and the board may come and go with its cable.
func (s *Handlers) openBoard() (*xvf3800.Board, error) {
	b, err := xvf3800.Open("/sys")
	return b, mediaUnavailable(err)
}

type doaSnapshot struct {
	Angle          float64 `json:"angle"`
	SpeechDetected bool    `json:"speech_detected"`
}

// DoA answers the direction of arrival of sound, or null (the public daemon's answer)
// when the robot's audio board is not there; the log says why, once.
func (s *Handlers) DoA(w http.ResponseWriter, r *http.Request) {
	b, err := s.openBoard()
	if err != nil {
		s.doaWarn.Do(func() { s.log.Warn("no direction of arrival: GET /api/state/doa answers null", "err", err) })
		httpapi.WriteJSON(w, http.StatusOK, nil)
		return
	}
	defer b.Close()
	angle, speech, err := b.DoA()
	if err != nil {
		httpapi.WriteError(w, r, s.log, mediaUnavailable(err))
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, doaSnapshot{Angle: angle, SpeechDetected: speech})
}

func (s *Handlers) ApplyAudioConfig(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Config *[]struct {
			Name   string    `json:"name"`
			Values []float64 `json:"values"`
		} `json:"config"`
		Verify *bool `json:"verify"`
	}
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if req.Config == nil {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError(`body: field config is required: [{"name": "PP_AGCONOFF", "values": [1]}, ...]`))
		return
	}
	b, err := s.openBoard()
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	defer b.Close()
	applied := true
	for _, p := range *req.Config {
		if err := b.Write(p.Name, p.Values); err != nil {
			if errors.Is(err, xvf3800.ErrUnknownParam) {
				httpapi.WriteError(w, r, s.log, httpapi.BodyError(err.Error()))
				return
			}
			s.log.Warn("audio board parameter not applied", "name", p.Name, "err", err)
			applied = false
			continue
		}
		if req.Verify == nil || *req.Verify {
			time.Sleep(100 * time.Millisecond) // the board's settling time after a write, as its maker's tools wait
			got, err := b.Read(p.Name)
			if err != nil || !sameValues(got, p.Values) {
				s.log.Warn("audio board parameter did not verify", "name", p.Name, "want", p.Values, "got", got, "err", err)
				applied = false
			}
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]bool{"applied": applied})
}

func sameValues(got, want []float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if d := got[i] - want[i]; d > 1e-3 || d < -1e-3 {
			return false
		}
	}
	return true
}

func (s *Handlers) ReadAudioParameter(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	b, err := s.openBoard()
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	defer b.Close()
	values, err := b.Read(name)
	if err != nil {
		if errors.Is(err, xvf3800.ErrUnknownParam) {
			err = fault.NotFoundf("%v", err)
		} else {
			err = mediaUnavailable(err)
		}
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"name": name, "values": values})
}

// mediaUnavailable makes a media error a 503 that says why.
func mediaUnavailable(err error) error {
	if err == nil {
		return nil
	}
	return fault.Unavailablef("%v", err)
}
