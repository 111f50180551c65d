package apps

import (
	"os"
	"syscall"
)

// On Windows the package builds (robot-app-assistant uses it) but the daemon does not run: apps run
// in Unix process groups. These stand-ins keep the same meaning where Windows has one.

func processGroupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// kill ends pid (or the group leader -pid): Windows has no signals to send, only termination.
func kill(pid int, _ syscall.Signal) error {
	if pid < 0 {
		pid = -pid
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// processGroup returns pid itself: a process started with CREATE_NEW_PROCESS_GROUP leads its group.
func processGroup(pid int) int { return pid }
