//go:build unix

package nethttp

import "syscall"

// tunnelProcAttr starts the tunnel program in its own process group, so Close reaches its children.
func tunnelProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killTunnel sends sig to the tunnel program's process group.
func killTunnel(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }
