package apps

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/procgroup"
	"github.com/robothub/robothub/core/procgroup/procinfo"
)

const (
	// runningAfter: a started app is reported running after this long even without an SDK session.
	runningAfter   = 2 * time.Second
	killGrace      = 5 * time.Second // how long Stop waits for the app to be reaped after SIGKILL
	errorTailLines = 10              // how many of the last stderr lines an error status shows
)

// run is one app process in the slot.
type run struct {
	info          AppInfo
	cmd           *exec.Cmd
	pid           int // also the process group ID: the app leads its own group
	state         AppState
	err           string
	stopRequested bool
	killed        bool
	exited        chan struct{}
	revoke        func() // ends the run's credentials (SetAppCredentials); nil when none
	stderr        *lineTail
	output        *OutputLog
}

func (r *run) statusLocked() AppStatus {
	st := AppStatus{Info: r.info, State: r.state}
	if r.err != "" {
		st.Error = new(r.err)
	}
	return st
}

func (m *Manager) activeLocked() *run {
	if r := m.current; r != nil && r.state.Active() {
		return r
	}
	return nil
}

// Start launches app name as `<venv python> -u -m <module>` in its own process group, with the
// daemon's environment and SetAppEnv's. Refused while an app runs. SDK clients outside the app
// hold no slot (OpenSession): they keep their sessions.
func (m *Manager) Start(name string) (AppStatus, error) { return m.start(name) }

// StartNoEvict is the anchor's start-app/no-evict, which refuses where start-app would evict the
// anchor's relay session. This daemon has no such session to evict, so it is Start.
func (m *Manager) StartNoEvict(name string) (AppStatus, error) { return m.start(name) }

func (m *Manager) start(name string) (AppStatus, error) {
	info, err := m.App(name)
	if err != nil {
		if job := m.pendingInstall(name); job != nil {
			return AppStatus{}, fault.Refusedf("App '%s' is being installed (job %s: %s): start it once the job is done (GET /api/apps/job-status/%s), or install with POST /api/apps/install?wait=true, which answers when it is",
				name, job.ID(), describeStep(job), job.ID())
		}
		return AppStatus{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.slotBusyLocked(); err != nil {
		return AppStatus{}, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return AppStatus{}, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return AppStatus{}, err
	}
	cmd := exec.Command(m.py.Python(), "-u", "-m", info.Extra.Module)
	// Later entries win in exec: what the daemon adds overrides an empty inherited value, and the
	// run's own credentials override both.
	cmd.Env = append(os.Environ(), m.appEnv...)
	var revoke func()
	if m.appCreds != nil {
		var vars []string
		vars, revoke = m.appCreds(info.Name)
		cmd.Env = append(cmd.Env, vars...)
	}
	cmd.Stdout, cmd.Stderr = outW, errW // files, so exec starts no copying goroutines that Wait would block on
	procgroup.Isolate(cmd)
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		if revoke != nil {
			revoke()
		}
		return AppStatus{}, fmt.Errorf("starting app %s: %w", info.Name, err)
	}
	r := &run{
		info: info, cmd: cmd, pid: cmd.Process.Pid, state: StateStarting, revoke: revoke,
		exited: make(chan struct{}), stderr: &lineTail{max: 2 * errorTailLines}, output: &OutputLog{changed: make(chan struct{})},
	}
	m.log.Info("app started", "app", info.Name, "pid", r.pid, "module", info.Extra.Module)
	if err := writeJSONAtomic(m.path(runningAppFile), runningApp{Name: info.Name, PID: r.pid, Started: procinfo.Identity(r.pid)}); err != nil {
		m.log.Warn("saving the running app", "err", err)
	}
	var pumps sync.WaitGroup
	pumps.Go(func() { m.pump(outR, info.Name, "stdout", nil, r.output) })
	pumps.Go(func() { m.pump(errR, info.Name, "stderr", r.stderr, r.output) })
	go m.monitor(r, &pumps)
	time.AfterFunc(runningAfter, func() {
		m.mu.Lock()
		if r.state == StateStarting {
			r.state = StateRunning
		}
		m.mu.Unlock()
	})
	m.current = r
	return r.statusLocked(), nil
}

// pump logs an app's output line by line, keeping stderr's last lines for the error status.
func (m *Manager) pump(rd io.ReadCloser, app, stream string, tail *lineTail, output *OutputLog) {
	defer rd.Close()
	scanLines(rd, func(line string) {
		m.log.Info(line, "app", app, "stream", stream)
		if tail != nil {
			tail.add(line)
		}
		output.add(stream, line)
	})
}

// scanLines calls f with each line read from r (lines of up to 1 MiB).
func scanLines(r io.Reader, f func(string)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f(sc.Text())
	}
}

// monitor waits for the app to exit, kills the rest of its group, records the end, frees the slot.
func (m *Manager) monitor(r *run, pumps *sync.WaitGroup) {
	waitErr := r.cmd.Wait()
	// Children the app left behind share its process group.
	_ = procgroup.Kill(r.pid)
	if r.revoke != nil {
		r.revoke() // what the app left running has no use of the daemon now
	}
	drained := make(chan struct{})
	go func() { pumps.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(time.Second): // a process that left the group still holds the pipe
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	m.endStateLocked(r, waitErr)
	r.output.end()
	for id, s := range m.sessions {
		if s.Kind == sessionApp && s.pid != 0 && s.App == r.info.Name {
			delete(m.sessions, id)
		}
	}
	if err := os.Remove(m.path(runningAppFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		m.log.Warn("removing the running-app file", "err", err)
	}
	close(r.exited)
	m.log.Info("app ended", "app", r.info.Name, "state", r.state, "error", r.err)
}

// endStateLocked: done on exit 0 or a stop's SIGINT, else error with the code and stderr's tail.
func (m *Manager) endStateLocked(r *run, waitErr error) {
	ps := r.cmd.ProcessState
	if ps == nil {
		r.state, r.err = StateError, "App could not be waited for: "+waitErr.Error()
		return
	}
	ws, _ := ps.Sys().(syscall.WaitStatus)
	switch {
	case r.killed:
		r.state = StateError
		r.err = fmt.Sprintf("App did not exit within %s of SIGINT; its process group was killed with SIGKILL", m.cfg.StopTimeout)
	case ps.Success(), r.stopRequested && ws.Signaled() && ws.Signal() == syscall.SIGINT:
		r.state = StateDone
	default:
		r.state = StateError
		r.err = fmt.Sprintf("App exited with code %d", ps.ExitCode())
		if ws.Signaled() {
			r.err = "App was killed by signal " + ws.Signal().String()
		}
		if lines := r.stderr.last(errorTailLines); len(lines) > 0 {
			r.err += "\n" + strings.Join(lines, "\n")
		}
	}
}

// Stop sends SIGINT to the app's group, SIGKILL after the stop timeout, then resets the pose. A
// crashed app has exited already: stopping it acknowledges the crash, as the anchor's stop does (it
// accepts an app in error): the error is cleared and the robot goes back to its default pose. An
// app that ended well is no app to stop.
func (m *Manager) Stop() (AppStatus, error) {
	m.mu.Lock()
	if c := m.current; c != nil && c.state == StateError {
		m.current = nil
		st := c.statusLocked()
		m.mu.Unlock()
		m.log.Info("cleared the error of the crashed app", "app", c.info.Name)
		if m.cfg.Robot != nil && m.cfg.Robot.ReturnToDefault() {
			m.log.Info("returning the robot to its default pose")
		}
		return st, nil
	}
	m.mu.Unlock()
	return m.stopActive()
}

// stopActive stops the app that holds the slot.
func (m *Manager) stopActive() (AppStatus, error) {
	m.mu.Lock()
	r := m.activeLocked()
	if r == nil {
		m.mu.Unlock()
		return AppStatus{}, fault.Refusedf("No app is currently running")
	}
	if !r.stopRequested {
		r.stopRequested = true
		r.state = StateStopping
		m.log.Info("stopping app", "app", r.info.Name, "pid", r.pid)
		_ = procgroup.Signal(r.pid, syscall.SIGINT)
	}
	m.mu.Unlock()

	select {
	case <-r.exited:
	case <-time.After(m.cfg.StopTimeout):
		m.mu.Lock()
		select {
		case <-r.exited:
		default:
			r.killed = true
			m.log.Warn("app ignored SIGINT; killing its process group", "app", r.info.Name, "timeout", m.cfg.StopTimeout)
			_ = procgroup.Kill(r.pid)
		}
		m.mu.Unlock()
		select {
		case <-r.exited:
		case <-time.After(killGrace):
			// A process in uninterruptible sleep or held by a debugger is not reaped until that
			// ends: answer rather than hang every later stop; monitor frees the slot at the reaping.
			m.log.Error("app survived SIGKILL", "app", r.info.Name, "pid", r.pid, "waited", killGrace)
			return AppStatus{}, fault.Unavailablef("App %s (PID %d) has not exited %s after SIGKILL: it is stuck in the kernel or held by a debugger. The slot frees itself once it exits; if it never does, restart the daemon", r.info.Name, r.pid, killGrace)
		}
	}
	if m.cfg.Robot != nil && m.cfg.Robot.ReturnToDefault() {
		m.log.Info("returning the robot to its default pose")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// A stopped app is no current app: current-app-status answers null, as the anchor's does. An
	// app that ends by itself stays visible (done, or error with its last stderr lines).
	if m.current == r {
		m.current = nil
	}
	return r.statusLocked(), nil
}

// Restart stops the running app and starts it again.
func (m *Manager) Restart() (AppStatus, error) {
	st, err := m.stopActive()
	if err != nil {
		return AppStatus{}, err
	}
	return m.StartNoEvict(st.Info.Name)
}

// Status returns the running app's status, or the last one's if it ended by itself (nil if stopped).
func (m *Manager) Status() *AppStatus {
	_, st := m.Output()
	return st
}

// Close refuses new starts and stops the running app.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	if _, err := m.stopActive(); err == nil {
		m.log.Info("stopped the running app on shutdown")
	}
	// No job outlives the daemon's hold on its data dir, so that no write of this daemon's comes
	// after the next one's start: a job that has not begun to change the venv (waiting for its
	// turn, downloading) is cancelled; one that is changing it ends first, within
	// JobsShutdownWait; one that takes longer is cut short when the process exits, and the journal
	// puts the venv back at the next start (Prepare).
	for _, j := range m.jobs.Unfinished() {
		j.Cancel()
	}
	done := make(chan struct{})
	go func() { m.jobsWG.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(JobsShutdownWait):
		m.log.Warn("a job still runs at shutdown and is cut short: the next start puts back what it left half done", "waited", JobsShutdownWait)
	}
}

// JobsShutdownWait bounds how long Close waits for a job changing the venv (pip's install or
// removal of one app takes 1-5 s here): well within systemd's default TimeoutStopSec (90 s), with
// the app's stop before it.
const JobsShutdownWait = 15 * time.Second

// recoverOrphan stops, as Stop does, an app that a killed previous daemon left running.
func (m *Manager) recoverOrphan() {
	var ra runningApp
	if err := readJSON(m.path(runningAppFile), &ra); err != nil {
		m.log.Warn("reading the running-app file", "err", err)
	}
	if ra.PID <= 1 {
		return
	}
	defer os.Remove(m.path(runningAppFile))
	started := procinfo.Identity(ra.PID)
	if started == 0 {
		// The leader is gone; children it left in its group may remain.
		for _, pid := range procinfo.Members(ra.PID) {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
		return
	}
	if started != ra.Started || !procinfo.Alive(ra.PID) {
		return // the PID now belongs to another process, or the app is dead
	}
	m.log.Warn("stopping an app left running by a previous daemon", "app", ra.Name, "pid", ra.PID)
	_ = procgroup.Signal(ra.PID, syscall.SIGINT)
	deadline := time.Now().Add(m.cfg.StopTimeout)
	for procinfo.Alive(ra.PID) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	_ = procgroup.Kill(ra.PID)
	for i := 0; i < 100 && procinfo.Alive(ra.PID); i++ {
		time.Sleep(20 * time.Millisecond)
	}
}

type lineTail struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (t *lineTail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		t.lines = append(t.lines[:0], t.lines[len(t.lines)-t.max:]...)
	}
}

// Write makes a lineTail an io.Writer of whole lines.
func (t *lineTail) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		t.add(strings.TrimRight(l, "\r"))
	}
	return len(p), nil
}

func (t *lineTail) last(n int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	n = min(n, len(t.lines))
	return append([]string(nil), t.lines[len(t.lines)-n:]...)
}

// maxOutputLines bounds what a run keeps for late readers; a reader that fell behind skips lines.
const maxOutputLines = 2000

// OutputLine is one line an app wrote, on "stdout" or "stderr".
type OutputLine struct {
	Stream string `json:"stream"`
	Line   string `json:"line"`
}

// OutputLog is one app run's last lines, numbered from 0, and whether its pipes have closed.
type OutputLog struct {
	mu      sync.Mutex
	first   int // the number of lines[0]
	lines   []OutputLine
	ended   bool
	changed chan struct{} // closed and replaced on every change
}

func (o *OutputLog) add(stream, line string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lines = append(o.lines, OutputLine{Stream: stream, Line: line})
	if drop := len(o.lines) - maxOutputLines; drop > 0 {
		o.lines = append(o.lines[:0], o.lines[drop:]...)
		o.first += drop
	}
	close(o.changed)
	o.changed = make(chan struct{})
}

func (o *OutputLog) end() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended = true
	close(o.changed)
	o.changed = make(chan struct{})
}

// Follow returns the lines from number from on (or the oldest kept), the number to ask for next,
// whether the run has ended, and a channel closed at the next change.
func (o *OutputLog) Follow(from int) (lines []OutputLine, next int, ended bool, changed <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if i := max(from, o.first) - o.first; i < len(o.lines) {
		lines = append([]OutputLine(nil), o.lines[i:]...)
	}
	return lines, o.first + len(o.lines), o.ended, o.changed
}

// Output returns the output log and status of the run that Status describes (nil, nil if none).
func (m *Manager) Output() (*OutputLog, *AppStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.current == nil {
		return nil, nil
	}
	st := m.current.statusLocked()
	return m.current.output, &st
}
