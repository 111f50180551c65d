package robot

import (
	"math"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/robot/kinematics"
)

// CameraSpecs describes the robot's camera as the anchor's camera specs do: its resolution and
// pinhole intrinsics K (row-major 3×3) with distortion D.
type CameraSpecs struct {
	Name   string     `json:"name"`
	Width  int        `json:"width"`
	Height int        `json:"height"`
	K      [9]float64 `json:"K"`
	D      []float64  `json:"D"`
}

// SimCameraSpecs is the simulated camera: 640×480, a 70° horizontal field of view, no distortion.
var SimCameraSpecs = func() CameraSpecs {
	const w, h = 640, 480
	f := (w / 2) / math.Tan(35*math.Pi/180)
	return CameraSpecs{Name: "sim", Width: w, Height: h, K: [9]float64{f, 0, w / 2, 0, f, h / 2, 0, 0, 1}, D: []float64{0, 0, 0, 0, 0}}
}()

// headToCamera is the camera's rotation in the head frame (optical z forward along the head's x,
// image x to the head's right, image y down), as on the robot.
var headToCamera = kinematics.Mat3{{0, 0, 1}, {-1, 0, 0}, {0, -1, 0}}

// LookAtWorld returns the head pose that points the head's forward (x) axis at the point (x, y, z)
// in metres of the robot's frame (x forward, y left, z up), with the head centred: the rotation
// about the axis perpendicular to both, as the anchor computes it.
func LookAtWorld(x, y, z float64) (HeadPose, error) {
	for _, v := range []float64{x, y, z} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return HeadPose{}, fault.Invalidf("x, y and z must be finite numbers of metres")
		}
	}
	n := math.Sqrt(x*x + y*y + z*z)
	if n < 1e-12 {
		return HeadPose{}, nil
	}
	tx, ty, tz := x/n, y/n, z/n
	// axis = (1,0,0) × t = (0, -tz, ty)
	an := math.Hypot(tz, ty)
	rot := kinematics.Mat3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	switch {
	case an < 1e-8 && tx > 0: // straight ahead: no rotation
	case an < 1e-8: // straight behind: half a turn about z
		rot = kinematics.Mat3{{-1, 0, 0}, {0, -1, 0}, {0, 0, 1}}
	default:
		rot = kinematics.AxisAngle(kinematics.Vec3{0, -tz / an, ty / an}, math.Acos(math.Max(-1, math.Min(1, tx))))
	}
	return HeadPose(kinematics.PoseOf(rot, kinematics.Vec3{})), nil
}

// LookAtImage returns the head pose that looks at pixel (u, v) of the camera image (from the top
// left corner, u to the right, v down) seen from the head pose current.
func LookAtImage(specs CameraSpecs, u, v float64, current HeadPose) (HeadPose, error) {
	if math.IsNaN(u) || math.IsNaN(v) || u < 0 || v < 0 || u >= float64(specs.Width) || v >= float64(specs.Height) {
		return HeadPose{}, fault.Invalidf("u and v must be a pixel of the %d×%d image: 0 <= u < %d, 0 <= v < %d", specs.Width, specs.Height, specs.Width, specs.Height)
	}
	k := specs.K
	ray := kinematics.Vec3{(u - k[2]) / k[0], (v - k[5]) / k[4], 1}
	w := kinematics.Pose(current).Rotation().Mul(headToCamera).Apply(ray)
	return LookAtWorld(w[0], w[1], w[2])
}
