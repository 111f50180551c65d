//go:build unix

package lambda

import (
	"syscall"
	"time"
)

// processCPUTime is the CPU time this process has used, user and system, all threads. On a shared
// machine it measures the work of a benchmark without the time spent waiting for a core.
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
