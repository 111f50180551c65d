//go:build !(linux || darwin)

package facedetect

import (
	"errors"
	"runtime"
)

// Runtime is ONNX Runtime's shared library; this build cannot load it (purego opens shared
// libraries on linux and darwin only).
type Runtime struct {
	Path    string
	Version string
}

// Tensor is a float tensor: its shape and its values in row-major order.
type Tensor struct {
	Name  string
	Shape []int64
	Data  []float32
}

// Session is a model loaded into the runtime.
type Session struct {
	Input   Tensor
	Outputs []Tensor
}

var errNoRuntime = errors.New("this build of the daemon cannot load ONNX Runtime on " + runtime.GOOS)

// OpenRuntime fails: see Runtime.
func OpenRuntime(path string) (*Runtime, error) { return nil, errNoRuntime }

// NewSession fails: see Runtime.
func (rt *Runtime) NewSession(model []byte, threads int) (*Session, error) { return nil, errNoRuntime }

// Run fails: see Runtime.
func (s *Session) Run(input []float32, shape []int64) ([]Tensor, error) { return nil, errNoRuntime }

// Close does nothing.
func (s *Session) Close() {}
