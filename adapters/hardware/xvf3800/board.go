// Package xvf3800 is the robot's audio board, an XMOS XVF3800, tuned and read through vendor
// control requests on its USB endpoint 0 (direction of arrival, gains, AGC, noise suppression,
// LEDs). It speaks usbfs ioctls directly, without libusb or cgo, so the daemon cross-builds for
// the robot with CGO_ENABLED=0. The board's sound itself goes through adapters/hardware/media.
package xvf3800

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/robothub/robothub/adapters/hardware/usbdev"
)

// The robot's audio board, an XMOS XVF3800, is tuned and read through vendor control requests on
// USB endpoint 0 (XMOS's "host control" protocol): a parameter is a resource id (wIndex) and a
// command id (wValue, with bit 7 set to read); a read answers a status byte (0 done, 64 busy: ask
// again) then the values. The daemon speaks it through usbfs ioctls (usbfs_linux.go) rather than
// libusb: no cgo, so the daemon still cross-builds for the robot with CGO_ENABLED=0.

// controlPipe is a device's endpoint 0: usbfs on Linux, a recorded exchange in tests.
type controlPipe interface {
	Control(requestType, request uint8, value, index uint16, data []byte, timeout time.Duration) (int, error)
	Close() error
}

const (
	ctrlIn          = 0x80 | 0x40 // device to host, vendor, device recipient
	ctrlOut         = 0x40        // host to device, vendor, device recipient
	statusDone      = 0
	statusRetry     = 64
	maxReadAttempts = 100
	controlTimeout  = time.Second
)

// audioParam is one parameter of the board: where it is, how many values, which type, and whether
// it can be written.
type audioParam struct {
	resid, cmdid uint8
	count        int
	kind         string // uint8, int32, uint32, float, radians
	access       string // ro, rw, wo
}

// audioParams are the board's parameters the daemon knows, from XMOS's XVF3800 control command
// appendix (the ones apps and the public SDK use: direction of arrival, gains, AGC, noise
// suppression, echo, output selection, LEDs).
var audioParams = map[string]audioParam{
	"VERSION":                     {48, 0, 3, "uint8", "ro"},
	"AEC_AZIMUTH_VALUES":          {33, 75, 4, "radians", "ro"},
	"AEC_SPENERGY_VALUES":         {33, 80, 4, "float", "ro"},
	"AEC_HPFONOFF":                {33, 1, 1, "int32", "rw"},
	"AEC_AECSILENCELEVEL":         {33, 2, 2, "float", "rw"},
	"AEC_AECCONVERGED":            {33, 3, 1, "int32", "ro"},
	"AEC_FAR_EXTGAIN":             {33, 5, 1, "float", "rw"},
	"AEC_ASROUTONOFF":             {33, 35, 1, "int32", "rw"},
	"AEC_ASROUTGAIN":              {33, 36, 1, "float", "rw"},
	"AEC_FIXEDBEAMSONOFF":         {33, 37, 1, "int32", "rw"},
	"AUDIO_MGR_MIC_GAIN":          {35, 0, 1, "float", "rw"},
	"AUDIO_MGR_REF_GAIN":          {35, 1, 1, "float", "rw"},
	"AUDIO_MGR_SELECTED_AZIMUTHS": {35, 11, 2, "radians", "ro"},
	"AUDIO_MGR_SELECTED_CHANNELS": {35, 12, 2, "uint8", "rw"},
	"AUDIO_MGR_OP_L":              {35, 15, 2, "uint8", "rw"},
	"AUDIO_MGR_OP_R":              {35, 19, 2, "uint8", "rw"},
	"AUDIO_MGR_SYS_DELAY":         {35, 26, 1, "int32", "rw"},
	"LED_EFFECT":                  {20, 12, 1, "uint8", "rw"},
	"LED_BRIGHTNESS":              {20, 13, 1, "uint8", "rw"},
	"LED_SPEED":                   {20, 15, 1, "uint8", "rw"},
	"LED_COLOR":                   {20, 16, 1, "uint32", "rw"},
	"DOA_VALUE":                   {20, 18, 2, "uint32", "ro"},
	"DOA_VALUE_RADIANS":           {20, 19, 2, "radians", "ro"},
	"PP_AGCONOFF":                 {17, 10, 1, "int32", "rw"},
	"PP_AGCMAXGAIN":               {17, 11, 1, "float", "rw"},
	"PP_AGCDESIREDLEVEL":          {17, 12, 1, "float", "rw"},
	"PP_AGCGAIN":                  {17, 13, 1, "float", "rw"},
	"PP_AGCTIME":                  {17, 14, 1, "float", "rw"},
	"PP_LIMITONOFF":               {17, 19, 1, "int32", "rw"},
	"PP_LIMITPLIMIT":              {17, 20, 1, "float", "rw"},
	"PP_MIN_NS":                   {17, 21, 1, "float", "rw"},
	"PP_MIN_NN":                   {17, 22, 1, "float", "rw"},
	"PP_ECHOONOFF":                {17, 23, 1, "int32", "rw"},
	"PP_GAMMA_E":                  {17, 24, 1, "float", "rw"},
	"PP_NLATTENONOFF":             {17, 27, 1, "int32", "rw"},
	"PP_MGSCALE":                  {17, 29, 3, "float", "rw"},
	"PP_DTSENSITIVE":              {17, 31, 1, "int32", "rw"},
	"PP_ATTNS_MODE":               {17, 32, 1, "int32", "rw"},
	"PP_ATTNS_NOMINAL":            {17, 33, 1, "float", "rw"},
	"PP_ATTNS_SLOPE":              {17, 34, 1, "float", "rw"},
}

// ParamNames lists the parameters the daemon knows, sorted.
func ParamNames() []string {
	names := make([]string, 0, len(audioParams))
	for n := range audioParams {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ErrUnknownParam is a parameter name the daemon does not know.
var ErrUnknownParam = errors.New("unknown audio board parameter")

// Board is the robot's XVF3800, open for control requests.
type Board struct {
	pipe  controlPipe
	sleep func(time.Duration) // between busy answers; time.Sleep but in tests
}

// Open opens the robot's audio board (usbdev.AudioIDs, found in sysfs) for control requests.
func Open(sysfs usbdev.Sysfs) (*Board, error) {
	node, id, err := sysfs.FindUSB(usbdev.AudioIDs)
	if err != nil {
		return nil, err
	}
	pipe, err := openUSBFS(node)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w (the daemon's user needs read and write access: a udev rule for %04x:%04x, or the plugdev group)", id.Name, node, err, id.Vendor, id.Product)
	}
	return &Board{pipe: pipe, sleep: time.Sleep}, nil
}

// Close releases the device.
func (b *Board) Close() error { return b.pipe.Close() }

func param(name string) (audioParam, error) {
	p, ok := audioParams[name]
	if !ok {
		return p, fmt.Errorf("%w %q: known ones are %s", ErrUnknownParam, name, strings.Join(ParamNames(), ", "))
	}
	return p, nil
}

func (p audioParam) width() int {
	if p.kind == "uint8" {
		return 1
	}
	return 4
}

// Read reads a parameter's values.
func (b *Board) Read(name string) ([]float64, error) {
	p, err := param(name)
	if err != nil {
		return nil, err
	}
	if p.access == "wo" {
		return nil, fmt.Errorf("%s can be written, not read", name)
	}
	buf := make([]byte, 1+p.count*p.width())
	for attempt := 1; ; attempt++ {
		n, err := b.pipe.Control(ctrlIn, 0, 0x80|uint16(p.cmdid), uint16(p.resid), buf, controlTimeout)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		if n < 1 {
			return nil, fmt.Errorf("reading %s: the board answered nothing", name)
		}
		switch buf[0] {
		case statusDone:
			if n < len(buf) {
				return nil, fmt.Errorf("reading %s: the board answered %d bytes, want %d", name, n, len(buf))
			}
			return p.decode(buf[1:]), nil
		case statusRetry:
			if attempt >= maxReadAttempts {
				return nil, fmt.Errorf("reading %s: the board stayed busy for %d attempts", name, attempt)
			}
			b.sleep(10 * time.Millisecond)
		default:
			return nil, fmt.Errorf("reading %s: the board answered status %d", name, buf[0])
		}
	}
}

func (p audioParam) decode(b []byte) []float64 {
	out := make([]float64, p.count)
	for i := range out {
		switch p.kind {
		case "uint8":
			out[i] = float64(b[i])
		case "int32":
			out[i] = float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		case "uint32":
			out[i] = float64(binary.LittleEndian.Uint32(b[4*i:]))
		default: // float, radians
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
	}
	return out
}

// Write writes a parameter's values.
func (b *Board) Write(name string, values []float64) error {
	p, err := param(name)
	if err != nil {
		return err
	}
	if p.access == "ro" {
		return fmt.Errorf("%s is read-only", name)
	}
	if len(values) != p.count {
		return fmt.Errorf("%s takes %d values, got %d", name, p.count, len(values))
	}
	data := make([]byte, 0, p.count*p.width())
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: value %d is not a finite number", name, i)
		}
		switch p.kind {
		case "uint8":
			if v != math.Trunc(v) || v < 0 || v > 255 {
				return fmt.Errorf("%s: value %d (%g) is not an integer from 0 to 255", name, i, v)
			}
			data = append(data, byte(v))
		case "int32", "uint32":
			lo, hi := float64(math.MinInt32), float64(math.MaxInt32)
			if p.kind == "uint32" {
				lo, hi = 0, math.MaxUint32
			}
			if v != math.Trunc(v) || v < lo || v > hi {
				return fmt.Errorf("%s: value %d (%g) is not a %s", name, i, v, p.kind)
			}
			data = binary.LittleEndian.AppendUint32(data, uint32(int64(v)))
		default:
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(v)))
		}
	}
	if _, err := b.pipe.Control(ctrlOut, 0, uint16(p.cmdid), uint16(p.resid), data, controlTimeout); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// DoA reads the direction of arrival of sound: its angle in radians (0 left, π/2 front, π
// right, as the public SDK gives it) and whether the board hears speech.
func (b *Board) DoA() (angle float64, speech bool, err error) {
	v, err := b.Read("DOA_VALUE_RADIANS")
	if err != nil {
		return 0, false, err
	}
	return v[0], v[1] != 0, nil
}
