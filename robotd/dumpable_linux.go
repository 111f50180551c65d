package robotd

import "golang.org/x/sys/unix"

// notDumpable makes the daemon non-dumpable (prctl PR_SET_DUMPABLE 0): its /proc/<pid>/environ,
// mem and maps become root's, and no process of its own user (an app, a package's build) may
// ptrace it or read the environment it was started with, which can hold ROBOT_DAEMON_TOKEN or
// the broker's password (os.Unsetenv does not change what /proc shows).
func notDumpable() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
