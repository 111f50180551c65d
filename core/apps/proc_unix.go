//go:build unix

package apps

import "syscall"

// processGroupAttr starts an app in its own process group, so that stop reaches its children.
func processGroupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// kill sends sig to pid, or to the process group -pid when pid is negative.
func kill(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// processGroup returns pid's process group, or -1.
func processGroup(pid int) int {
	pgid, err := syscall.Getpgid(pid)
	if err != nil {
		return -1
	}
	return pgid
}
