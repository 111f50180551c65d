package python

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/robothub/robothub/core/procgroup"
)

// warmPipScript is pip waiting for its arguments (warm_pip.py).
//
//go:embed warm_pip.py
var warmPipScript string

// warmSlot holds a Python started ahead (Prestart) until the step it is for takes it.
//
// A Python's start-up is most of a step's time here: pip's import is 0.45-0.59 s of the
// 0.81-0.95 s of CPU of `pip install --no-index --no-deps --force-reinstall` of the test app's
// wheel, and importing setuptools most of building it (3 runs each, /usr/bin/time, Debian 12's
// Python 3.11, pip 23.0.1, setuptools 66). Started when a job begins, those imports overlap getting
// the package on another core.
type warmSlot struct {
	mu   sync.Mutex
	proc *warmPython
}

// warmPython is one Python process waiting for its arguments, one JSON line on stdin.
type warmPython struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	out     *switchWriter
	exited  chan struct{} // closed once the process is reaped; waitErr is set then
	copied  chan struct{} // closed once its output is all written
	waitErr error
}

// Prestart starts the Pythons that the next build (BuildWheel) and install (Install) of this venv
// use, so that their start-up overlaps what comes before; stop ends those no step took. With uv
// as the installer only the build's starts. A Python that fails to start is no error: the step
// starts its own.
func (v *Venv) Prestart() (stop func()) {
	if !exists(v.Python()) {
		return func() {}
	}
	build := v.warmBuild.start(v, buildScript, buildEnv)
	var pip *warmPython
	if v.Source.UV == "" {
		pip = v.warmPip.start(v, warmPipScript, nil)
	}
	return func() {
		v.warmBuild.drop(build)
		v.warmPip.drop(pip)
	}
}

// start starts script in the venv's Python, ending the one the slot held.
func (s *warmSlot) start(v *Venv, script string, extra []string) *warmPython {
	cmd := exec.Command(v.Python(), "-I", "-c", script)
	cmd.Env = v.environ(extra)
	procgroup.Isolate(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil
	}
	pw.Close()
	p := &warmPython{cmd: cmd, stdin: stdin, out: &switchWriter{w: io.Discard}, exited: make(chan struct{}), copied: make(chan struct{})}
	go func() {
		defer close(p.copied)
		_, _ = io.Copy(p.out, pr)
		pr.Close()
	}()
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	s.mu.Lock()
	old := s.proc
	s.proc = p
	s.mu.Unlock()
	old.end()
	return p
}

// drop ends p if the slot still holds it, unused.
func (s *warmSlot) drop(p *warmPython) {
	if p == nil {
		return
	}
	s.mu.Lock()
	unused := s.proc == p
	if unused {
		s.proc = nil
	}
	s.mu.Unlock()
	if unused {
		p.end()
	}
}

// take returns the Python started ahead if it still waits, else nil.
func (s *warmSlot) take() *warmPython {
	s.mu.Lock()
	p := s.proc
	s.proc = nil
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	select {
	case <-p.exited:
		return nil
	default:
		return p
	}
}

// end kills an unused Python and its group, and reaps it.
func (p *warmPython) end() {
	if p == nil {
		return
	}
	_ = p.stdin.Close()
	_ = procgroup.Kill(p.cmd.Process.Pid)
	<-p.exited
}

// errNotTaken says a Python started ahead could not be given its arguments: nothing ran.
var errNotTaken = errors.New("the Python started ahead had ended")

// run gives the Python its arguments, writes its output to out and waits for it; the end of ctx
// kills its group, as procgroup.Run does. The error is procgroup.Run's: "python exited with code 1".
func (p *warmPython) run(ctx context.Context, out io.Writer, args []string) error {
	line, err := json.Marshal(args)
	if err != nil {
		return err
	}
	p.out.set(out)
	if _, err := p.stdin.Write(append(line, '\n')); err != nil {
		p.end()
		return errNotTaken
	}
	_ = p.stdin.Close()
	pid := p.cmd.Process.Pid
	select {
	case <-p.exited:
	case <-ctx.Done():
		_ = procgroup.Kill(pid)
		<-p.exited
		return context.Cause(ctx)
	}
	_ = procgroup.Kill(pid) // what it left running in its group
	select {
	case <-p.copied:
	case <-time.After(time.Second): // a process that left the group still holds the pipe
	}
	var ee *exec.ExitError
	switch {
	case p.waitErr == nil:
		return nil
	case errors.As(p.waitErr, &ee) && ee.ExitCode() >= 0:
		return &exitError{name: filepath.Base(p.cmd.Path), code: ee.ExitCode()}
	case errors.As(p.waitErr, &ee):
		return fmt.Errorf("%s was killed: %s", filepath.Base(p.cmd.Path), ee.ProcessState)
	}
	return p.waitErr
}

// exitError is a Python started ahead that exited with a code other than 0.
type exitError struct {
	name string
	code int
}

func (e *exitError) Error() string { return fmt.Sprintf("%s exited with code %d", e.name, e.code) }

// switchWriter writes to a writer that can be changed: a warm pip's output is dropped until an
// install gives it the job's log.
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) set(w io.Writer) {
	s.mu.Lock()
	s.w = w
	s.mu.Unlock()
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.w.Write(p)
	return len(p), nil
}
