package apps

import (
	"os/exec"
	"syscall"
)

// dieWithDaemon has the kernel kill cmd's process when the daemon dies, so that a killed daemon's
// pip or git cannot go on changing the apps venv. The signal follows the thread that started the
// process: runLoggedEnv keeps that thread until the process has exited.
func dieWithDaemon(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
