package procgroup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"
)

// Run runs cmd (made with exec.Command, not started) in a process group of its own and waits for
// it, writing its stdout and stderr to out as they come. The end of ctx kills the whole group, so a
// build's or a clone's children die with it; so does the end of cmd, for children it left behind.
// On Linux the kernel also kills the command if the caller dies first. The error names the command:
// "pip exited with code 1", "git not found"; after the end of ctx it is ctx's cause.
func Run(ctx context.Context, cmd *exec.Cmd, out io.Writer) error {
	Isolate(cmd)
	dieWithParent(cmd)
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	// The parent-death signal follows the thread that started the process: keep it until the end.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		return describe(cmd.Path, err)
	}
	pid := cmd.Process.Pid
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, pr)
	}()
	waited := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = Kill(pid)
		case <-waited:
		}
	}()
	err = cmd.Wait()
	close(waited)
	_ = Kill(pid) // what the command left running in its group
	select {
	case <-copied:
	case <-time.After(time.Second): // a process that left the group still holds the pipe
	}
	pr.Close()
	if err != nil && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return describe(cmd.Path, err)
}

func describe(path string, err error) error {
	name := filepath.Base(path)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return fmt.Errorf("%s exited with code %d", name, ee.ExitCode())
	case errors.As(err, &ee):
		return fmt.Errorf("%s was killed: %s", name, ee.ProcessState)
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound):
		return fmt.Errorf("%s not found: %w", path, err)
	}
	return fmt.Errorf("%s: %w", name, err)
}
