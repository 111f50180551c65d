package delivery

import "syscall"

// Harden makes the calling process non-dumpable (prctl PR_SET_DUMPABLE 0): its /proc/<pid>/environ,
// mem and maps become root's, and no process of the same user may ptrace it. A job webhook runs as
// the hub's user; without this it could read the hub's environment (an HF_TOKEN, a webhook secret)
// through /proc. Jobs run with their own clean environment (runJob), so they need nothing from it.
func Harden() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); errno != 0 {
		return errno
	}
	return nil
}
