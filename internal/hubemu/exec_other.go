//go:build !unix

package hubemu

import "os/exec"

// killGroup: without process groups, the context kills the command itself only.
func killGroup(*exec.Cmd) {}
