package robotd

import (
	"context"
	"fmt"
	"image"
	"log/slog"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/robothub/robothub/adapters/hardware"
	"github.com/robothub/robothub/adapters/hardware/media"
	"github.com/robothub/robothub/core/robot"
)

// mediaFlags are the daemon's media options.
var mediaFlags = []cli.Flag{
	&cli.BoolFlag{Name: "no-media", Usage: "open no camera, microphone or speaker (apps may open them themselves)"},
	&cli.StringFlag{Name: "camera", Usage: "the camera: /dev/videoN, libcamera, test (GStreamer's test source), gst:DESCRIPTION or none (default: the robot's, found by USB id; the drawn one on --sim)"},
	&cli.StringFlag{Name: "microphone", Usage: "the microphones: an ALSA device (hw:CARD=NAME), pulse, pulse:NAME, test, gst:DESCRIPTION or none (default: the robot's sound card, found by USB id; on --sim it hears the speaker)"},
	&cli.StringFlag{Name: "speaker", Usage: "the speaker: an ALSA device, pulse, pulse:NAME, test (a clocked fakesink), file:PATH (a WAV), gst:DESCRIPTION or none (default: the robot's sound card; on --sim it plays into the microphone)"},
	&cli.StringFlag{Name: "camera-mode", Value: media.DefaultVideoMode.String(), Usage: "the size and rate apps get frames at, WIDTHxHEIGHT@FPS"},
}

// mediaConfigFrom resolves the media flags over the media section of the hardware config at
// hwConfig (if any): a flag given wins over the config, the config over the defaults.
func mediaConfigFrom(c *cli.Context, sim Sim, hwConfig string) (MediaConfig, error) {
	var fc media.Config
	if hwConfig != "" {
		data, err := hardware.ReadConfigFile(hwConfig)
		if err != nil {
			return MediaConfig{}, err
		}
		if fc, err = media.ParseConfig(data); err != nil {
			return MediaConfig{}, fmt.Errorf("--hardware-config %s: %w", hwConfig, err)
		}
	}
	flagOr := func(name, config string) string {
		if c.IsSet(name) {
			return c.String(name)
		}
		return config
	}
	mc := MediaConfig{Camera: flagOr("camera", fc.Camera), Microphone: flagOr("microphone", fc.Microphone),
		Speaker: flagOr("speaker", fc.Speaker), CameraIDs: fc.CameraIDs, AudioIDs: fc.AudioIDs}
	var err error
	if mc.Mode, err = media.ParseVideoMode(c.String("camera-mode")); err != nil {
		return mc, fmt.Errorf("--camera-mode: %w", err)
	}
	if !c.IsSet("camera-mode") && fc.CameraMode.Width > 0 {
		mc.Mode = fc.CameraMode
	}
	if c.Bool("no-media") {
		for _, name := range []string{"camera", "microphone", "speaker"} {
			if v := c.String(name); c.IsSet(name) && v != media.DeviceNone {
				return mc, fmt.Errorf("--no-media and --%s %s: choose one", name, v)
			}
		}
		mc.Camera, mc.Microphone, mc.Speaker = media.DeviceNone, media.DeviceNone, media.DeviceNone
		return mc, nil
	}
	// The simulated robot's own camera and sound are Config's defaults (Config.resolved).
	if mc.Camera == media.DeviceSim && sim == SimNone {
		return mc, fmt.Errorf("--camera sim: only the simulated robot (--sim) has a drawn camera")
	}
	return mc, nil
}

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
