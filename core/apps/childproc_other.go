//go:build !linux

package apps

import "os/exec"

// dieWithDaemon does nothing where the kernel cannot kill a child with its parent.
func dieWithDaemon(*exec.Cmd) {}
