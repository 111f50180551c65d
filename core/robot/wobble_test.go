package robot_test

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robothub/robothub/core/robot"
)

// speech is 0.5 s of silence, 0.5 s of a loud 200 Hz tone, then 0.5 s of silence, at SampleRate,
// the same on every channel, interleaved as the speaker takes it.
func speech() []float32 {
	n := robot.SampleRate / 2
	out := make([]float32, 3*n*robot.Channels)
	for i := n; i < 2*n; i++ {
		v := float32(0.5 * math.Sin(2*math.Pi*200*float64(i)/robot.SampleRate))
		for c := range robot.Channels {
			out[i*robot.Channels+c] = v
		}
	}
	return out
}

// headDeviation plays the speech and returns, for each of its three half seconds, how far the
// head moved from its target at most (pitch, rad), sampled every control period.
func headDeviation(t *testing.T, r *robot.Robot) [3]float64 {
	t.Helper()
	start := time.Now()
	if err := r.PushAudio(speech()); err != nil {
		t.Fatal(err)
	}
	var dev [3]float64
	for elapsed := time.Duration(0); elapsed < 1500*time.Millisecond; elapsed = time.Since(start) {
		time.Sleep(robot.ControlPeriod)
		synctest.Wait()
		s := r.State()
		// The half second the command was computed in (at most one control period ago); samples
		// whose command may fall on either side of a change of sound are left out.
		at := time.Since(start)
		part := int(at / (500 * time.Millisecond))
		if edge := at % (500 * time.Millisecond); edge < 2*robot.ControlPeriod || part > 2 {
			continue
		}
		dev[part] = math.Max(dev[part], math.Abs(s.HeadPose.Pitch-s.TargetHeadPose.Pitch))
	}
	return dev
}

// With wobbling on, the head moves while the speaker plays a loud sound, by up to the wobble's
// pitch, and holds its target through the silences before and after; off, it never moves.
func TestWobblingFollowsTheLoudnessOfTheSpeaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newSimRobot(t)
		waitMove(t, r.WakeUp())
		r.SetWobbling(true)
		dev := headDeviation(t, r)
		if dev[0] > 1e-9 || dev[2] > 1e-9 {
			t.Fatalf("the head moved during silence: %.4f rad before the sound, %.4f after", dev[0], dev[2])
		}
		// Full loudness (RMS 0.35, ×3, capped at 1) pitches the head by up to 0.12 rad.
		if dev[1] < 0.08 || dev[1] > 0.12+1e-9 {
			t.Fatalf("during the loud sound the head pitched at most %.4f rad from its target, want 0.08..0.12", dev[1])
		}

		r.SetWobbling(false)
		if dev := headDeviation(t, r); dev != [3]float64{} {
			t.Fatalf("wobbling off, the head moved with the sound: %v", dev)
		}
	})
}
