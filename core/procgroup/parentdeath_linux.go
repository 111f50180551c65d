package procgroup

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd's process when the thread that started it ends (Run keeps
// that thread until the process has exited), so a killed daemon's pip or git stops at once.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
