package robotapi

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/core/robot/kinematics"

	"github.com/robothub/robothub/robotd/httpapi"
)

// The public daemon's kinematics routes: what the head's kinematics is, and a description of the
// robot that a 3D viewer draws (URDF with STL meshes). The robot's own meshes are the maker's; this
// daemon describes the robot with simple solids of its real sizes: a cylinder for the body, a box
// for the head at the platform's height, thin boxes for the antennas.

func (s *Handlers) KinematicsInfo(w http.ResponseWriter, r *http.Request) {
	g := kinematics.Default()
	legs := make([]map[string]any, len(g.Legs))
	for i, l := range g.Legs {
		legs[i] = map[string]any{"name": l.Name, "elbow": l.Elbow, "platform_anchor": l.Anchor}
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"info": map[string]any{
		"engine":        "analytical inverse, Newton forward (core/robot/kinematics)",
		"arm_length":    g.ArmLength,
		"rod_length":    g.RodLength,
		"head_z_offset": g.HeadZOffset,
		"legs":          legs,
		"motors":        robot.MotorNames,
		"head_joints":   append([]string{"body_rotation"}, robot.MotorNames[1:7]...),
	}})
}

// meshes are the robot's parts as solids: name -> half sizes (x, y, z) of a box, in metres.
var meshes = map[string][3]float64{
	"body.stl":    {0.055, 0.055, 0.07},
	"head.stl":    {0.045, 0.06, 0.035},
	"antenna.stl": {0.003, 0.003, 0.05},
}

func (s *Handlers) URDF(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"urdf": robotURDF()})
}

// robotURDF describes the robot: the body turning about z, the head on it at the platform's rest
// height, and the two antennas on the head, each part with its mesh (served by /api/kinematics/stl).
func robotURDF() string {
	g := kinematics.Default()
	var b strings.Builder
	link := func(name, mesh string, z float64) {
		fmt.Fprintf(&b, "  <link name=%q>\n    <visual>\n      <origin xyz=\"0 0 %g\" rpy=\"0 0 0\"/>\n      <geometry><mesh filename=\"package://assets/%s\"/></geometry>\n    </visual>\n  </link>\n", name, z, mesh)
	}
	joint := func(name, kind, parent, child string, xyz [3]float64, limit [2]float64) {
		fmt.Fprintf(&b, "  <joint name=%q type=%q>\n    <parent link=%q/>\n    <child link=%q/>\n    <origin xyz=\"%g %g %g\" rpy=\"0 0 0\"/>\n    <axis xyz=\"0 0 1\"/>\n", name, kind, parent, child, xyz[0], xyz[1], xyz[2])
		if kind == "revolute" {
			fmt.Fprintf(&b, "    <limit lower=\"%g\" upper=\"%g\" effort=\"1\" velocity=\"10\"/>\n", limit[0], limit[1])
		}
		b.WriteString("  </joint>\n")
	}
	b.WriteString("<?xml version=\"1.0\"?>\n<robot name=\"robot\">\n  <link name=\"world\"/>\n")
	link("body", "body.stl", 0.07)
	joint("body_rotation", "revolute", "world", "body", [3]float64{}, [2]float64{-2.8, 2.8})
	link("head", "head.stl", 0)
	joint("head_platform", "fixed", "body", "head", [3]float64{0, 0, g.HeadZOffset}, [2]float64{})
	link("right_antenna_link", "antenna.stl", 0.05)
	joint("right_antenna", "revolute", "head", "right_antenna_link", [3]float64{-0.01, -0.04, 0.035}, [2]float64{-math.Pi, math.Pi})
	link("left_antenna_link", "antenna.stl", 0.05)
	joint("left_antenna", "revolute", "head", "left_antenna_link", [3]float64{-0.01, 0.04, 0.035}, [2]float64{-math.Pi, math.Pi})
	b.WriteString("</robot>\n")
	return b.String()
}

func (s *Handlers) STL(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("filename")
	half, ok := meshes[name]
	if !ok {
		names := slices.Sorted(maps.Keys(meshes))
		httpapi.WriteJSON(w, http.StatusNotFound, httpapi.Detail{Detail: fmt.Sprintf("no mesh %q: the robot's meshes are %s", httpapi.Truncate(name), strings.Join(names, ", "))})
		return
	}
	data := boxSTL(half)
	w.Header().Set("Content-Type", "model/stl")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}

// boxSTL is a binary STL of a box centred on the origin with the given half sizes: 12 triangles.
func boxSTL(half [3]float64) []byte {
	var buf bytes.Buffer
	buf.Write(make([]byte, 80)) // header
	_ = binary.Write(&buf, binary.LittleEndian, uint32(12))
	for axis := range 3 {
		for _, sign := range []float64{-1, 1} {
			u, v := (axis+1)%3, (axis+2)%3
			corner := func(a, b float64) [3]float32 {
				var p [3]float32
				p[axis] = float32(sign * half[axis])
				p[u] = float32(a * half[u])
				p[v] = float32(b * half[v])
				return p
			}
			var n [3]float32
			n[axis] = float32(sign)
			quad := [4][3]float32{corner(-1, -1), corner(1, -1), corner(1, 1), corner(-1, 1)}
			if sign < 0 { // counter-clockwise seen from outside
				quad[1], quad[3] = quad[3], quad[1]
			}
			for _, tri := range [2][3]int{{0, 1, 2}, {0, 2, 3}} {
				_ = binary.Write(&buf, binary.LittleEndian, n)
				for _, k := range tri {
					_ = binary.Write(&buf, binary.LittleEndian, quad[k])
				}
				_ = binary.Write(&buf, binary.LittleEndian, uint16(0))
			}
		}
	}
	return buf.Bytes()
}
