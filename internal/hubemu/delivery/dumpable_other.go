//go:build !linux

package delivery

// Harden does nothing outside Linux: there is no /proc/<pid>/environ for a job to read on macOS or
// Windows, and jobs still run with their own clean environment.
func Harden() error { return nil }
