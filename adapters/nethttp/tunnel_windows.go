package nethttp

import (
	"os"
	"syscall"
)

func tunnelProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// killTunnel ends the tunnel program: Windows has no SIGTERM to send, only termination.
func killTunnel(pid int, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
