package media

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/robothub/robothub/adapters/hardware/usbdev"
	"gopkg.in/yaml.v3"
)

// Config is the media section of the robot's hardware config (robot-daemon --hardware-config):
// the devices of a robot whose camera or sound card is not the stock one. The daemon's flags
// override it, field by field.
//
//	media:
//	  camera: /dev/video2            # or libcamera, test, gst:..., none
//	  microphone: hw:CARD=Array      # an ALSA device, pulse, pulse:NAME, ...
//	  speaker: hw:CARD=Array
//	  camera_mode: 1280x720@30
//	  camera_usb_ids: ["046d:0825"]  # found by USB id instead of the robot's own
//	  audio_usb_ids: ["2886:0018"]
type Config struct {
	Camera     string      `yaml:"camera"`
	Microphone string      `yaml:"microphone"`
	Speaker    string      `yaml:"speaker"`
	CameraMode VideoMode   `yaml:"-"`
	CameraIDs  []usbdev.ID `yaml:"-"`
	AudioIDs   []usbdev.ID `yaml:"-"`
}

// ParseConfig reads the media section of a hardware config; a config without one is the zero
// Config (every device found as on the stock robot). Errors name the field.
func ParseConfig(data []byte) (Config, error) {
	var doc struct {
		Media yaml.Node `yaml:"media"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Config{}, fmt.Errorf("hardware config: %w", err)
	}
	var c Config
	if doc.Media.Kind == 0 {
		return c, nil
	}
	// Re-encoded to be decoded strictly: a misspelt key is an error, not a device silently unused.
	section, err := yaml.Marshal(&doc.Media)
	if err != nil {
		return c, fmt.Errorf("hardware config: media: %w", err)
	}
	var raw struct {
		Camera     string   `yaml:"camera"`
		Microphone string   `yaml:"microphone"`
		Speaker    string   `yaml:"speaker"`
		CameraMode string   `yaml:"camera_mode"`
		CameraIDs  []string `yaml:"camera_usb_ids"`
		AudioIDs   []string `yaml:"audio_usb_ids"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(section))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return c, fmt.Errorf("hardware config: media: %w", err)
	}
	c.Camera, c.Microphone, c.Speaker = raw.Camera, raw.Microphone, raw.Speaker
	if raw.CameraMode != "" {
		if c.CameraMode, err = ParseVideoMode(raw.CameraMode); err != nil {
			return c, fmt.Errorf("hardware config: media: camera_mode: %w", err)
		}
	}
	if c.CameraIDs, err = parseUSBIDs(raw.CameraIDs, "camera"); err != nil {
		return c, fmt.Errorf("hardware config: media: camera_usb_ids: %w", err)
	}
	if c.AudioIDs, err = parseUSBIDs(raw.AudioIDs, "sound card"); err != nil {
		return c, fmt.Errorf("hardware config: media: audio_usb_ids: %w", err)
	}
	return c, nil
}

// parseUSBIDs reads "vvvv:pppp" ids (hexadecimal, as lsusb prints them).
func parseUSBIDs(ss []string, what string) ([]usbdev.ID, error) {
	var ids []usbdev.ID
	for _, s := range ss {
		v, p, ok := strings.Cut(s, ":")
		vendor, err1 := strconv.ParseUint(v, 16, 16)
		product, err2 := strconv.ParseUint(p, 16, 16)
		if !ok || err1 != nil || err2 != nil || len(v) != 4 || len(p) != 4 {
			return nil, fmt.Errorf("%q is not a USB id: want vendor:product in hexadecimal, as lsusb prints them (e.g. 38fb:1002)", s)
		}
		ids = append(ids, usbdev.ID{Vendor: uint16(vendor), Product: uint16(product), Name: "the " + what + " of the hardware config"})
	}
	return ids, nil
}
