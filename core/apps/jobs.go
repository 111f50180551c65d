package apps

import (
	"errors"
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

// Job is a background job (install, update or remove) with a live log.
type Job struct {
	mu      sync.Mutex
	info    JobInfo // ID, Command, Target and Created never change
	partial string
	changed chan struct{} // closed and replaced on every change
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

func (r *jobRegistry) create(command, target string) *Job {
	j := &Job{
		info:    JobInfo{ID: randomHex(8), Command: command, Target: target, Created: time.Now(), Status: JobPending},
		changed: make(chan struct{}),
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
