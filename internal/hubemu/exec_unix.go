//go:build unix

package hubemu

import (
	"os/exec"
	"syscall"
)

// killGroup runs the command in its own session (and so its own process group, without the hub's
// controlling terminal) and, when its context ends, kills the whole group, so that a shell's
// children do not outlive a job that timed out.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
