package robot

import (
	"context"
	"math"
	"time"
)

// ShutdownLimit bounds how long Shutdown gives an awake robot to lie down before its motors let go.
const ShutdownLimit = 3 * time.Second

// HeadHolder is implemented by backends whose motors hold the head up with their torque (the
// hardware): closing one lets the head fall, so Shutdown lays it down first.
type HeadHolder interface {
	HoldsHead()
}

// Shutdown closes the Robot as Close does, after laying the head down when the backend's motors
// hold it: a robot whose motors are on (awake, in gravity compensation, some motors limp) is
// moved, under position control and every motor on, to the sleep pose, and the motors let go only
// once it is there, at most ShutdownLimit later. ctx skips the move, or what is left of it: the
// motors let go at once (a second Ctrl-C). It reports whether the robot reached the sleep pose
// (true too when there was nothing to lay down) and Close's error.
func (r *Robot) Shutdown(ctx context.Context) (laidDown bool, err error) {
	if _, ok := r.backend.(HeadHolder); !ok {
		return true, r.Close()
	}
	r.mu.Lock()
	holding := r.mode != MotorsDisabled && !near(r.backend.Read(time.Now()), SleepPose)
	var m *Move
	if holding && ctx.Err() == nil {
		r.setMode(MotorsEnabled) // position control, every motor on, from where it is
		m = r.startMove("goto_sleep", SleepPose, GotoSleepDuration, MinJerk, func(r *Robot) { r.awake = false })
	}
	r.mu.Unlock()
	if !holding {
		return true, r.Close()
	}
	if m != nil {
		r.log.Info("laying the robot down before its motors let go", "limit", ShutdownLimit)
		laidDown = r.settle(ctx, m, time.Now().Add(ShutdownLimit))
	}
	if !laidDown {
		r.log.Warn("the robot's motors let go before it lay down", "skipped", ctx.Err() != nil)
	}
	return laidDown, r.Close()
}

// settle waits until the move m has ended and the joints the backend reads are at its end (the
// sleep pose), until deadline or until ctx is done; it reports whether they got there.
func (r *Robot) settle(ctx context.Context, m *Move, deadline time.Time) bool {
	limit := time.NewTimer(time.Until(deadline))
	defer limit.Stop()
	select {
	case <-m.Done():
	case <-ctx.Done():
		return false
	case <-limit.C:
		return false
	}
	if !m.Completed() {
		return false // another move replaced it
	}
	tick := time.NewTicker(ControlPeriod)
	defer tick.Stop()
	for {
		if near(r.backend.Read(time.Now()), m.steps[len(m.steps)-1].To) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-limit.C:
			return false
		case <-tick.C:
		}
	}
}

// near reports whether the joints a are within a few millimetres and degrees of b.
func near(a, b Joints) bool {
	const metres, radians = 0.003, 0.05
	d := func(x, y, tol float64) bool { return math.Abs(x-y) <= tol }
	return d(a.Head.X, b.Head.X, metres) && d(a.Head.Y, b.Head.Y, metres) && d(a.Head.Z, b.Head.Z, metres) &&
		d(a.Head.Roll, b.Head.Roll, radians) && d(a.Head.Pitch, b.Head.Pitch, radians) && d(a.Head.Yaw, b.Head.Yaw, radians) &&
		d(a.Antennas[0], b.Antennas[0], radians) && d(a.Antennas[1], b.Antennas[1], radians) && d(a.BodyYaw, b.BodyYaw, radians)
}
