package robot

import (
	"math"

	"github.com/robothub/robothub/core/fault"
)

// HeadPose is the head's pose relative to its rest position: a translation in metres and
// roll/pitch/yaw angles in radians.
type HeadPose struct {
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	Z     float64 `json:"z"`
	Roll  float64 `json:"roll"`
	Pitch float64 `json:"pitch"`
	Yaw   float64 `json:"yaw"`
}

// Joints is one full configuration of the robot: head pose, antenna angles [right, left] in radians
// and body yaw in radians.
type Joints struct {
	Head     HeadPose
	Antennas [2]float64
	BodyYaw  float64
}

// The poses the robot knows by name.
var (
	// DefaultPose is where the robot stands when awake and idle, and where it returns after an app:
	// the public robot's init pose, the head at rest and the antennas 10° off the vertical (which
	// keeps them from shaking).
	DefaultPose = Joints{Antennas: [2]float64{-0.1745, 0.1745}}
	// SleepPose is the folded pose the robot rests in while asleep.
	SleepPose = Joints{
		Head:     HeadPose{Z: -0.02, Pitch: 0.35},
		Antennas: [2]float64{-3.05, 3.05},
	}
)

type limit struct{ lo, hi float64 }

func (l limit) clamp(v float64) float64 { return math.Max(l.lo, math.Min(l.hi, v)) }

// Joint limits of the robot; targets outside them are clamped, as motor controllers do.
var (
	limitHeadXY    = limit{-0.03, 0.03}
	limitHeadZ     = limit{-0.04, 0.03}
	limitHeadTilt  = limit{-0.7, 0.7} // roll and pitch, about 40 degrees
	limitHeadYaw   = limit{-2.97, 2.97}
	limitAntenna   = limit{-math.Pi, math.Pi}
	limitBodyYaw   = limit{-2.8, 2.8}
	maxMoveSeconds = 60.0
)

func (p HeadPose) clamped() HeadPose {
	return HeadPose{
		X: limitHeadXY.clamp(p.X), Y: limitHeadXY.clamp(p.Y), Z: limitHeadZ.clamp(p.Z),
		Roll: limitHeadTilt.clamp(p.Roll), Pitch: limitHeadTilt.clamp(p.Pitch), Yaw: limitHeadYaw.clamp(p.Yaw),
	}
}

// Target is a partial command: nil fields keep their current target.
type Target struct {
	Head     *HeadPose
	Antennas *[2]float64
	BodyYaw  *float64
}

// check returns an Invalid error naming the first non-finite field.
func (t Target) check() error {
	if p := t.Head; p != nil {
		for i, v := range [6]float64{p.X, p.Y, p.Z, p.Roll, p.Pitch, p.Yaw} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fault.Invalidf("head.%s must be a finite number", [6]string{"x", "y", "z", "roll", "pitch", "yaw"}[i])
			}
		}
	}
	if t.Antennas != nil {
		for i, a := range t.Antennas {
			if math.IsNaN(a) || math.IsInf(a, 0) {
				return fault.Invalidf("antennas[%d] must be a finite number", i)
			}
		}
	}
	if t.BodyYaw != nil && (math.IsNaN(*t.BodyYaw) || math.IsInf(*t.BodyYaw, 0)) {
		return fault.Invalidf("body_yaw must be a finite number")
	}
	return nil
}

// applyTo returns j with t's fields set, clamped to the joint limits.
func (t Target) applyTo(j Joints) Joints {
	if t.Head != nil {
		j.Head = t.Head.clamped()
	}
	if t.Antennas != nil {
		j.Antennas = [2]float64{limitAntenna.clamp(t.Antennas[0]), limitAntenna.clamp(t.Antennas[1])}
	}
	if t.BodyYaw != nil {
		j.BodyYaw = limitBodyYaw.clamp(*t.BodyYaw)
	}
	return j
}

// Interpolation names how a timed move progresses from start to end.
type Interpolation string

// The interpolations a move can use.
const (
	Linear  Interpolation = "linear"
	MinJerk Interpolation = "minjerk"
	Ease    Interpolation = "ease_in_out"
	Cartoon Interpolation = "cartoon"
)

// ParseInterpolation accepts the anchor's interpolation names; empty means MinJerk, and "ease",
// this daemon's first name for ease_in_out, is still taken.
func ParseInterpolation(s string) (Interpolation, error) {
	switch Interpolation(s) {
	case "":
		return MinJerk, nil
	case "ease":
		return Ease, nil
	case Linear, MinJerk, Ease, Cartoon:
		return Interpolation(s), nil
	}
	return "", fault.Invalidf("interpolation %q is not one of linear, minjerk, ease_in_out, cartoon", s)
}

// progress maps elapsed fraction t in [0,1] to the fraction of the way covered: the public SDK's
// time laws (its utils.interpolation.time_trajectory), so that a goto the daemon plays and one an
// app plays itself with GotoMove follow the same path.
func (i Interpolation) progress(t float64) float64 {
	t = math.Max(0, math.Min(1, t))
	switch i {
	case Linear:
		return t
	case Ease: // quadratic in, quadratic out
		if t < 0.5 {
			return 2 * t * t
		}
		return 1 - (2-2*t)*(2-2*t)/2
	case Cartoon: // "back" in and out: a little wind-up before, a little overshoot after
		const s = 1.70158 * 1.525
		if t < 0.5 {
			return (2 * t) * (2 * t) * ((s+1)*2*t - s) / 2
		}
		u := 2*t - 2
		return (u*u*((s+1)*u+s) + 2) / 2
	default: // minimum jerk
		return t * t * t * (10 - 15*t + 6*t*t)
	}
}

func lerp(a, b, s float64) float64 { return a + (b-a)*s }

func between(a, b Joints, s float64) Joints {
	return Joints{
		Head: HeadPose{
			X: lerp(a.Head.X, b.Head.X, s), Y: lerp(a.Head.Y, b.Head.Y, s), Z: lerp(a.Head.Z, b.Head.Z, s),
			Roll: lerp(a.Head.Roll, b.Head.Roll, s), Pitch: lerp(a.Head.Pitch, b.Head.Pitch, s),
			Yaw: lerp(a.Head.Yaw, b.Head.Yaw, s),
		},
		Antennas: [2]float64{lerp(a.Antennas[0], b.Antennas[0], s), lerp(a.Antennas[1], b.Antennas[1], s)},
		BodyYaw:  lerp(a.BodyYaw, b.BodyYaw, s),
	}
}
