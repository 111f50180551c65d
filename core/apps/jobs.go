package apps

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
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

// Job is a background job (install or remove) with a live log.
type Job struct {
	id, command, target string
	created             time.Time

	mu       sync.Mutex
	status   JobStatus
	err      string
	apps     []string
	logs     []string
	partial  string
	finished time.Time
	changed  chan struct{} // closed and replaced on every change
}

// maxJobLogLines bounds a job's log; older lines are dropped with a marker.
const maxJobLogLines = 5000

// ID returns the job's ID.
func (j *Job) ID() string { return j.id }

// Write appends output to the log, one line per newline; it makes a Job an io.Writer for pip and git.
func (j *Job) Write(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	text := j.partial + string(p)
	lines := strings.Split(text, "\n")
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

// appendLocked keeps one log line, its URLs' credentials redacted (git and pip may print the
// URLs they were given).
func (j *Job) appendLocked(line string) {
	line = RedactText(line)
	if len(j.logs) >= maxJobLogLines {
		j.logs = append(j.logs[:0], j.logs[len(j.logs)-maxJobLogLines/2:]...)
		j.logs[0] = "[earlier lines dropped]"
	}
	j.logs = append(j.logs, line)
}

func (j *Job) notifyLocked() {
	close(j.changed)
	j.changed = make(chan struct{})
}

func (j *Job) setStatus(s JobStatus, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.partial != "" {
		j.appendLocked(j.partial)
		j.partial = ""
	}
	j.status = s
	if err != nil {
		j.err = RedactText(err.Error())
	}
	if s.Finished() {
		j.finished = time.Now()
	}
	j.notifyLocked()
}

func (j *Job) setApps(apps []string) {
	j.mu.Lock()
	j.apps = apps
	j.mu.Unlock()
}

// Info returns a snapshot of the job.
func (j *Job) Info() JobInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	info := JobInfo{
		ID: j.id, Command: j.command, Target: j.target, Status: j.status,
		Apps: append([]string{}, j.apps...), Logs: append([]string{}, j.logs...), Created: j.created,
	}
	if j.err != "" {
		info.Error = new(j.err)
	}
	if !j.finished.IsZero() {
		info.Finished = new(j.finished)
	}
	return info
}

// Follow returns the log lines from index from on, the status, and a channel closed at the next
// change: a streaming reader calls it in a loop until the status is finished.
func (j *Job) Follow(from int) (lines []string, status JobStatus, changed <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if from < len(j.logs) {
		lines = append([]string(nil), j.logs[from:]...)
	}
	return lines, j.status, j.changed
}

// Wait blocks until the job has finished and returns its error, if any.
func (j *Job) Wait() error {
	for {
		_, status, changed := j.Follow(math.MaxInt)
		if status.Finished() {
			j.mu.Lock()
			defer j.mu.Unlock()
			if j.status == JobFailed {
				return fmt.Errorf("%s", j.err)
			}
			return nil
		}
		<-changed
	}
}

// jobRegistry keeps the recent jobs.
type jobRegistry struct {
	mu    sync.Mutex
	jobs  map[string]*Job
	order []string
}

const maxJobs = 200

func (r *jobRegistry) create(command, target string) *Job {
	j := &Job{
		id: randomHex(8), command: command, target: target, created: time.Now(),
		status: JobPending, changed: make(chan struct{}),
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.jobs == nil {
		r.jobs = map[string]*Job{}
	}
	r.jobs[j.id] = j
	r.order = append(r.order, j.id)
	// Forget the oldest finished jobs beyond the bound.
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

func (r *jobRegistry) get(id string) (*Job, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, ok := r.jobs[id]
	return j, ok
}
