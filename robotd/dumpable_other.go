//go:build !linux

package robotd

// notDumpable: elsewhere (macOS) a process's environment is readable only by its own user and
// root through sysctl KERN_PROCARGS2, which no setting turns off; the daemon's secrets are taken
// out of the environment it passes on.
func notDumpable() error { return nil }
