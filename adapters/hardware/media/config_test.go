package media

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/adapters/hardware/usbdev"
)

func TestConfigNamesTheDevicesOfAnotherRobot(t *testing.T) {
	c, err := ParseConfig([]byte(`version: beta
motors: []
media:
  camera: /dev/video2
  microphone: hw:CARD=Array
  camera_mode: 1280x720@15
  camera_usb_ids: ["046d:0825", "046D:085B"]
  audio_usb_ids: ["2886:0018"]
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Camera != "/dev/video2" || c.Microphone != "hw:CARD=Array" || c.Speaker != "" || c.CameraMode != (VideoMode{1280, 720, 15}) {
		t.Fatalf("parsed %+v", c)
	}
	if len(c.CameraIDs) != 2 || c.CameraIDs[1].Vendor != 0x046d || c.CameraIDs[1].Product != 0x085b || len(c.AudioIDs) != 1 || c.AudioIDs[0].Product != 0x0018 {
		t.Fatalf("usb ids %v %v", c.CameraIDs, c.AudioIDs)
	}
	// A config without a media section finds the robot's own devices.
	if c, err := ParseConfig([]byte("version: beta\nmotors: []\n")); err != nil || c.Camera != "" || c.CameraIDs != nil || c.CameraMode.Width != 0 {
		t.Fatalf("no media section: %+v, %v", c, err)
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	for cfg, want := range map[string]string{
		"media:\n  camra: /dev/video2\n":               "field camra not found",
		"media:\n  camera_usb_ids: [\"38fb-1002\"]\n":  `camera_usb_ids: "38fb-1002" is not a USB id`,
		"media:\n  audio_usb_ids: [\"38fb:10021\"]\n":  `audio_usb_ids: "38fb:10021" is not a USB id`,
		"media:\n  camera_mode: 640x480\n":             "camera_mode: \"640x480\" is not WIDTHxHEIGHT@FPS",
		"media: [camera]\n":                            "hardware config: media:",
		"media:\n  camera: [/dev/video0, /dev/video1]": "hardware config: media:",
	} {
		_, err := ParseConfig([]byte(cfg))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", cfg, err, want)
		}
	}
}

// fakeUSBDevice adds to a sysfs tree a USB device with ids and, under it, a class device
// (class/video4linux/video0, class/sound/card1) linked as the kernel links them.
func fakeUSBDevice(t *testing.T, sysfs, vendor, product, class string, attrs map[string]string) {
	t.Helper()
	usb := filepath.Join(sysfs, "devices", "pci0000:00", "usb1", "1-1."+vendor)
	iface := filepath.Join(usb, "1-1:1.0", strings.ReplaceAll(class, "/", "_"))
	for path, data := range map[string]string{"idVendor": vendor, "idProduct": product} {
		if err := os.MkdirAll(usb, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(usb, path), []byte(data+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	node := filepath.Join(sysfs, "class", class)
	if err := os.MkdirAll(node, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(iface, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(iface, filepath.Join(node, "device")); err != nil {
		t.Fatal(err)
	}
	for k, v := range attrs {
		if err := os.WriteFile(filepath.Join(node, k), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A robot with another camera and sound card: the hardware config's USB ids find them where the
// robot's own ids find nothing, and say what they looked for.
func TestConfigUSBIDsFindOtherDevices(t *testing.T) {
	sysfs := t.TempDir()
	fakeUSBDevice(t, sysfs, "046d", "0825", "video4linux/video0", map[string]string{"index": "0", "name": "UVC Camera"})
	fakeUSBDevice(t, sysfs, "2886", "0018", "sound/card1", map[string]string{"id": "Array"})
	cfg, err := ParseConfig([]byte("media:\n  camera_usb_ids: [\"046d:0825\"]\n  audio_usb_ids: [\"2886:0018\"]\n"))
	if err != nil {
		t.Fatal(err)
	}

	own := openTest(t, Options{Sysfs: usbdev.Sysfs(sysfs), Microphone: DeviceNone, Speaker: DeviceNone})
	if st := own.Status(); !strings.Contains(st.Camera.Error, "looked for USB 38fb:1002") || !strings.Contains(st.Camera.Error, `/dev/video0 046d:0825 "UVC Camera"`) {
		t.Fatalf("the robot's own ids on another camera: %+v", st.Camera)
	}
	other := openTest(t, Options{Sysfs: usbdev.Sysfs(sysfs), Microphone: DeviceNone, Speaker: DeviceNone, CameraIDs: cfg.CameraIDs, AudioIDs: cfg.AudioIDs})
	if st := other.Status(); st.Camera.Device != "/dev/video0" || st.Camera.Error != "" {
		t.Fatalf("the config's camera ids: %+v", st.Camera)
	}
	other.opts.Microphone, other.opts.Speaker = DeviceAuto, DeviceAuto
	if mic, spk, err := other.resolveAudio(); err != nil || mic != "plughw:CARD=Array,DEV=0" || spk != mic {
		t.Fatalf("the config's sound card ids: %q %q %v", mic, spk, err)
	}
	missing := openTest(t, Options{Sysfs: usbdev.Sysfs(t.TempDir()), Microphone: DeviceNone, Speaker: DeviceNone, CameraIDs: cfg.CameraIDs})
	if st := missing.Status(); !strings.Contains(st.Camera.Error, "046d:0825 (the camera of the hardware config)") {
		t.Fatalf("a config camera that is not there: %+v", st.Camera)
	}
}
