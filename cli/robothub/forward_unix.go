//go:build unix

package main

import (
	"os"
	"syscall"
)

// execInPlace replaces this process with path; it returns only when that fails.
func execInPlace(path string, args, env []string) error {
	return syscall.Exec(path, args, env)
}

func interrupt(p *os.Process) error { return p.Signal(os.Interrupt) }
