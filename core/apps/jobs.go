package apps

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// JobStatus is the status of a background job.
type JobStatus string

// The job statuses, the anchor daemon's: pending → in_progress → done or failed.
const (
	JobPending    JobStatus = "pending"
	JobInProgress JobStatus = "in_progress"
	JobDone       JobStatus = "done"
	JobFailed     JobStatus = "failed"
)

// Finished reports whether a job in this status has ended.
func (s JobStatus) Finished() bool { return s == JobDone || s == JobFailed }

// JobInfo is a snapshot of a job.
type JobInfo struct {
	ID       string     `json:"id"`
	Command  string     `json:"command"`
	Target   string     `json:"target"`
	Status   JobStatus  `json:"status"`
	Error    *string    `json:"error"`
	Apps     []string   `json:"apps"` // the apps the job installed or removed, once done
	Logs     []string   `json:"logs"`
	Created  time.Time  `json:"created"`
	Finished *time.Time `json:"finished"`
}

// Job is a background job (install, update or remove) with a live log.
type Job struct {
	mu        sync.Mutex
	info      JobInfo // ID, Command, Target and Created never change
	partial   string
	changed   chan struct{} // closed and replaced on every change
	cancel    context.CancelCauseFunc
	cancelled bool // a cancel was asked for
	changing  bool // the job is changing the venv: it cannot be cancelled now
	// expected are the apps the job installs: guessed from its target until its package says.
	expected []string
}

// expect records the apps the job installs, once its package has said which.
func (j *Job) expect(names []string) {
	j.mu.Lock()
	j.expected = slices.Clone(names)
	j.mu.Unlock()
}

// pendingInstall returns the unfinished install or update job that brings app name, if any.
func (m *Manager) pendingInstall(name string) *Job {
	m.jobs.mu.Lock()
	defer m.jobs.mu.Unlock()
	for i := len(m.jobs.order) - 1; i >= 0; i-- {
		j := m.jobs.jobs[m.jobs.order[i]]
		j.mu.Lock()
		brings := (j.info.Command == "install" || j.info.Command == "update") && !j.info.Status.Finished() && slices.Contains(j.expected, name)
		j.mu.Unlock()
		if brings {
			return j
		}
	}
	return nil
}

// describeStep says in a few words where a job is, for a message.
func (j *Job) describeStep() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.info.Status == JobPending {
		return "waiting for another job to finish"
	}
	for i := len(j.info.Logs) - 1; i >= 0; i-- {
		for _, p := range []struct{ prefix, step string }{
			{"Installing from", "starting"}, {"Cloning", "getting the app"}, {"Copying", "getting the app"},
			{"Building the package", "building it"}, {"Installing dependencies", "getting its dependencies"},
			{"Resolving", "getting its dependencies"}, {"Installing ", "installing it"}, {"Restarting", "restarting it"},
		} {
			if strings.HasPrefix(j.info.Logs[i], p.prefix) {
				return p.step
			}
		}
	}
	return string(j.info.Status)
}

// ErrCancelled is the cause of a job cancelled through CancelJob.
var ErrCancelled = errors.New("cancelled on request")

// beginVenvChange marks the start of the job's change to the venv, from which a cancel would leave
// it half changed; it fails if the job was cancelled first.
func (j *Job) beginVenvChange() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.cancelled {
		return ErrCancelled
	}
	j.changing = true
	return nil
}

func (j *Job) endVenvChange() {
	j.mu.Lock()
	j.changing = false
	j.mu.Unlock()
}

// CancelJob cancels a job that is waiting for its turn or in a step that can stop at once (getting
// the app, building it, resolving and downloading its dependencies): the step's process group is
// killed and the installed version stays. A job that is installing its checked files or
// uninstalling (local steps, no network) finishes that step first: the cancel is refused then, as
// it is for a finished job. It returns once the job has ended.
func (m *Manager) CancelJob(id string) (JobInfo, error) {
	j, err := m.Job(id)
	if err != nil {
		return JobInfo{}, err
	}
	j.mu.Lock()
	switch {
	case j.info.Status.Finished():
		j.mu.Unlock()
		return JobInfo{}, fault.Refusedf("Job %s has already finished (%s)", j.info.ID, j.info.Status)
	case j.changing:
		j.mu.Unlock()
		return JobInfo{}, fault.Refusedf("Job %s is changing the apps venv (a local step, no network, bounded to %s): cancelling it would leave the venv half changed; it ends by itself", j.info.ID, changeDeadline)
	}
	j.cancelled = true
	j.mu.Unlock()
	m.log.Info("cancelling job", "job", j.info.ID, "command", j.info.Command, "target", j.info.Target)
	j.cancel(ErrCancelled)
	_ = j.Wait()
	return j.Info(), nil
}

// startJob runs work as a background job, one venv-changing job at a time; the job's context ends
// when it is cancelled. expected are the apps it is thought to bring (for start-app's message).
func (m *Manager) startJob(command, target string, expected []string, work func(context.Context, *Job) ([]string, error)) *Job {
	ctx, cancel := context.WithCancelCause(context.Background())
	job := m.jobs.create(command, target, cancel)
	job.expect(expected)
	go func() {
		defer cancel(nil)
		select {
		case m.venvMu <- struct{}{}:
		case <-ctx.Done():
			job.Logf("Job '%s %s' was cancelled before it started", command, target)
			job.setStatus(JobFailed, fmt.Errorf("%w before it started", ErrCancelled))
			return
		}
		defer func() { <-m.venvMu }()
		job.setStatus(JobInProgress, nil)
		apps, err := work(ctx, job)
		if err != nil {
			if errors.Is(context.Cause(ctx), ErrCancelled) {
				step, _, _ := strings.Cut(err.Error(), ": "+ErrCancelled.Error())
				if step == ErrCancelled.Error() {
					step = "before the apps venv changed"
				}
				err = fmt.Errorf("%w (%s); the installed version, if any, is unchanged", ErrCancelled, step)
			}
			job.Logf("Job '%s %s' failed: %v", command, target, err)
			m.log.Warn("job failed", "job", job.info.ID, "command", command, "target", target, "err", err)
			job.setStatus(JobFailed, err)
			return
		}
		job.Logf("Job '%s %s' completed successfully", command, target)
		m.log.Info("job done", "job", job.info.ID, "command", command, "target", target, "apps", apps)
		job.setStatus(JobDone, nil, apps...)
	}()
	return job
}

const (
	maxJobLogLines = 5000 // bounds a job's log; older lines are dropped with a marker
	maxJobs        = 200  // finished jobs beyond this many are forgotten, oldest first
)

// ID returns the job's ID.
func (j *Job) ID() string { return j.info.ID }

// Write appends output to the log, one line per newline; it makes a Job an io.Writer for pip and git.
func (j *Job) Write(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	lines := strings.Split(j.partial+string(p), "\n")
	j.partial = lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		j.appendLocked(strings.TrimRight(l, "\r"))
	}
	j.notifyLocked()
	return len(p), nil
}

// Logf appends one formatted line to the log.
func (j *Job) Logf(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.appendLocked(fmt.Sprintf(format, args...))
	j.notifyLocked()
}

// appendLocked keeps one log line, redacted: git and pip may print the URLs they were given.
func (j *Job) appendLocked(line string) {
	if len(j.info.Logs) >= maxJobLogLines {
		j.info.Logs = append(j.info.Logs[:0], j.info.Logs[len(j.info.Logs)-maxJobLogLines/2:]...)
		j.info.Logs[0] = "[earlier lines dropped]"
	}
	j.info.Logs = append(j.info.Logs, RedactText(line))
}

func (j *Job) notifyLocked() {
	close(j.changed)
	j.changed = make(chan struct{})
}

// setStatus records s, with the job's error or the apps it installed or removed.
func (j *Job) setStatus(s JobStatus, err error, apps ...string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.partial != "" {
		j.appendLocked(j.partial)
		j.partial = ""
	}
	j.info.Status = s
	if apps != nil {
		j.info.Apps = apps
	}
	if err != nil {
		j.info.Error = new(RedactText(err.Error()))
	}
	if s.Finished() {
		j.info.Finished = new(time.Now())
	}
	j.notifyLocked()
}

// Info returns a snapshot of the job.
func (j *Job) Info() JobInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	info := j.info
	info.Apps, info.Logs = append([]string{}, j.info.Apps...), append([]string{}, j.info.Logs...)
	return info
}

// Follow returns the log lines from index from on, the status, and a channel closed on change.
func (j *Job) Follow(from int) (lines []string, status JobStatus, changed <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if from < len(j.info.Logs) {
		lines = append([]string(nil), j.info.Logs[from:]...)
	}
	return lines, j.info.Status, j.changed
}

// Wait blocks until the job has finished and returns its error, if any.
func (j *Job) Wait() error {
	for {
		_, status, changed := j.Follow(math.MaxInt)
		if status == JobFailed {
			return errors.New(*j.Info().Error)
		}
		if status == JobDone {
			return nil
		}
		<-changed
	}
}

type jobRegistry struct {
	mu    sync.Mutex
	jobs  map[string]*Job
	order []string
}

func (r *jobRegistry) create(command, target string, cancel context.CancelCauseFunc) *Job {
	j := &Job{
		info:    JobInfo{ID: randomHex(8), Command: command, Target: target, Created: time.Now(), Status: JobPending},
		changed: make(chan struct{}),
		cancel:  cancel,
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs[j.info.ID] = j
	r.order = append(r.order, j.info.ID)
	excess := len(r.order) - maxJobs
	r.order = slices.DeleteFunc(r.order, func(id string) bool {
		if _, status, _ := r.jobs[id].Follow(math.MaxInt); excess <= 0 || !status.Finished() {
			return false
		}
		excess--
		delete(r.jobs, id)
		return true
	})
	return j
}
