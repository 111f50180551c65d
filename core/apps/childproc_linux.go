package apps

import (
	"os/exec"
	"syscall"
)

// dieWithDaemon has the kernel kill cmd's process when the daemon dies, so that a pip or git that
// a killed daemon started cannot go on changing the apps venv behind the next daemon's back. The
// signal follows the thread that started the process: runLoggedEnv keeps that thread until the
// process has exited.
func dieWithDaemon(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
