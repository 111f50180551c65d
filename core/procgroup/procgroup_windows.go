package procgroup

import (
	"os"
	"os/exec"
	"syscall"
)

// Isolate makes cmd start in a new process group: Windows then keeps console Ctrl-C events from it.
func Isolate(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= syscall.CREATE_NEW_PROCESS_GROUP
}

// Signal ends the group leader pid: Windows has no signals to send, only termination.
func Signal(pid int, _ syscall.Signal) error { return Kill(pid) }

// Kill ends the group leader pid.
func Kill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// Of returns pid itself: a process started by Isolate leads its own group.
func Of(pid int) int { return pid }
