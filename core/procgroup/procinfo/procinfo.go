// Package procinfo finds processes again by PID and start time, through the OS's process table
// (gopsutil): for a daemon that recovers the app a killed predecessor left running.
package procinfo

import (
	"slices"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/robothub/robothub/core/procgroup"
)

// Identity tells a process from a later one that reuses its PID: the start time in milliseconds
// since the Unix epoch, as the OS reports it (0 when the process is gone).
func Identity(pid int) int64 {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return 0
	}
	t, err := p.CreateTime()
	if err != nil {
		return 0
	}
	return t
}

// Alive reports whether pid is a live process: not gone, and not a zombie waiting to be reaped.
func Alive(pid int) bool {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return false
	}
	st, err := p.Status()
	return err == nil && !slices.Contains(st, process.Zombie)
}

// Members returns the live processes of the group pgid (its leader may be gone).
func Members(pgid int) []int {
	pids, err := process.Pids()
	if err != nil {
		return nil
	}
	var out []int
	for _, pid := range pids {
		if procgroup.Of(int(pid)) == pgid && Alive(int(pid)) {
			out = append(out, int(pid))
		}
	}
	return out
}
