package robot

import (
	"sync"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// The audio format of every audio call, the public SDK's: float32 samples in [-1, 1] at
// SampleRate frames per second, Channels (left, right) interleaved in each frame.
const (
	SampleRate = 16000
	Channels   = 2
)

// MotorMode is how the motors behave.
type MotorMode string

// The motor modes.
const (
	MotorsEnabled             MotorMode = "enabled"              // motors hold their targets
	MotorsDisabled            MotorMode = "disabled"             // motors are limp
	MotorsGravityCompensation MotorMode = "gravity_compensation" // motors hold against gravity only; the robot can be moved by hand
)

// ParseMotorMode accepts the motor mode names.
func ParseMotorMode(s string) (MotorMode, error) {
	switch m := MotorMode(s); m {
	case MotorsEnabled, MotorsDisabled, MotorsGravityCompensation:
		return m, nil
	}
	return "", fault.Invalidf("motor mode \"%s\" is not one of enabled, disabled, gravity_compensation", s)
}

// Backend is the hardware (or its simulation) the Robot drives. The Robot calls it from one
// goroutine at a time.
type Backend interface {
	// Name says which backend this is ("sim", or a hardware name).
	Name() string
	// Command sends joint targets; enabled motors track them.
	Command(target Joints)
	// SetMotorMode switches the motors' mode.
	SetMotorMode(mode MotorMode)
	// Read returns the present joint positions at now.
	Read(now time.Time) Joints
	// Speak queues interleaved stereo samples on the speaker.
	Speak(samples []float32)
	// Listen appends the interleaved stereo samples the microphones captured up to now since the
	// previous call to dst.
	Listen(dst []float32, now time.Time) []float32
	// Close releases the hardware.
	Close() error
}

// Commands keeps what the Robot last asked of a backend, for its motion to follow: the target, the
// motor mode and the motors switched off one by one. A backend embeds it for Command, SetMotorMode
// and SetTorque, and reads it with Commanded. (In the simulation its mu also guards the rest of
// the backend's state.)
type Commands struct {
	mu     sync.Mutex
	target Joints
	mode   MotorMode
	limp   map[string]bool // motors switched off one by one (SetTorque) while the others hold
}

// Command implements Backend: the motors are driven toward target.
func (c *Commands) Command(target Joints) {
	c.mu.Lock()
	c.target = target
	c.mu.Unlock()
}

// SetMotorMode implements Backend.
func (c *Commands) SetMotorMode(mode MotorMode) {
	c.mu.Lock()
	c.mode = mode
	c.mu.Unlock()
}

// SetTorque implements TorqueSetter: the motors on is false for go limp, the others hold.
func (c *Commands) SetTorque(on map[string]bool) {
	limp := make(map[string]bool, len(on))
	for name, v := range on {
		limp[name] = !v
	}
	c.mu.Lock()
	c.limp = limp
	c.mu.Unlock()
}

// Commanded returns what was last asked: the target, the motor mode, and the motors to keep limp
// (not to be written to).
func (c *Commands) Commanded() (target Joints, mode MotorMode, limp map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.target, c.mode, c.limp
}

// Media is the robot's sound and camera when they are devices of their own rather than the
// backend's: the daemon's GStreamer pipelines, or the simulation's drawn camera and loopback sound
// behind the same paths. UseMedia puts them in place.
type Media interface {
	// Speak and Listen are the Backend's.
	Speak(samples []float32)
	Listen(dst []float32, now time.Time) []float32
	Silencer
	Camera
}

// Pushable is implemented by backends that accept an external push on an antenna, as a hand
// touching it would: the simulation, for tests and demos.
type Pushable interface {
	PushAntenna(index int, delta float64)
}
