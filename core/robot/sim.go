package robot

import (
	"math"
	"time"
)

// Sim is the simulated backend: joints move toward their targets with bounded speed in every
// motor mode, as the anchor's simulators follow targets whatever the mode. Enabled motors pull a
// pushed joint back to its target; in the other modes a push (a hand) leaves the joints where it
// put them until a new target is commanded. A motor switched off alone (SetTorque) stays put. Its
// speaker plays in real time into its microphone, so what is played can be recorded back.
type Sim struct {
	Commands
	present  Joints
	follow   bool // outside MotorsEnabled: a target was commanded since the mode switch or the last push
	last     time.Time
	speaker  []float32
	micClock time.Time
}

// Maximum joint speeds of the simulation.
const (
	simMaxLinearSpeed  = 0.2  // m/s
	simMaxAngularSpeed = 10.0 // rad/s
	simMaxSpeakerQueue = 60 * SampleRate * Channels
)

// NewSim returns a simulated robot resting asleep: in the sleep pose with its motors disabled.
func NewSim() *Sim {
	return &Sim{Commands: Commands{target: SleepPose, mode: MotorsDisabled}, present: SleepPose}
}

// Name implements Backend.
func (s *Sim) Name() string { return "sim" }

// Read implements Backend: it integrates the motion since the previous read.
func (s *Sim) Read(now time.Time) Joints {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last.IsZero() {
		s.last = now
	}
	dt := now.Sub(s.last).Seconds()
	if dt <= 0 {
		return s.present
	}
	s.last = now
	if s.mode != MotorsEnabled && !s.follow {
		return s.present
	}
	lin, ang := simMaxLinearSpeed*dt, simMaxAngularSpeed*dt
	p, t := &s.present, s.target
	// The six Stewart motors move the head together: one limp motor leaves it where it is.
	if !s.limp["stewart_1"] && !s.limp["stewart_2"] && !s.limp["stewart_3"] && !s.limp["stewart_4"] && !s.limp["stewart_5"] && !s.limp["stewart_6"] {
		p.Head.X = approach(p.Head.X, t.Head.X, lin)
		p.Head.Y = approach(p.Head.Y, t.Head.Y, lin)
		p.Head.Z = approach(p.Head.Z, t.Head.Z, lin)
		p.Head.Roll = approach(p.Head.Roll, t.Head.Roll, ang)
		p.Head.Pitch = approach(p.Head.Pitch, t.Head.Pitch, ang)
		p.Head.Yaw = approach(p.Head.Yaw, t.Head.Yaw, ang)
	}
	if !s.limp["right_antenna"] {
		p.Antennas[0] = approach(p.Antennas[0], t.Antennas[0], ang)
	}
	if !s.limp["left_antenna"] {
		p.Antennas[1] = approach(p.Antennas[1], t.Antennas[1], ang)
	}
	if !s.limp["body_rotation"] {
		p.BodyYaw = approach(p.BodyYaw, t.BodyYaw, ang)
	}
	return s.present
}

func approach(v, target, step float64) float64 {
	d := target - v
	if math.Abs(d) <= step {
		return target
	}
	return v + math.Copysign(step, d)
}

// Command implements Backend: a new target is followed in every motor mode.
func (s *Sim) Command(target Joints) {
	s.mu.Lock()
	if target != s.target {
		s.follow = true
	}
	s.target = target
	s.mu.Unlock()
}

// SetMotorMode implements Backend: outside MotorsEnabled the joints stay where they are until a
// new target is commanded.
func (s *Sim) SetMotorMode(mode MotorMode) {
	s.mu.Lock()
	if mode != s.mode {
		s.follow = false
	}
	s.mode = mode
	s.mu.Unlock()
}

// PushAntenna implements Pushable: the antenna is displaced by delta radians. Enabled motors pull
// it back to its target; in the other modes it stays there until a new target is commanded.
func (s *Sim) PushAntenna(index int, delta float64) {
	s.mu.Lock()
	s.present.Antennas[index] = limitAntenna.clamp(s.present.Antennas[index] + delta)
	s.follow = false
	s.mu.Unlock()
}

// Speak implements Backend.
func (s *Sim) Speak(samples []float32) {
	s.mu.Lock()
	s.speaker = append(s.speaker, samples...)
	if over := len(s.speaker) - simMaxSpeakerQueue; over > 0 {
		s.speaker = s.speaker[over:]
	}
	s.mu.Unlock()
}

// Listen implements Backend: the microphone hears the speaker, sample for sample, in real time.
func (s *Sim) Listen(dst []float32, now time.Time) []float32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.micClock.IsZero() || now.Sub(s.micClock) > time.Second {
		s.micClock = now // after a long gap, do not invent seconds of samples
	}
	n := int(now.Sub(s.micClock).Seconds() * SampleRate)
	if n <= 0 {
		return dst
	}
	s.micClock = s.micClock.Add(time.Duration(n) * time.Second / SampleRate)
	n *= Channels
	played := min(n, len(s.speaker))
	dst = append(dst, s.speaker[:played]...)
	s.speaker = s.speaker[played:]
	return append(dst, make([]float32, n-played)...) // silence for the rest
}

// Close implements Backend.
func (s *Sim) Close() error { return nil }
