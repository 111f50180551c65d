package robot

import (
	"math"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/robot/kinematics"
)

// The anchor's poses are 4×4 homogeneous matrices; ours are a translation and roll/pitch/yaw.
// Both describe the same rotation R = Rz(yaw)·Ry(pitch)·Rx(roll) (extrinsic x, y, z, what
// scipy's Rotation.from_euler("xyz", ...) builds), so each converts to the other exactly.

// matrixTolerance is how far a matrix may be from a rigid transform (rounding in a client's
// float32 or printed numbers) and still be taken as one.
const matrixTolerance = 1e-3

// Matrix returns the pose as a row-major 4×4 homogeneous matrix.
func (p HeadPose) Matrix() [16]float64 {
	r := kinematics.Pose(p).Rotation()
	return [16]float64{
		r[0][0], r[0][1], r[0][2], p.X,
		r[1][0], r[1][1], r[1][2], p.Y,
		r[2][0], r[2][1], r[2][2], p.Z,
		0, 0, 0, 1,
	}
}

// PoseFromMatrix converts a row-major 4×4 homogeneous matrix to a pose. It refuses, naming the
// problem, a matrix that is not a rigid transform: a bottom row other than 0 0 0 1, or a rotation
// part that is not orthonormal with determinant 1 (a scaled, skewed or mirrored matrix, or a
// matrix sent in column-major order with a translation).
func PoseFromMatrix(m [16]float64) (HeadPose, error) {
	for i, v := range m {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return HeadPose{}, fault.Invalidf("m[%d] must be a finite number", i)
		}
	}
	if math.Abs(m[12]) > matrixTolerance || math.Abs(m[13]) > matrixTolerance || math.Abs(m[14]) > matrixTolerance || math.Abs(m[15]-1) > matrixTolerance {
		return HeadPose{}, fault.Invalidf("m: the last row of a homogeneous pose matrix must be 0 0 0 1, got %g %g %g %g (16 numbers, row by row)", m[12], m[13], m[14], m[15])
	}
	r := kinematics.Mat3{{m[0], m[1], m[2]}, {m[4], m[5], m[6]}, {m[8], m[9], m[10]}}
	for i := range 3 {
		for j := i; j < 3; j++ {
			dot := r[0][i]*r[0][j] + r[1][i]*r[1][j] + r[2][i]*r[2][j]
			if i == j {
				dot-- // a column's own length is 1
			}
			if math.Abs(dot) > matrixTolerance {
				return HeadPose{}, fault.Invalidf("m: the rotation part (first 3 rows and columns) is not orthonormal: the matrix is not a rigid pose")
			}
		}
	}
	det := r[0][0]*(r[1][1]*r[2][2]-r[1][2]*r[2][1]) - r[0][1]*(r[1][0]*r[2][2]-r[1][2]*r[2][0]) + r[0][2]*(r[1][0]*r[2][1]-r[1][1]*r[2][0])
	if det < 0 {
		return HeadPose{}, fault.Invalidf("m: the rotation part is a reflection (determinant -1), not a rotation")
	}
	return HeadPose(kinematics.PoseOf(r, kinematics.Vec3{m[3], m[7], m[11]})), nil
}
