package robot_test

import (
	"image"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robothub/robothub/core/robot"
)

// faceAt is a Detector that sees one face at x (-1 left to 1 right of the image).
type faceAt float64

func (f faceAt) Detect(*image.RGBA) ([]robot.Face, error) {
	return []robot.Face{{X: float64(f), Width: 0.2, Score: 0.9}}, nil
}

// A face left of centre turns the head left (a positive yaw, as the public SDK counts it); stopping
// or pausing tracking brings the head back to the app's target, not leaving it where tracking put it.
func TestTrackingTurnsTowardTheFaceAndLetsGoWhenStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := awake(t)
		r.SetDetector(faceAt(-0.5), "")
		if err := r.StartTracking(1); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		if yaw := r.State().HeadPose.Yaw; yaw < 0.2 {
			t.Fatalf("after 2 s the head's yaw is %.3f rad, want it turned left toward the face", yaw)
		}
		if f := r.TrackedFace(); !f.Detected || *f.X != -0.5 {
			t.Fatalf("tracked face %+v", f)
		}
		r.StopTracking()
		time.Sleep(time.Second)
		if yaw := r.State().HeadPose.Yaw; math.Abs(yaw) > 0.01 {
			t.Fatalf("1 s after tracking stopped the head's yaw is %.3f rad, want the app's target 0", yaw)
		}

		if err := r.StartTracking(1); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		if err := r.StartTracking(0); err != nil { // paused
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if yaw := r.State().HeadPose.Yaw; math.Abs(yaw) > 0.01 {
			t.Fatalf("1 s after tracking paused the head's yaw is %.3f rad, want 0", yaw)
		}
		r.StopTracking()
	})
}
