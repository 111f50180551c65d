// Package mediaapi is the robot daemon's media routes, in the public daemon's shapes: release and
// acquire of the devices, their status, uploaded and played sounds, the recorder and pushed
// audio, volumes, the camera's specs and frames, WebRTC signalling, the local media socket's
// address, and the audio board's direction of arrival and parameters (adapters/hardware/xvf3800).
// The devices are adapters/hardware/media's; robotd's routes.go lists the handlers.
package mediaapi

import (
	"image"
	"log/slog"
	"sync"
	"time"

	"github.com/robothub/robothub/adapters/hardware/media"
	"github.com/robothub/robothub/core/robot"
)

// RobotAudio is the robot's microphone and speaker.
type RobotAudio interface {
	StartRecording()
	StopRecording()
	AudioSample(max int) ([]float32, error)
	PushAudio(samples []float32) error
	PlaySound(file string) (time.Duration, error)
	StopSound() error
}

// RobotCamera is the robot's camera.
type RobotCamera interface {
	CameraSpecs() (robot.CameraSpecs, error)
	CameraFrame() (*image.RGBA, error)
}

// Robot is what these routes need of the robot (*robot.Robot in the daemon): its recorder,
// speaker and camera, which speak through the media devices when the daemon has them.
type Robot interface {
	RobotAudio
	RobotCamera
}

// Handlers serves the media, audio, camera and volume routes; robotd's route table names each
// of its methods.
type Handlers struct {
	robot       Robot
	media       *media.Media // never nil: every device off when the daemon has none
	mediaWired  bool         // the robot speaks, listens and looks through media
	soundsDir   string       // uploaded sounds
	mediaSocket string       // the local media socket's path, for local SDKs
	webrtc      *media.WebRTC
	doaWarn     sync.Once
	log         *slog.Logger
}

// Config holds what New needs.
type Config struct {
	Robot Robot
	// Media are the robot's devices, which Robot uses (robot.UseMedia); nil: none, and the
	// robot's backend speaks and draws its camera itself.
	Media       *media.Media
	SoundsDir   string        // where uploaded sounds go
	MediaSocket string        // the local media socket (media.ListenSocket), "" when there is none
	WebRTC      *media.WebRTC // serves the camera and microphones to WebRTC peers; nil: none
	Log         *slog.Logger
}

// New returns the media routes.
func New(cfg Config) *Handlers {
	h := &Handlers{robot: cfg.Robot, media: cfg.Media, mediaWired: cfg.Media != nil, soundsDir: cfg.SoundsDir,
		mediaSocket: cfg.MediaSocket, webrtc: cfg.WebRTC, log: cfg.Log}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.media == nil {
		h.media = media.Open(media.Options{Camera: media.DeviceNone, Microphone: media.DeviceNone, Speaker: media.DeviceNone})
	}
	return h
}
