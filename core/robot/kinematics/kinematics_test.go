package kinematics

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

const deg = math.Pi / 180

// roundTripPoses are the poses the issue names: rest, ±30° of roll, pitch and yaw, ±1 cm along
// each axis, each also with the body turned 45° (the head's yaw then turns with it).
func roundTripPoses() (cases []struct {
	name    string
	pose    Pose
	bodyYaw float64
}) {
	poses := map[string]Pose{"rest": {}}
	for _, s := range []float64{1, -1} {
		poses[fmt.Sprintf("roll %+.0f°", 30*s)] = Pose{Roll: 30 * deg * s}
		poses[fmt.Sprintf("pitch %+.0f°", 30*s)] = Pose{Pitch: 30 * deg * s}
		poses[fmt.Sprintf("yaw %+.0f°", 30*s)] = Pose{Yaw: 30 * deg * s}
		poses[fmt.Sprintf("x %+.0f cm", s)] = Pose{X: 0.01 * s}
		poses[fmt.Sprintf("y %+.0f cm", s)] = Pose{Y: 0.01 * s}
		poses[fmt.Sprintf("z %+.0f cm", s)] = Pose{Z: 0.01 * s}
	}
	poses["all at once"] = Pose{X: 0.005, Y: -0.005, Z: 0.005, Roll: 10 * deg, Pitch: -10 * deg, Yaw: 15 * deg}
	for name, p := range poses {
		cases = append(cases, struct {
			name    string
			pose    Pose
			bodyYaw float64
		}{name, p, 0})
		turned := p
		turned.Yaw += 45 * deg // the head faces where the body turned
		cases = append(cases, struct {
			name    string
			pose    Pose
			bodyYaw float64
		}{name + ", body yaw 45°", turned, 45 * deg})
	}
	return cases
}

func TestInverseThenForwardRoundTrips(t *testing.T) {
	g := Default()
	for _, c := range roundTripPoses() {
		angles, err := g.Inverse(c.pose, c.bodyYaw)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		// From the rest pose, as the daemon's first reading does.
		got, err := g.Forward(angles, c.bodyYaw, Pose{Yaw: c.bodyYaw})
		if err != nil {
			t.Errorf("%s: forward: %v", c.name, err)
			continue
		}
		want := []float64{c.pose.X, c.pose.Y, c.pose.Z, c.pose.Roll, c.pose.Pitch, c.pose.Yaw}
		have := []float64{got.X, got.Y, got.Z, got.Roll, got.Pitch, got.Yaw}
		for i := range want {
			if math.Abs(wrap(want[i]-have[i])) > 1e-3 {
				t.Errorf("%s: forward(inverse) = %+v, want %+v", c.name, got, c.pose)
				break
			}
		}
	}
}

// Each leg's arm end, at the angle the inverse gives, is exactly a rod's length from its anchor on
// the head: the geometric fact the inverse solves for, checked without the inverse's algebra.
func TestInverseKeepsEveryRodAtItsLength(t *testing.T) {
	g := Default()
	for _, c := range roundTripPoses() {
		angles, err := g.Inverse(c.pose, c.bodyYaw)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		head := g.bodyFrame(c.pose, c.bodyYaw)
		for i, leg := range g.Legs {
			anchor := leg.MotorFromWorld.Apply(head.Apply(leg.Anchor))
			arm := Vec3{g.ArmLength * math.Cos(angles[i]), g.ArmLength * math.Sin(angles[i]), 0}
			d := anchor.sub(arm)
			if rod := math.Sqrt(d.dot(d)); math.Abs(rod-g.RodLength) > 1e-9 {
				t.Errorf("%s: %s rod is %.9f m, want %.9f", c.name, leg.Name, rod, g.RodLength)
			}
		}
	}
}

func TestUnreachablePosesAreRefused(t *testing.T) {
	for name, p := range map[string]Pose{
		"5 cm up":           {Z: 0.05},
		"8 cm sideways":     {Y: 0.08},
		"70° of roll":       {Roll: 70 * deg},
		"40° roll, 3 cm up": {Roll: 40 * deg, Z: 0.03},
		"10 cm down":        {Z: -0.10},
	} {
		_, err := Default().Inverse(p, 0)
		var ue *UnreachableError
		if !errors.As(err, &ue) || ue.Leg == "" {
			t.Errorf("%s: err = %v, want an UnreachableError naming a leg", name, err)
		}
	}
}

func BenchmarkInverse(b *testing.B) {
	p := Pose{X: 0.005, Z: 0.005, Roll: 0.1, Pitch: -0.1, Yaw: 0.2}
	for b.Loop() {
		if _, err := Default().Inverse(p, 0.3); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkForward measures forward kinematics as the control loop uses it: warm-started from the
// previous tick's pose, while the head moves (about 1° of yaw per tick at 50 Hz).
func BenchmarkForward(b *testing.B) {
	const n = 64
	var angles [n][6]float64
	for i := range n {
		a, err := Default().Inverse(Pose{Z: 0.005, Pitch: 0.1, Yaw: 0.3 * math.Sin(float64(i)*2*math.Pi/n)}, 0)
		if err != nil {
			b.Fatal(err)
		}
		angles[i] = a
	}
	prev := Pose{}
	i := 0
	for b.Loop() {
		p, err := Default().Forward(angles[i%n], 0, prev)
		if err != nil {
			b.Fatal(err)
		}
		prev = p
		i++
	}
}
