package usbdev_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/adapters/hardware/usbdev"
)

// writeFiles writes each path (relative to root) with its content, making the directories.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, data := range files {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// link makes a class device's "device" link point into a USB device's interface, as the kernel does.
func link(t *testing.T, root, class, usbDir string) {
	t.Helper()
	iface := filepath.Join(root, usbDir, "1-1:1.0")
	if err := os.MkdirAll(iface, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "class", class), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(iface, filepath.Join(root, "class", class, "device")); err != nil {
		t.Fatal(err)
	}
}

// The audio board's usbfs node is found by the first id of the list that is present (the robot's
// own firmware before the ReSpeaker's), from the device's bus and device numbers.
func TestFindUSBTakesTheIDsInOrder(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"bus/usb/devices/1-1/idVendor": "2886", "bus/usb/devices/1-1/idProduct": "001a",
		"bus/usb/devices/1-1/busnum": "1", "bus/usb/devices/1-1/devnum": "4",
		"bus/usb/devices/3-2/idVendor": "38fb", "bus/usb/devices/3-2/idProduct": "1001",
		"bus/usb/devices/3-2/busnum": "3", "bus/usb/devices/3-2/devnum": "12",
		"bus/usb/devices/usb1/idVendor": "1d6b", "bus/usb/devices/usb1/idProduct": "0002",
	})
	node, id, err := usbdev.Sysfs(root).FindUSB(usbdev.AudioIDs)
	if err != nil || node != "/dev/bus/usb/003/012" || id != usbdev.AudioIDs[0] {
		t.Fatalf("FindUSB: %q %v %v", node, id, err)
	}
	_, _, err = usbdev.Sysfs(t.TempDir()).FindUSB(usbdev.AudioIDs)
	var nf *usbdev.NotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "38fb:1001 (the robot's audio card) or 2886:001a (ReSpeaker XVF3800)") {
		t.Fatalf("no board: %v", err)
	}
}

// A UVC camera's metadata node (index 1) is not a capture node; what is there but not wanted is
// named in the error.
func TestFindCameraSkipsMetadataNodesAndNamesWhatItSaw(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"devices/usb1/1-1/idVendor": "38fb", "devices/usb1/1-1/idProduct": "1002",
		"class/video4linux/video2/index": "0", "class/video4linux/video2/name": "Robot camera",
		"class/video4linux/video1/index": "1", "class/video4linux/video1/name": "Robot camera",
		"devices/usb1/1-2/idVendor": "046d", "devices/usb1/1-2/idProduct": "0825",
		"class/video4linux/video0/index": "0", "class/video4linux/video0/name": "UVC Camera",
	})
	link(t, root, "video4linux/video1", "devices/usb1/1-1")
	link(t, root, "video4linux/video2", "devices/usb1/1-1")
	link(t, root, "video4linux/video0", "devices/usb1/1-2")
	dev, id, err := usbdev.Sysfs(root).FindCamera(usbdev.CameraIDs)
	if err != nil || dev != "/dev/video2" || id != usbdev.CameraIDs[0] {
		t.Fatalf("FindCamera: %q %v %v", dev, id, err)
	}
	_, _, err = usbdev.Sysfs(root).FindCamera([]usbdev.ID{{Vendor: 0x0c45, Product: 0x636d, Name: "Arducam 12MP"}})
	if err == nil || !strings.Contains(err.Error(), `/dev/video0 046d:0825 "UVC Camera"`) || !strings.Contains(err.Error(), `/dev/video2 38fb:1002 "Robot camera"`) {
		t.Fatalf("another camera: %v", err)
	}
}
