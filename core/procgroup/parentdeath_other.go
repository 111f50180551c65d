//go:build !linux

package procgroup

import "os/exec"

// dieWithParent does nothing where the kernel cannot kill a child with its parent.
func dieWithParent(*exec.Cmd) {}
