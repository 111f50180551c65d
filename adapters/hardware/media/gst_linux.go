package media

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// setPipeSize shrinks (or grows) a pipe's kernel buffer; best effort.
func setPipeSize(f *os.File, n int) {
	_, _ = unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, n)
}

// dieWithParent kills the pipeline when the daemon dies, however it dies: a camera left open by
// an orphaned gst-launch would keep the next daemon from opening it.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
