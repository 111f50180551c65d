// Package usbdev finds the robot's USB devices in sysfs by vendor and product id: its camera's
// video node, its sound card's ALSA card, and the usbfs node of any device (the audio board's
// control endpoint). Used by adapters/hardware/media and adapters/hardware/xvf3800; tests give it
// a copy of a machine's /sys tree.
package usbdev

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ID is a USB vendor and product id.
type ID struct {
	Vendor, Product uint16
	Name            string // what it is, for messages
}

func (u ID) String() string { return fmt.Sprintf("%04x:%04x (%s)", u.Vendor, u.Product, u.Name) }

// The robot's media devices, by USB id, most likely first (from the robot maker's own media code).
var (
	// CameraIDs are the robot's USB cameras: the Lite's own, and the Arducam of early units. The
	// Wireless's camera is on the Pi's CSI port, reached through libcamera.
	CameraIDs = []ID{{0x38fb, 0x1002, "the robot's camera"}, {0x0c45, 0x636d, "Arducam 12MP"}}
	// AudioIDs are the robot's sound card (an XMOS XVF3800 with four microphones and the
	// speaker's output): its firmware, then the ReSpeaker firmware of early units.
	AudioIDs = []ID{{0x38fb, 0x1001, "the robot's audio card"}, {0x2886, 0x001a, "ReSpeaker XVF3800"}}
)

// Sysfs is where devices are looked for: "/sys" on a robot, a copy of its tree in tests.
type Sysfs string

// usbParent returns the USB device directory (the one with idVendor) above a sysfs device link.
func (s Sysfs) usbParent(link string) (dir string, id ID, ok bool) {
	dir, err := filepath.EvalSymlinks(link)
	if err != nil {
		return "", id, false
	}
	for ; dir != "/" && strings.HasPrefix(dir, string(s)) && len(dir) > len(s); dir = filepath.Dir(dir) {
		v, err1 := readHex(filepath.Join(dir, "idVendor"))
		p, err2 := readHex(filepath.Join(dir, "idProduct"))
		if err1 == nil && err2 == nil {
			return dir, ID{Vendor: v, Product: p}, true
		}
	}
	return "", id, false
}

func readHex(path string) (uint16, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 16, 16)
	return uint16(v), err
}

func readTrim(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

// NotFoundError says what was looked for and what was there instead.
type NotFoundError struct {
	What   string // "camera", "sound card"
	Wanted []ID   // the ids looked for
	Seen   []string
	Hint   string
}

func (e *NotFoundError) Error() string {
	ids := make([]string, len(e.Wanted))
	for i, id := range e.Wanted {
		ids[i] = id.String()
	}
	msg := fmt.Sprintf("no %s found: looked for USB %s", e.What, strings.Join(ids, " or "))
	if len(e.Seen) > 0 {
		msg += "; found only " + strings.Join(e.Seen, ", ")
	} else {
		msg += "; found none at all"
	}
	return msg + ". " + e.Hint
}

// FindCamera returns the V4L2 capture node (/dev/videoN) of the first camera of ids present.
func (s Sysfs) FindCamera(ids []ID) (string, ID, error) {
	nodes, _ := filepath.Glob(filepath.Join(string(s), "class", "video4linux", "video*"))
	slices.SortFunc(nodes, func(a, b string) int { return nodeNumber(a) - nodeNumber(b) })
	type found struct {
		dev, name string
		id        ID
	}
	var present []found
	for _, n := range nodes {
		// A UVC camera has a metadata node beside each capture node; index 0 captures.
		if idx := readTrim(filepath.Join(n, "index")); idx != "" && idx != "0" {
			continue
		}
		if _, id, ok := s.usbParent(filepath.Join(n, "device")); ok {
			present = append(present, found{"/dev/" + filepath.Base(n), readTrim(filepath.Join(n, "name")), id})
		}
	}
	for _, want := range ids {
		for _, f := range present {
			if f.id.Vendor == want.Vendor && f.id.Product == want.Product {
				return f.dev, want, nil
			}
		}
	}
	seen := make([]string, len(present))
	for i, f := range present {
		seen[i] = fmt.Sprintf("%s %04x:%04x %q", f.dev, f.id.Vendor, f.id.Product, f.name)
	}
	return "", ID{}, &NotFoundError{What: "camera", Wanted: ids, Seen: seen,
		Hint: "Plug the robot's camera in, or name one with --camera /dev/videoN (--camera none runs without)"}
}

// FindSoundCard returns the ALSA card id (its name in /proc/asound) of the first card of ids
// present.
func (s Sysfs) FindSoundCard(ids []ID) (string, ID, error) {
	cards, _ := filepath.Glob(filepath.Join(string(s), "class", "sound", "card*"))
	type found struct {
		name string
		id   ID
	}
	var present []found
	for _, c := range cards {
		if _, id, ok := s.usbParent(filepath.Join(c, "device")); ok {
			present = append(present, found{readTrim(filepath.Join(c, "id")), id})
		}
	}
	for _, want := range ids {
		for _, f := range present {
			if f.id.Vendor == want.Vendor && f.id.Product == want.Product && f.name != "" {
				return f.name, want, nil
			}
		}
	}
	seen := make([]string, len(present))
	for i, f := range present {
		seen[i] = fmt.Sprintf("card %s %04x:%04x", f.name, f.id.Vendor, f.id.Product)
	}
	return "", ID{}, &NotFoundError{What: "sound card", Wanted: ids, Seen: seen,
		Hint: "Plug the robot's USB audio in, or name devices with --microphone and --speaker (hw:CARD=NAME, pulse; none runs without)"}
}

// FindUSB returns the usbfs node (/dev/bus/usb/BBB/DDD) of the first device of ids present.
func (s Sysfs) FindUSB(ids []ID) (string, ID, error) {
	devs, _ := filepath.Glob(filepath.Join(string(s), "bus", "usb", "devices", "*"))
	for _, want := range ids {
		for _, d := range devs {
			v, err1 := readHex(filepath.Join(d, "idVendor"))
			p, err2 := readHex(filepath.Join(d, "idProduct"))
			if err1 != nil || err2 != nil || v != want.Vendor || p != want.Product {
				continue
			}
			bus, err1 := strconv.Atoi(readTrim(filepath.Join(d, "busnum")))
			dev, err2 := strconv.Atoi(readTrim(filepath.Join(d, "devnum")))
			if err1 != nil || err2 != nil {
				continue
			}
			return fmt.Sprintf("/dev/bus/usb/%03d/%03d", bus, dev), want, nil
		}
	}
	return "", ID{}, &NotFoundError{What: "XMOS audio device", Wanted: ids,
		Hint: "Direction of arrival and the audio board's parameters need the robot's sound card"}
}

func nodeNumber(path string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(path), "video"))
	return n
}
