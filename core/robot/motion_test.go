package robot_test

import (
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/robot"
)

func close9(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// The anchor's 4×4 poses and ours describe the same rotation: converting either way is exact, and
// a matrix that is not a rigid pose is refused, never read as zero.
func TestPoseMatrixRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := robot.HeadPose{X: 0.01, Y: -0.02, Z: 0.005, Roll: 0.1, Pitch: -0.2, Yaw: 0.7}
		got, err := robot.PoseFromMatrix(p.Matrix())
		if err != nil || !close9(got.X, p.X) || !close9(got.Y, p.Y) || !close9(got.Z, p.Z) || !close9(got.Roll, p.Roll) || !close9(got.Pitch, p.Pitch) || !close9(got.Yaw, p.Yaw) {
			t.Fatalf("round trip: %+v %v, want %+v", got, err, p)
		}
		// scipy: R.from_euler("xyz", [0, 0, 30], degrees=True) is a yaw of 30° about z.
		c, s := math.Cos(math.Pi/6), math.Sin(math.Pi/6)
		yaw30 := [16]float64{c, -s, 0, 0, s, c, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}
		if got, err := robot.PoseFromMatrix(yaw30); err != nil || !close9(got.Yaw, math.Pi/6) || got.Roll != 0 || got.Pitch != 0 {
			t.Fatalf("yaw 30°: %+v %v", got, err)
		}
		bad := map[string][16]float64{
			"zero matrix":  {},
			"scaled":       {2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1},
			"mirrored":     {-1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1},
			"column-major": {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.01, 0, 0, 1},
			"not a number": {math.NaN(), 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1},
		}
		for name, m := range bad {
			if _, err := robot.PoseFromMatrix(m); !errors.Is(err, fault.ErrInvalid) {
				t.Errorf("%s: %v, want invalid", name, err)
			}
		}
	})
}

func TestLookAt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := robot.LookAtWorld(1, 1, 0) // 45° to the left
		if err != nil || !close9(p.Yaw, math.Pi/4) || math.Abs(p.Pitch) > 1e-9 || math.Abs(p.Roll) > 1e-9 {
			t.Fatalf("look at (1,1,0): %+v %v", p, err)
		}
		p, _ = robot.LookAtWorld(1, 0, -1) // 45° down: a positive pitch
		if !close9(p.Pitch, math.Pi/4) || math.Abs(p.Yaw) > 1e-9 {
			t.Fatalf("look at (1,0,-1): %+v", p)
		}
		specs := robot.SimCameraSpecs
		centre, err := robot.LookAtImage(specs, float64(specs.Width)/2, float64(specs.Height)/2, robot.HeadPose{})
		if err != nil || math.Abs(centre.Yaw) > 1e-9 || math.Abs(centre.Pitch) > 1e-9 {
			t.Fatalf("the image centre from rest: %+v %v", centre, err)
		}
		right, _ := robot.LookAtImage(specs, float64(specs.Width)-1, float64(specs.Height)/2, robot.HeadPose{})
		if right.Yaw > -0.5 || right.Yaw < -0.7 { // about -35°: half the field of view, to the right
			t.Fatalf("the right edge: yaw %f", right.Yaw)
		}
		if _, err := robot.LookAtImage(specs, -1, 10, robot.HeadPose{}); !errors.Is(err, fault.ErrInvalid) {
			t.Fatalf("a pixel outside the image: %v", err)
		}
	})
}

func awake(t *testing.T) *robot.Robot {
	t.Helper()
	r := robot.New(robot.NewSim(), nil)
	t.Cleanup(func() { r.Close() })
	<-r.WakeUp().Done()
	return r
}

// Automatic body yaw turns the body when the head must turn further than it can alone; off,
// the head stops 65° from the body.
func TestAutomaticBodyYaw(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := awake(t)
		if !r.AutomaticBodyYaw() {
			t.Fatal("automatic body yaw is off by default")
		}
		yaw := 100 * math.Pi / 180
		if err := r.SetTarget(robot.Target{Head: &robot.HeadPose{Yaw: yaw}}); err != nil {
			t.Fatal(err)
		}
		s := r.State()
		if !close9(s.TargetHeadPose.Yaw, yaw) || !close9(s.TargetBodyYaw, 35*math.Pi/180) {
			t.Fatalf("head yaw 100° with automatic body yaw: head %f body %f", s.TargetHeadPose.Yaw, s.TargetBodyYaw)
		}
		r.SetAutomaticBodyYaw(false)
		zero := 0.0
		if err := r.SetTarget(robot.Target{Head: &robot.HeadPose{Yaw: yaw}, BodyYaw: &zero}); err != nil {
			t.Fatal(err)
		}
		if s := r.State(); !close9(s.TargetHeadPose.Yaw, 65*math.Pi/180) || s.TargetBodyYaw != 0 {
			t.Fatalf("without automatic body yaw: head %f body %f", s.TargetHeadPose.Yaw, s.TargetBodyYaw)
		}
	})
}

// A limp antenna stays where it is while the other follows its target.
func TestPerMotorTorque(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := awake(t)
		if err := r.SetMotorTorque([]string{"left_antenna"}, false); err != nil {
			t.Fatal(err)
		}
		if tq := r.MotorTorque(); tq["left_antenna"] || !tq["right_antenna"] || !tq["stewart_1"] {
			t.Fatalf("torque %v", tq)
		}
		before := r.State().Antennas
		if err := r.SetTarget(robot.Target{Antennas: &[2]float64{1, 1}}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(2 * time.Second)
		for r.State().Antennas[0] != 1 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		// Antennas are [right, left], as in the anchor SDK.
		s := r.State()
		if s.Antennas[0] != 1 || s.Antennas[1] != before[1] {
			t.Fatalf("antennas %v (before %v): the right one (index 0) must reach 1, the limp left one stay", s.Antennas, before)
		}
		if err := r.SetMotorTorque([]string{"tail"}, true); !errors.Is(err, fault.ErrInvalid) {
			t.Fatalf("unknown motor: %v", err)
		}
		if err := r.SetMotorMode(robot.MotorsEnabled); err != nil || !r.MotorTorque()["left_antenna"] {
			t.Fatalf("enabling all motors: %v %v", err, r.MotorTorque())
		}
	})
}

func TestMotionRecording(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := awake(t)
		if _, err := r.StopMotionRecording(); !errors.Is(err, fault.ErrRefused) {
			t.Fatalf("stop without start: %v", err)
		}
		r.StartMotionRecording()
		m, err := r.Goto(robot.Target{Antennas: &[2]float64{0.5, -0.5}}, 200*time.Millisecond, robot.Ease)
		if err != nil {
			t.Fatal(err)
		}
		<-m.Done()
		frames, err := r.StopMotionRecording()
		if err != nil || len(frames) < 10 {
			t.Fatalf("frames: %d %v", len(frames), err)
		}
		last := frames[len(frames)-1]
		if last.Antennas != [2]float64{0.5, -0.5} || len(last.Head) != 4 || last.Head[3][3] != 1 || last.Time <= frames[0].Time {
			t.Fatalf("last frame %+v", last)
		}
	})
}

func TestCameraTestPattern(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := awake(t)
		a, err := r.CameraFrame()
		if err != nil {
			t.Fatal(err)
		}
		if b := a.Bounds(); b.Dx() != 640 || b.Dy() != 480 {
			t.Fatalf("frame size %v", b)
		}
		if c := a.RGBAAt(600, 10); c.R != 0 || c.G != 0 || c.B != 0 { // the last bar is black
			t.Fatalf("pixel (600,10) %v", c)
		}
		if c := a.RGBAAt(10, 10); c.R != 255 || c.G != 255 || c.B != 255 {
			t.Fatalf("pixel (10,10) %v", c)
		}
		if _, err := robot.ParseInterpolation("ease_in_out"); err != nil {
			t.Fatal(err)
		}
	})
}
