// Package kinematics maps the robot's head pose to the angles of the six motors of its Stewart
// platform and back: an analytical inverse (each leg alone: a motor arm and a rod of fixed lengths
// reaching a point of the head) and a numerical forward (Newton iterations on the six rod lengths).
// The geometry is the robot's published one, embedded.
package kinematics

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
)

// Vec3 is a point or a direction.
type Vec3 [3]float64

// Mat3 is a rotation, row-major.
type Mat3 [3][3]float64

// Transform maps coordinates of one frame into another: x' = R x + T.
type Transform struct {
	R Mat3
	T Vec3
}

func (a Vec3) add(b Vec3) Vec3      { return Vec3{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }
func (a Vec3) sub(b Vec3) Vec3      { return Vec3{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func (a Vec3) dot(b Vec3) float64   { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }
func (a Vec3) scale(s float64) Vec3 { return Vec3{a[0] * s, a[1] * s, a[2] * s} }
func (a Vec3) cross(b Vec3) Vec3 {
	return Vec3{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

// Apply rotates v.
func (m Mat3) Apply(v Vec3) Vec3 {
	return Vec3{m[0][0]*v[0] + m[0][1]*v[1] + m[0][2]*v[2], m[1][0]*v[0] + m[1][1]*v[1] + m[1][2]*v[2],
		m[2][0]*v[0] + m[2][1]*v[1] + m[2][2]*v[2]}
}

// Mul is the product m·n.
func (m Mat3) Mul(n Mat3) (out Mat3) {
	for i := range 3 {
		for j := range 3 {
			out[i][j] = m[i][0]*n[0][j] + m[i][1]*n[1][j] + m[i][2]*n[2][j]
		}
	}
	return out
}

// Apply maps point v.
func (t Transform) Apply(v Vec3) Vec3 { return t.R.Apply(v).add(t.T) }

func rotZ(a float64) Mat3 {
	c, s := math.Cos(a), math.Sin(a)
	return Mat3{{c, -s, 0}, {s, c, 0}, {0, 0, 1}}
}

// rotation is the rotation by |w| radians about w.
func rotation(w Vec3) Mat3 {
	a := math.Sqrt(w.dot(w))
	if a < 1e-15 {
		return Mat3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	}
	return AxisAngle(w.scale(1/a), a)
}

// AxisAngle is the rotation by a radians about the unit axis k (Rodrigues).
func AxisAngle(k Vec3, a float64) Mat3 {
	c, s, v := math.Cos(a), math.Sin(a), 1-math.Cos(a)
	return Mat3{
		{c + k[0]*k[0]*v, k[0]*k[1]*v - k[2]*s, k[0]*k[2]*v + k[1]*s},
		{k[1]*k[0]*v + k[2]*s, c + k[1]*k[1]*v, k[1]*k[2]*v - k[0]*s},
		{k[2]*k[0]*v - k[1]*s, k[2]*k[1]*v + k[0]*s, c + k[2]*k[2]*v},
	}
}

// Pose is the head's pose relative to its rest pose, in the world frame (the body yaw included):
// a translation in metres and roll, pitch, yaw in radians, applied about the fixed x, y, z axes in
// that order.
type Pose struct {
	X, Y, Z, Roll, Pitch, Yaw float64
}

// Rotation is the pose's rotation matrix, Rz(yaw)·Ry(pitch)·Rx(roll).
func (p Pose) Rotation() Mat3 {
	cr, sr := math.Cos(p.Roll), math.Sin(p.Roll)
	cp, sp := math.Cos(p.Pitch), math.Sin(p.Pitch)
	rx := Mat3{{1, 0, 0}, {0, cr, -sr}, {0, sr, cr}}
	ry := Mat3{{cp, 0, sp}, {0, 1, 0}, {-sp, 0, cp}}
	return rotZ(p.Yaw).Mul(ry).Mul(rx)
}

// PoseOf reads a pose back from a rotation and a translation relative to rest.
func PoseOf(r Mat3, t Vec3) Pose {
	p := Pose{X: t[0], Y: t[1], Z: t[2], Pitch: math.Asin(math.Max(-1, math.Min(1, -r[2][0])))}
	if math.Abs(r[2][0]) < 1-1e-9 {
		p.Roll, p.Yaw = math.Atan2(r[2][1], r[2][2]), math.Atan2(r[1][0], r[0][0])
	} else {
		// Gimbal lock (pitch ±90°): roll and yaw turn about the same axis; put it all in yaw.
		p.Yaw = math.Atan2(-r[0][1], r[1][1])
	}
	return p
}

// Leg is one leg of the platform: a motor whose arm turns in the xy plane of its frame, and a rod
// from the arm's end to an anchor on the head.
type Leg struct {
	Name           string
	MotorFromWorld Transform // world (body) coordinates to the motor's frame
	Anchor         Vec3      // in the head's frame
	Elbow          float64   // +1 or -1: which of the two arm angles reaching the anchor is used
}

// Geometry is the platform: six legs, their arm and rod lengths, and the height of the head's
// frame above the body's at rest.
type Geometry struct {
	ArmLength, RodLength, HeadZOffset float64
	Legs                              [6]Leg
}

//go:embed geometry.json
var geometryJSON []byte

// Default is the robot's geometry, parsed at first use: every program that links the package
// (robothub --version included) parsed it at start (0.1-1.1 ms, GODEBUG=inittrace=1; issue 31).
var Default = sync.OnceValue(func() *Geometry { return mustParse(geometryJSON) })

func mustParse(data []byte) *Geometry {
	var f struct {
		ArmLength   float64 `json:"arm_length"`
		RodLength   float64 `json:"rod_length"`
		HeadZOffset float64 `json:"head_z_offset"`
		Legs        []struct {
			Name           string        `json:"name"`
			Elbow          float64       `json:"elbow"`
			Anchor         Vec3          `json:"platform_anchor"`
			MotorFromWorld [3][4]float64 `json:"motor_from_world"`
		} `json:"legs"`
	}
	if err := json.Unmarshal(data, &f); err != nil || len(f.Legs) != 6 {
		panic(fmt.Sprintf("kinematics: embedded geometry: %v (%d legs)", err, len(f.Legs)))
	}
	g := &Geometry{ArmLength: f.ArmLength, RodLength: f.RodLength, HeadZOffset: f.HeadZOffset}
	for i, l := range f.Legs {
		m := l.MotorFromWorld
		g.Legs[i] = Leg{Name: l.Name, Elbow: l.Elbow, Anchor: l.Anchor, MotorFromWorld: Transform{
			R: Mat3{{m[0][0], m[0][1], m[0][2]}, {m[1][0], m[1][1], m[1][2]}, {m[2][0], m[2][1], m[2][2]}},
			T: Vec3{m[0][3], m[1][3], m[2][3]},
		}}
	}
	return g
}

// UnreachableError says that a leg cannot reach its anchor for a pose: the pose is outside the
// platform's workspace.
type UnreachableError struct{ Leg string }

func (e *UnreachableError) Error() string {
	return "leg " + e.Leg + " cannot reach it (its rod would have to stretch or its arm bend past straight)"
}

// bodyFrame is the head's frame in the body's frame for a world pose and a body yaw: the body's
// rotation is taken off, and the rest height added.
func (g *Geometry) bodyFrame(p Pose, bodyYaw float64) Transform {
	undo := rotZ(-bodyYaw)
	return Transform{R: undo.Mul(p.Rotation()), T: undo.Apply(Vec3{p.X, p.Y, p.Z + g.HeadZOffset})}
}

// Inverse returns the six motor angles (radians) that put the head in pose p with the body turned
// by bodyYaw, or an *UnreachableError naming a leg that cannot.
func (g *Geometry) Inverse(p Pose, bodyYaw float64) (angles [6]float64, err error) {
	head := g.bodyFrame(p, bodyYaw)
	rs, rp := g.ArmLength, g.RodLength
	for i, leg := range g.Legs {
		q := leg.MotorFromWorld.Apply(head.Apply(leg.Anchor))
		// The arm's end (rs cos θ, rs sin θ, 0) is rp from q: a cos θ + b sin θ = c. With
		// t = tan(θ/2) this is a quadratic in t, whose two roots are the two elbows.
		a, b := 2*rs*q[0], 2*rs*q[1]
		c := q.dot(q) + rs*rs - rp*rp
		disc := a*a + b*b - c*c
		if disc < 0 || math.IsNaN(disc) {
			return angles, &UnreachableError{Leg: leg.Name}
		}
		angles[i] = wrap(2 * math.Atan2(b+leg.Elbow*math.Sqrt(disc), c+a))
	}
	return angles, nil
}

func wrap(a float64) float64 { return a - 2*math.Pi*math.Floor((a+math.Pi)/(2*math.Pi)) }

// ErrNoConvergence means the forward kinematics found no head pose for the angles.
var ErrNoConvergence = errors.New("kinematics: forward kinematics did not converge")

// Forward returns the head pose that the six motor angles give with the body turned by bodyYaw.
// guess is where the search starts: the previous pose, so that it converges in a few iterations
// and stays on the same of the platform's assembly modes.
func (g *Geometry) Forward(angles [6]float64, bodyYaw float64, guess Pose) (Pose, error) {
	head := g.bodyFrame(guess, bodyYaw)
	var arms [6]Vec3
	for i, leg := range g.Legs {
		// The arm's end, in the body's frame: the motor frame's inverse is its transpose.
		end := Vec3{g.ArmLength * math.Cos(angles[i]), g.ArmLength * math.Sin(angles[i]), 0}.sub(leg.MotorFromWorld.T)
		r := leg.MotorFromWorld.R
		arms[i] = Vec3{r[0][0]*end[0] + r[1][0]*end[1] + r[2][0]*end[2], r[0][1]*end[0] + r[1][1]*end[1] + r[2][1]*end[2],
			r[0][2]*end[0] + r[1][2]*end[1] + r[2][2]*end[2]}
	}
	// residuals are |anchor - arm end|² - rod², zero when every rod has its length.
	residuals := func(h Transform) (res [6]float64, norm float64) {
		for i, leg := range g.Legs {
			d := h.Apply(leg.Anchor).sub(arms[i])
			res[i] = d.dot(d) - g.RodLength*g.RodLength
			norm += res[i] * res[i]
		}
		return res, norm
	}
	res, norm := residuals(head)
	for range 50 {
		if norm < 1e-26 {
			break
		}
		// Jacobian of the residuals for a move dt of the head and a small rotation w applied to
		// it: d(res_i) = 2 d·dt + 2 (R anchor × d)·w.
		var jac [6][7]float64
		for i, leg := range g.Legs {
			ra := head.R.Apply(leg.Anchor)
			d := ra.add(head.T).sub(arms[i])
			c := ra.cross(d)
			jac[i] = [7]float64{2 * d[0], 2 * d[1], 2 * d[2], 2 * c[0], 2 * c[1], 2 * c[2], -res[i]}
		}
		step, ok := solve6(jac)
		if !ok {
			return Pose{}, ErrNoConvergence
		}
		// A full Newton step can overshoot far from the solution: halve it until it helps.
		improved := false
		for range 20 {
			next := Transform{R: rotation(Vec3{step[3], step[4], step[5]}).Mul(head.R), T: head.T.add(Vec3{step[0], step[1], step[2]})}
			if r, n := residuals(next); n < norm {
				head, res, norm, improved = next, r, n, true
				break
			}
			for k := range step {
				step[k] /= 2
			}
		}
		if !improved {
			break // at the limit of float64 precision
		}
	}
	// 1e-20 is about 1e-9 m of rod length.
	if norm > 1e-20 {
		return Pose{}, ErrNoConvergence
	}
	undo := rotZ(bodyYaw)
	t := undo.Apply(head.T)
	t[2] -= g.HeadZOffset
	return PoseOf(undo.Mul(head.R), t), nil
}

// solve6 solves the 6×6 system in m's first six columns for the right-hand side in its seventh,
// by Gaussian elimination with partial pivoting.
func solve6(m [6][7]float64) (x [6]float64, ok bool) {
	for col := range 6 {
		pivot := col
		for r := col + 1; r < 6; r++ {
			if math.Abs(m[r][col]) > math.Abs(m[pivot][col]) {
				pivot = r
			}
		}
		if math.Abs(m[pivot][col]) < 1e-18 {
			return x, false
		}
		m[col], m[pivot] = m[pivot], m[col]
		for r := col + 1; r < 6; r++ {
			f := m[r][col] / m[col][col]
			for c := col; c < 7; c++ {
				m[r][c] -= f * m[col][c]
			}
		}
	}
	for r := 5; r >= 0; r-- {
		s := m[r][6]
		for c := r + 1; c < 6; c++ {
			s -= m[r][c] * x[c]
		}
		x[r] = s / m[r][r]
	}
	return x, true
}
