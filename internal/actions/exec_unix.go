//go:build unix

package actions

import (
	"os/exec"
	"syscall"
)

// killGroup runs the command in its own process group and, on timeout, kills the whole group, so
// that a shell script's children do not outlive it.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
