// Package procgroup runs commands in a process group of their own, so that a signal or a kill
// reaches every process a command started. Platform code is build-tagged: Unix has process groups
// and signals; Windows has process groups and termination only. Finding processes again by PID and
// start time is procinfo's, apart, so that a binary that only runs commands (the Lambda's exec:
// routes) does not link the process table's reader.
package procgroup

import (
	"os/exec"
)

// KillOnCancel puts cmd in a group of its own and makes the end of its context kill the whole
// group, so that a shell script's children do not outlive a command that timed out.
func KillOnCancel(cmd *exec.Cmd) {
	Isolate(cmd)
	cmd.Cancel = func() error { return Kill(cmd.Process.Pid) }
}
