package robot

import (
	"math"
	"slices"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// MotorNames are the robot's motors, by the names the anchor's SDK takes in enable_motors(ids).
var MotorNames = []string{"body_rotation", "stewart_1", "stewart_2", "stewart_3", "stewart_4", "stewart_5", "stewart_6", "right_antenna", "left_antenna"}

// TorqueSetter is implemented by backends that switch single motors on and off: a limp joint stays
// where it is (or where a hand puts it) whatever its target.
type TorqueSetter interface {
	SetTorque(on map[string]bool)
}

// SetMotorTorque switches the motors named in ids on or off, leaving the others as they are. With
// no ids it switches every motor, as SetMotorMode(enabled or disabled) does.
func (r *Robot) SetMotorTorque(ids []string, on bool) error {
	if len(ids) == 0 {
		mode := MotorsDisabled
		if on {
			mode = MotorsEnabled
		}
		return r.SetMotorMode(mode)
	}
	for _, id := range ids {
		if !slices.Contains(MotorNames, id) {
			return fault.Invalidf("motor %q is not one of %v", id, MotorNames)
		}
	}
	ts, ok := r.backend.(TorqueSetter)
	if !ok {
		return fault.Refusedf("the %s backend cannot switch single motors", r.backend.Name())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.torque == nil {
		r.torque = r.allTorque(r.mode == MotorsEnabled)
	}
	if on && r.mode != MotorsEnabled {
		r.torque = nil // the others stay off: setMode must not switch them on first
		r.setMode(MotorsEnabled)
		r.torque = r.allTorque(false)
	}
	for _, id := range ids {
		r.torque[id] = on
	}
	ts.SetTorque(r.torque)
	r.targetAt = time.Now()
	return nil
}

// MotorTorque returns which motors hold their targets: as the motors say, on a backend whose
// motors report it (a motor that shut itself down after a hardware error is off whatever was
// asked), else as asked.
func (r *Robot) MotorTorque() map[string]bool {
	r.mu.Lock()
	out := r.allTorque(r.mode == MotorsEnabled)
	for k, v := range r.torque { // it names every motor
		out[k] = v && r.mode == MotorsEnabled
	}
	r.mu.Unlock()
	if tr, ok := r.backend.(TorqueReporter); ok {
		for name, on := range tr.ReportedTorque() {
			out[name] = on
		}
	}
	return out
}

func (r *Robot) allTorque(on bool) map[string]bool {
	m := make(map[string]bool, len(MotorNames))
	for _, n := range MotorNames {
		m[n] = on
	}
	return m
}

// Yaw limits of automatic body yaw: the head turns at most maxRelativeYaw from the body, the body
// at most maxBodyYaw from the front (the anchor's 65° and 160°).
var (
	maxRelativeYaw = 65 * math.Pi / 180
	maxBodyYaw     = 160 * math.Pi / 180
)

// SetAutomaticBodyYaw turns automatic body yaw on or off. On (the default), a head yaw the head
// cannot reach alone (more than 65° from the body) turns the body with it, up to 160°; off, the
// head stops 65° from the body.
func (r *Robot) SetAutomaticBodyYaw(on bool) {
	r.mu.Lock()
	r.manualBodyYaw = !on
	r.mu.Unlock()
}

// AutomaticBodyYaw reports whether automatic body yaw is on.
func (r *Robot) AutomaticBodyYaw() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.manualBodyYaw
}

// yawRule keeps the head within reach of the body: call with r.mu held on a new target.
func (r *Robot) yawRule(j Joints) Joints {
	h, b := j.Head.Yaw, j.BodyYaw
	if !r.manualBodyYaw {
		switch {
		case h-b > maxRelativeYaw:
			b = h - maxRelativeYaw
		case b-h > maxRelativeYaw:
			b = h + maxRelativeYaw
		}
		b = math.Max(-maxBodyYaw, math.Min(maxBodyYaw, b))
	}
	j.BodyYaw = b
	j.Head.Yaw = math.Max(b-maxRelativeYaw, math.Min(b+maxRelativeYaw, h))
	return j
}

// MotionFrame is one recorded frame of motion: the commanded head pose (a row-major 4×4 matrix
// in "head", as the anchor records it), antennas and body yaw, at a Unix time in seconds.
type MotionFrame struct {
	Time     float64     `json:"time"`
	Head     [][]float64 `json:"head"`
	Antennas [2]float64  `json:"antennas"`
	BodyYaw  float64     `json:"body_yaw"`
}

// maxMotionFrames bounds a motion recording: ten minutes at the control rate.
const maxMotionFrames = int(10 * time.Minute / ControlPeriod)

// StartMotionRecording starts recording the commanded motion, one frame per control period;
// earlier frames are dropped.
func (r *Robot) StartMotionRecording() {
	r.mu.Lock()
	r.motionRec, r.recordingMotion = []MotionFrame{}, true
	r.mu.Unlock()
}

// StopMotionRecording stops recording and returns the frames (an error if none was started).
func (r *Robot) StopMotionRecording() ([]MotionFrame, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.recordingMotion {
		return nil, fault.Refusedf("motion recording is not started: call start_recording first")
	}
	r.recordingMotion = false
	frames := r.motionRec
	r.motionRec = nil
	return frames, nil
}

// recordMotion appends a frame of the target when recording: call from the control loop with
// r.mu held.
func (r *Robot) recordMotion(now time.Time) {
	if !r.recordingMotion || len(r.motionRec) >= maxMotionFrames {
		return
	}
	m := r.target.Head.Matrix()
	head := [][]float64{m[0:4:4], m[4:8:8], m[8:12:12], m[12:16:16]}
	r.motionRec = append(r.motionRec, MotionFrame{
		Time: float64(now.UnixNano()) / 1e9, Head: head, Antennas: r.target.Antennas, BodyYaw: r.target.BodyYaw,
	})
}
