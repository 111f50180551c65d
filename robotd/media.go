package robotd

import (
	"context"
	"image"
	"log/slog"
	"time"

	"github.com/robothub/robothub/adapters/hardware/media"
	"github.com/robothub/robothub/core/robot"
)

// withMedia is the robot's media (robot.Media) on the media devices.
type withMedia struct {
	media *media.Media
	specs robot.CameraSpecs
}

// openMedia opens the devices mc names; the backend's own camera, if it draws one, is the "sim"
// camera.
func openMedia(mc MediaConfig, wireless bool, backend robot.Backend, log *slog.Logger) *withMedia {
	opts := media.Options{Camera: mc.Camera, Microphone: mc.Microphone, Speaker: mc.Speaker, Mode: mc.Mode,
		CameraIDs: mc.CameraIDs, AudioIDs: mc.AudioIDs, Wireless: wireless, Log: log}
	specs := cameraSpecs(mc)
	if cam, ok := backend.(robot.Camera); ok && mc.Camera == media.DeviceSim {
		opts.SimCamera = cam.Frame
		specs = cam.CameraSpecs()
	}
	return &withMedia{media: media.Open(opts), specs: specs}
}

// cameraSpecs describes a camera of the robot in mode: the robot's camera's calibration, scaled to
// the frames' size (the calibration is the robot maker's, at 3840x2592); a test source gets the
// simulated camera's 70° field of view.
func cameraSpecs(mc MediaConfig) robot.CameraSpecs {
	w, h := float64(mc.Mode.Width), float64(mc.Mode.Height)
	if mc.Camera == media.DeviceTest || len(mc.Camera) > 4 && mc.Camera[:4] == "gst:" {
		f := robot.SimCameraSpecs.K[0] * w / float64(robot.SimCameraSpecs.Width)
		return robot.CameraSpecs{Name: mc.Camera, Width: mc.Mode.Width, Height: mc.Mode.Height,
			K: [9]float64{f, 0, w / 2, 0, f, h / 2, 0, 0, 1}, D: []float64{0, 0, 0, 0, 0}}
	}
	sx, sy := w/3840, h/2592
	return robot.CameraSpecs{Name: "lite", Width: mc.Mode.Width, Height: mc.Mode.Height,
		K: [9]float64{2001.8076 * sx, 0, 1905.8761 * sx, 0, 2003.0779 * sy, 1328.3240 * sy, 0, 0, 1},
		D: []float64{-1.4652, 0.6543, 0.0121, -0.0027, 0.3036, -1.4301, 0.5700, 0.3567, 0.0031, 0.0003, -0.0099, -0.0021}}
}

func (b *withMedia) Speak(samples []float32) { _ = b.media.Play(samples) }

func (b *withMedia) Listen(dst []float32, _ time.Time) []float32 { return b.media.Listen(dst) }

// CameraSpecs implements robot.Camera.
func (b *withMedia) CameraSpecs() robot.CameraSpecs { return b.specs }

// Frame implements robot.Camera: the newest frame, or nil when the camera gives none within 3 s.
func (b *withMedia) Frame(time.Time) *image.RGBA {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	f, err := b.media.Frame(ctx)
	if err != nil {
		return nil
	}
	return f.RGBA()
}

// StopSpeaking implements robot.Silencer.
func (b *withMedia) StopSpeaking() { b.media.StopPlaying() }
