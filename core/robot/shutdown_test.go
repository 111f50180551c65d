package robot_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robothub/robothub/core/robot"
)

// heldSim is the simulation with motors that hold the head, as the hardware's do: it records the
// pose and the mode it had when it was closed (its motors let go).
type heldSim struct {
	*robot.Sim
	mu       sync.Mutex
	mode     robot.MotorMode
	closedAt *robot.Joints
	modeAt   robot.MotorMode
}

func (h *heldSim) HoldsHead() {}

func (h *heldSim) SetMotorMode(mode robot.MotorMode) {
	h.mu.Lock()
	h.mode = mode
	h.mu.Unlock()
	h.Sim.SetMotorMode(mode)
}

func (h *heldSim) Close() error {
	j := h.Sim.Read(time.Now())
	h.mu.Lock()
	h.closedAt, h.modeAt = &j, h.mode
	h.mu.Unlock()
	return h.Sim.Close()
}

func jointsNear(a, b robot.Joints, tol float64) bool {
	return math.Abs(a.Head.Z-b.Head.Z) < tol && math.Abs(a.Head.Pitch-b.Head.Pitch) < tol && math.Abs(a.Head.Yaw-b.Head.Yaw) < tol &&
		math.Abs(a.Antennas[0]-b.Antennas[0]) < tol && math.Abs(a.Antennas[1]-b.Antennas[1]) < tol && math.Abs(a.BodyYaw-b.BodyYaw) < tol
}

// Stopped while awake, the robot lies down before its motors let go: a smooth move to the sleep
// pose under position control, within ShutdownLimit.
func TestShutdownLaysTheHeadDownFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &heldSim{Sim: robot.NewSim()}
		r := robot.New(b, nil)
		<-r.WakeUp().Done()
		head := robot.HeadPose{Yaw: 0.4, Pitch: -0.2}
		if err := r.SetTarget(robot.Target{Head: &head}); err != nil {
			t.Fatal(err)
		}
		// Gravity compensation and a limp antenna: the move must still be made, on every motor.
		if err := r.SetMotorMode(robot.MotorsGravityCompensation); err != nil {
			t.Fatal(err)
		}
		if err := r.SetMotorTorque([]string{"left_antenna"}, false); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		laid, err := r.Shutdown(context.Background())
		if err != nil || !laid {
			t.Fatalf("shutdown: laid down %v, %v", laid, err)
		}
		if took := time.Since(start); took > robot.ShutdownLimit {
			t.Errorf("shutdown took %v, beyond %v", took, robot.ShutdownLimit)
		}
		if b.closedAt == nil || !jointsNear(*b.closedAt, robot.SleepPose, 0.01) || b.modeAt != robot.MotorsEnabled {
			t.Fatalf("closed at %+v in mode %s; want the sleep pose %+v, held until then", b.closedAt, b.modeAt, robot.SleepPose)
		}
	})
}

// A second signal (ctx) skips what is left of the move: the motors let go at once.
func TestShutdownSkipsTheMoveWhenHurried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &heldSim{Sim: robot.NewSim()}
		r := robot.New(b, nil)
		<-r.WakeUp().Done()
		ctx, hurry := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, hurry)
		start := time.Now()
		laid, err := r.Shutdown(ctx)
		if err != nil || laid {
			t.Fatalf("hurried shutdown: laid down %v, %v; want false", laid, err)
		}
		if took := time.Since(start); took != 200*time.Millisecond {
			t.Errorf("hurried shutdown took %v, want 200ms: it stops at the second signal", took)
		}
		if jointsNear(*b.closedAt, robot.SleepPose, 0.01) {
			t.Errorf("closed at the sleep pose %+v: the move was not cut short", *b.closedAt)
		}
	})
}

// Asleep (motors off), or on a backend whose motors hold nothing (the simulation), Shutdown is
// Close: nothing moves.
func TestShutdownMovesNothingWhenNothingIsHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &heldSim{Sim: robot.NewSim()}
		r := robot.New(b, nil)
		start := time.Now()
		if laid, err := r.Shutdown(context.Background()); err != nil || !laid || time.Since(start) != 0 {
			t.Fatalf("asleep: laid down %v, %v after %v; want at once", laid, err, time.Since(start))
		}
		sim := robot.New(robot.NewSim(), nil)
		<-sim.WakeUp().Done()
		start = time.Now()
		if _, err := sim.Shutdown(context.Background()); err != nil || time.Since(start) != 0 {
			t.Fatalf("the simulation: %v after %v; want it closed at once", err, time.Since(start))
		}
	})
}
