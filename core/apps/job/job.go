// Package job is the background job of the app lifecycle (install, update, remove): a live log that
// followers read as it grows, a status (pending, in_progress, done, failed, the public daemon's),
// cancellation with a cause, the steps during which it may not be cancelled, and the registry of
// recent jobs. What a job does, and which jobs may run at once, is core/apps' business.
package job

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// Status is the status of a background job.
type Status string

// The job statuses, the public daemon's: pending → in_progress → done or failed.
const (
	Pending    Status = "pending"
	InProgress Status = "in_progress"
	Done       Status = "done"
	Failed     Status = "failed"
)

// Finished reports whether a job in this status has ended.
func (s Status) Finished() bool { return s == Done || s == Failed }

// Info is a snapshot of a job.
type Info struct {
	ID       string     `json:"id"`
	Command  string     `json:"command"`
	Target   string     `json:"target"`
	Status   Status     `json:"status"`
	Error    *string    `json:"error"`
	Apps     []string   `json:"apps"` // the apps the job installed or removed, once done
	Logs     []string   `json:"logs"`
	Created  time.Time  `json:"created"`
	Finished *time.Time `json:"finished"`
}

// ErrCancelled is the cause of a job cancelled on request.
var ErrCancelled = errors.New("cancelled on request")

const (
	maxLogLines = 5000 // bounds a job's log; older lines are dropped with a marker
	maxJobs     = 200  // finished jobs beyond this many are forgotten, oldest first
)

// Job is a background job with a live log. It is an io.Writer (one log line per newline) for the
// processes it runs.
type Job struct {
	mu        sync.Mutex
	info      Info // ID, Command, Target and Created never change
	partial   string
	changed   chan struct{} // closed and replaced on every change
	cancel    context.CancelCauseFunc
	cancelled bool // a cancel was asked for
	busy      bool // in a step that must not be cut short: it cannot be cancelled now
	redact    func(string) string
	// expected are the apps the job brings: guessed from its target until its package says.
	expected []string
}

// ID returns the job's ID.
func (j *Job) ID() string { return j.info.ID }

// Expect records the apps the job brings.
func (j *Job) Expect(names []string) {
	j.mu.Lock()
	j.expected = slices.Clone(names)
	j.mu.Unlock()
}

// Brings reports whether the job is an unfinished one of these commands that brings app name.
func (j *Job) Brings(name string, commands ...string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Contains(commands, j.info.Command) && !j.info.Status.Finished() && slices.Contains(j.expected, name)
}

// BeginUncancellable marks the start of a step that a cancel would leave half done (a change to
// the apps venv); it fails with ErrCancelled if the job was cancelled first.
func (j *Job) BeginUncancellable() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.cancelled {
		return ErrCancelled
	}
	j.busy = true
	return nil
}

// EndUncancellable ends such a step.
func (j *Job) EndUncancellable() {
	j.mu.Lock()
	j.busy = false
	j.mu.Unlock()
}

// Cancel cancels the job with ErrCancelled, unless it has finished or is in a step that must not be
// cut short (it says which); it does not wait for the job to end.
func (j *Job) Cancel() (finished, busy bool) {
	j.mu.Lock()
	switch {
	case j.info.Status.Finished():
		j.mu.Unlock()
		return true, false
	case j.busy:
		j.mu.Unlock()
		return false, true
	}
	j.cancelled = true
	j.mu.Unlock()
	j.cancel(ErrCancelled)
	return false, false
}

// Write appends output to the log, one line per newline.
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
	if len(j.info.Logs) >= maxLogLines {
		j.info.Logs = append(j.info.Logs[:0], j.info.Logs[len(j.info.Logs)-maxLogLines/2:]...)
		j.info.Logs[0] = "[earlier lines dropped]"
	}
	j.info.Logs = append(j.info.Logs, j.redact(line))
}

func (j *Job) notifyLocked() {
	close(j.changed)
	j.changed = make(chan struct{})
}

// SetStatus records s, with the job's error or the apps it installed or removed.
func (j *Job) SetStatus(s Status, err error, apps ...string) {
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
		j.info.Error = new(j.redact(err.Error()))
	}
	if s.Finished() {
		j.info.Finished = new(time.Now())
	}
	j.notifyLocked()
}

// Info returns a snapshot of the job.
func (j *Job) Info() Info {
	j.mu.Lock()
	defer j.mu.Unlock()
	info := j.info
	info.Apps, info.Logs = append([]string{}, j.info.Apps...), append([]string{}, j.info.Logs...)
	return info
}

// Follow returns the log lines from index from on, the status, and a channel closed on change.
func (j *Job) Follow(from int) (lines []string, status Status, changed <-chan struct{}) {
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
		if status == Failed {
			return errors.New(*j.Info().Error)
		}
		if status == Done {
			return nil
		}
		<-changed
	}
}

// Registry holds the recent jobs by ID: every unfinished one, and the last finished ones.
type Registry struct {
	// Redact hides credentials in every log line and error of its jobs (default: none).
	Redact func(string) string
	// NewID makes a job's ID (default: a counter).
	NewID func() string

	mu    sync.Mutex
	jobs  map[string]*Job
	order []string
	next  int
}

// Create registers a new pending job whose cancel ends its work's context.
func (r *Registry) Create(command, target string, cancel context.CancelCauseFunc) *Job {
	redact := r.Redact
	if redact == nil {
		redact = func(s string) string { return s }
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	id := ""
	if r.NewID != nil {
		id = r.NewID()
	} else {
		r.next++
		id = fmt.Sprint(r.next)
	}
	j := &Job{
		info:    Info{ID: id, Command: command, Target: target, Created: time.Now(), Status: Pending},
		changed: make(chan struct{}),
		cancel:  cancel,
		redact:  redact,
	}
	if r.jobs == nil {
		r.jobs = map[string]*Job{}
	}
	r.jobs[id] = j
	r.order = append(r.order, id)
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

// Get returns the job with this ID, if the registry still has it.
func (r *Registry) Get(id string) (*Job, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, ok := r.jobs[id]
	return j, ok
}

// Unfinished returns the jobs that have not finished, oldest first.
func (r *Registry) Unfinished() []*Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*Job
	for _, id := range r.order {
		if j := r.jobs[id]; !j.Info().Status.Finished() {
			out = append(out, j)
		}
	}
	return out
}

// Newest returns the newest job for which match holds, if any.
func (r *Registry) Newest(match func(*Job) bool) *Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.order) - 1; i >= 0; i-- {
		if j := r.jobs[r.order[i]]; match(j) {
			return j
		}
	}
	return nil
}
