//go:build unix

package procgroup

import (
	"os/exec"
	"syscall"
)

// Isolate makes cmd start in a new session, and so in a new process group that it leads, without
// the caller's controlling terminal: a Ctrl-C in the caller's terminal does not reach it, and
// Signal and Kill reach every process it starts.
func Isolate(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
}

// Signal sends sig to every process of the group that pid leads.
func Signal(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }

// Kill kills every process of the group that pid leads.
func Kill(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }

// Of returns the process group of pid, or -1 when pid is gone.
func Of(pid int) int {
	pgid, err := syscall.Getpgid(pid)
	if err != nil {
		return -1
	}
	return pgid
}
