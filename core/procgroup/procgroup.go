// Package procgroup runs commands in a process group of their own, so that a signal or a kill
// reaches every process a command started, and finds processes again by PID and start time (for a
// daemon that recovers the app a killed predecessor left running). Platform code is build-tagged:
// Unix has process groups and signals; Windows has process groups and termination only.
package procgroup

import (
	"os/exec"
	"slices"

	"github.com/shirou/gopsutil/v4/process"
)

// KillOnCancel puts cmd in a group of its own and makes the end of its context kill the whole
// group, so that a shell script's children do not outlive a command that timed out.
func KillOnCancel(cmd *exec.Cmd) {
	Isolate(cmd)
	cmd.Cancel = func() error { return Kill(cmd.Process.Pid) }
}

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
		if Of(int(pid)) == pgid && Alive(int(pid)) {
			out = append(out, int(pid))
		}
	}
	return out
}
