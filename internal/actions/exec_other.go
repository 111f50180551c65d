//go:build !unix

package actions

import "os/exec"

// killGroup: without process groups, the timeout kills the command itself.
func killGroup(*exec.Cmd) {}
