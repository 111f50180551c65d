//go:build !linux

package media

import (
	"os"
	"os/exec"
)

func setPipeSize(*os.File, int) {}

func dieWithParent(*exec.Cmd) {}
