package mediaapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"net/http"
	"strconv"

	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/robotd/httpapi"
)

type audioInfo struct {
	Status     string `json:"status"`
	SampleRate int    `json:"sample_rate"`
	Channels   int    `json:"channels"`
}

// microphoneReady says why the microphones cannot be heard now, or nil.
func (s *Handlers) microphoneReady() error {
	if !s.mediaWired {
		return nil
	}
	_, err := s.media.Level()
	return mediaUnavailable(err)
}

func (s *Handlers) StartRecording(w http.ResponseWriter, r *http.Request) {
	if err := s.microphoneReady(); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	s.robot.StartRecording()
	httpapi.WriteJSON(w, http.StatusOK, audioInfo{Status: "recording", SampleRate: robot.SampleRate, Channels: robot.Channels})
}

func (s *Handlers) StopRecording(w http.ResponseWriter, r *http.Request) {
	s.robot.StopRecording()
	httpapi.WriteJSON(w, http.StatusOK, audioInfo{Status: "stopped", SampleRate: robot.SampleRate, Channels: robot.Channels})
}

// stereoFrames are interleaved stereo samples written as the public SDK's (n, 2) array:
// [[left, right], ...].
type stereoFrames []float32

func (f stereoFrames) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 24*len(f)+2)
	b = append(b, '[')
	for i := 0; i+1 < len(f); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendFloat(b, float64(f[i]), 'g', -1, 32)
		b = append(b, ',')
		b = strconv.AppendFloat(b, float64(f[i+1]), 'g', -1, 32)
		b = append(b, ']')
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads (n, 2) frames, or mono samples, which play on both channels.
func (f *stereoFrames) UnmarshalJSON(data []byte) error {
	var mono []float32
	if err := json.Unmarshal(data, &mono); err == nil {
		out := make([]float32, 0, 2*len(mono))
		for _, v := range mono {
			out = append(out, v, v)
		}
		*f = out
		return nil
	}
	var pairs [][]float32
	if err := json.Unmarshal(data, &pairs); err != nil {
		return httpapi.BodyError("samples: expected numbers (mono) or [left, right] pairs in [-1, 1]")
	}
	out := make([]float32, 0, 2*len(pairs))
	for i, p := range pairs {
		if len(p) != 2 {
			return httpapi.BodyError(fmt.Sprintf("samples[%d]: a frame is [left, right], got %d values", i, len(p)))
		}
		out = append(out, p[0], p[1])
	}
	*f = out
	return nil
}

type audioSamples struct {
	SampleRate int          `json:"sample_rate"`
	Channels   int          `json:"channels"`
	Samples    stereoFrames `json:"samples"`
}

func (s *Handlers) AudioSample(w http.ResponseWriter, r *http.Request) {
	max := 0
	if v := r.URL.Query().Get("max"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			httpapi.WriteError(w, r, s.log, httpapi.BodyError("max: must be a non-negative integer number of frames"))
			return
		}
		max = n
	}
	samples, err := s.robot.AudioSample(max)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, audioSamples{SampleRate: robot.SampleRate, Channels: robot.Channels, Samples: samples})
}

func (s *Handlers) PushAudio(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Samples *stereoFrames `json:"samples"`
	}
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxAudioBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if req.Samples == nil {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError(fmt.Sprintf("body: field samples is required: [left, right] frames (or mono samples) in [-1, 1] at %d Hz", robot.SampleRate)))
		return
	}
	if s.mediaWired {
		if err := s.speakerReady(); err != nil {
			httpapi.WriteError(w, r, s.log, err)
			return
		}
	}
	if err := s.robot.PushAudio(*req.Samples); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "queued", "samples": len(*req.Samples) / robot.Channels})
}

func (s *Handlers) PlaySound(w http.ResponseWriter, r *http.Request) {
	var req struct {
		File string `json:"file"`
	}
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if s.mediaWired {
		if err := s.speakerReady(); err != nil {
			httpapi.WriteError(w, r, s.log, err)
			return
		}
	}
	d, err := s.robot.PlaySound(s.soundPath(req.File))
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "playing", "duration": d.Seconds()})
}

// CameraFrame answers a camera image: binary PPM (P6, RGB; the default, what robot_sdk reads
// without any image library) or JPEG (?format=jpeg).
func (s *Handlers) CameraFrame(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	if format != "" && format != "ppm" && format != "jpeg" {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError("format: must be ppm or jpeg"))
		return
	}
	img, err := s.robot.CameraFrame()
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	var buf bytes.Buffer
	if format == "jpeg" {
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}); err != nil {
			httpapi.WriteError(w, r, s.log, err)
			return
		}
		w.Header().Set("Content-Type", "image/jpeg")
	} else {
		writePPM(&buf, img)
		w.Header().Set("Content-Type", "image/x-portable-pixmap")
	}
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	_, _ = w.Write(buf.Bytes())
}

func writePPM(buf *bytes.Buffer, img *image.RGBA) {
	b := img.Bounds()
	fmt.Fprintf(buf, "P6\n%d %d\n255\n", b.Dx(), b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := img.Pix[(y-b.Min.Y)*img.Stride:]
		for x := 0; x < b.Dx(); x++ {
			buf.Write(row[4*x : 4*x+3])
		}
	}
}

func (s *Handlers) StopSound(w http.ResponseWriter, r *http.Request) {
	if err := s.robot.StopSound(); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.StatusOK{Status: "stopped"})
}
