package robot_test

import (
	"math"
	"testing"
	"time"

	"github.com/robothub/robothub/core/robot"
)

// A daemon update hands the robot over: the next Robot holds the same targets, mode and
// wakefulness, with no wake-up move, and the simulated head gets there.
func TestHoldThenAdoptKeepsThePose(t *testing.T) {
	rb := robot.New(robot.NewSim(), nil)
	<-rb.WakeUp().Done()
	head := robot.DefaultPose.Head
	head.Yaw = 0.3
	if err := rb.SetTarget(robot.Target{Head: &head}); err != nil {
		t.Fatal(err)
	}
	held, released, err := rb.Hold()
	if err != nil || !held.Awake || held.Mode != robot.MotorsEnabled || held.Target.Head.Yaw != 0.3 || time.Since(released) > time.Second {
		t.Fatalf("held %+v at %v, err %v", held, released, err)
	}
	next := robot.Adopt(robot.NewSim(), held, nil)
	defer next.Close()
	st := next.State()
	if !st.Awake || st.Move != nil || st.ControlMode != robot.MotorsEnabled || st.TargetHeadPose.Yaw != 0.3 {
		t.Fatalf("adopted state: awake %v move %v mode %v target yaw %v", st.Awake, st.Move, st.ControlMode, st.TargetHeadPose.Yaw)
	}
	deadline := time.Now().Add(3 * time.Second)
	for math.Abs(next.State().HeadPose.Yaw-0.3) > 0.01 {
		if time.Now().After(deadline) {
			t.Fatalf("the simulated head stays at yaw %v, want 0.3", next.State().HeadPose.Yaw)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An asleep robot stays asleep across a hand-over: no wake-up, the motors as they were.
func TestHoldThenAdoptKeepsAnAsleepRobotAsleep(t *testing.T) {
	rb := robot.New(robot.NewSim(), nil)
	held, _, err := rb.Hold()
	if err != nil || held.Awake || held.Mode != robot.MotorsDisabled {
		t.Fatalf("held %+v, err %v", held, err)
	}
	next := robot.Adopt(robot.NewSim(), held, nil)
	defer next.Close()
	if st := next.State(); st.Awake || st.Move != nil || st.ControlMode != robot.MotorsDisabled {
		t.Fatalf("adopted: awake %v move %v mode %v, want asleep and limp as before", st.Awake, st.Move, st.ControlMode)
	}
}
