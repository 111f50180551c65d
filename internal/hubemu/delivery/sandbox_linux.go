package delivery

import (
	"fmt"
	"os/exec"
	"runtime"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// jobLandlock handles every filesystem right and IPC scope that go-landlock knows (best effort: a
// kernel with an older Landlock enforces the part it has) and no network right: jobs reach the
// network, as the public hub's jobs do.
func jobLandlock() landlock.Config {
	c := landlock.V11.BestEffort()
	c.HandledAccessNet = 0
	return c
}

// sandboxError says why jobs cannot be sandboxed here, or nil.
func sandboxError() error {
	if v, err := llsys.LandlockGetABIVersion(); err != nil || v < 1 {
		return errNoSandbox
	}
	return nil
}

// startSandboxed starts cmd in a Landlock domain where it reads read, and reads and writes runDir
// and jobDevices, and nothing else. Only the job is restricted, not the hub: the domain is put on
// one locked OS thread, which starts the job (a child inherits its parent thread's domain) and is
// never unlocked, so that the Go runtime ends it with its goroutine instead of reusing it.
func startSandboxed(cmd *exec.Cmd, read []string, runDir string) error {
	fd, flags, err := jobLandlock().NewRulesetFD(
		landlock.RODirs(read...).IgnoreIfMissing(),
		landlock.RWDirs(runDir),
		landlock.RWFiles(jobDevices...).IgnoreIfMissing(),
	)
	if err != nil {
		return fmt.Errorf("making the job's sandbox: %w", err)
	}
	if fd < 0 {
		return errNoSandbox
	}
	defer unix.Close(fd) // open until Start returned
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			started <- fmt.Errorf("making the job's sandbox: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
			return
		}
		if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
			started <- fmt.Errorf("making the job's sandbox: landlock_restrict_self: %w", err)
			return
		}
		started <- cmd.Start()
	}()
	return <-started
}
