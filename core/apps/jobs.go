package apps

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/robothub/robothub/core/apps/job"
	"github.com/robothub/robothub/core/fault"
)

// The lifecycle's jobs are core/apps/job's; these names keep their callers' spelling.
type (
	// Job is a background job (install, update or remove) with a live log.
	Job = job.Job
	// JobInfo is a snapshot of a job.
	JobInfo = job.Info
	// JobStatus is the status of a background job.
	JobStatus = job.Status
)

// The job statuses, the public daemon's: pending → in_progress → done or failed.
const (
	JobPending    = job.Pending
	JobInProgress = job.InProgress
	JobDone       = job.Done
	JobFailed     = job.Failed
)

// ErrCancelled is the cause of a job cancelled through CancelJob.
var ErrCancelled = job.ErrCancelled

// pendingInstall returns the unfinished install or update job that brings app name, if any.
func (m *Manager) pendingInstall(name string) *Job {
	return m.jobs.Newest(func(j *Job) bool { return j.Brings(name, "install", "update") })
}

// describeStep says in a few words where a job is, for a message.
func describeStep(j *Job) string {
	info := j.Info()
	if info.Status == JobPending {
		return "waiting for another job to finish"
	}
	for i := len(info.Logs) - 1; i >= 0; i-- {
		for _, p := range []struct{ prefix, step string }{
			{"Installing from", "starting"}, {"Cloning", "getting the app"}, {"Copying", "getting the app"},
			{"Building the package", "building it"}, {"Installing dependencies", "getting its dependencies"},
			{"Resolving", "getting its dependencies"}, {"Installing ", "installing it"}, {"Restarting", "restarting it"},
		} {
			if strings.HasPrefix(info.Logs[i], p.prefix) {
				return p.step
			}
		}
	}
	return string(info.Status)
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
	info := j.Info()
	switch finished, busy := j.Cancel(); {
	case finished:
		return JobInfo{}, fault.Refusedf("Job %s has already finished (%s)", info.ID, j.Info().Status)
	case busy:
		return JobInfo{}, fault.Refusedf("Job %s is changing the apps venv (a local step, no network, bounded to %s): cancelling it would leave the venv half changed; it ends by itself", info.ID, changeDeadline)
	}
	m.log.Info("cancelling job", "job", info.ID, "command", info.Command, "target", info.Target)
	_ = j.Wait()
	return j.Info(), nil
}

// startJob runs work as a background job, one venv-changing job at a time; the job's context ends
// when it is cancelled. expected are the apps it is thought to bring (for start-app's message).
func (m *Manager) startJob(command, target string, expected []string, work func(context.Context, *Job) ([]string, error)) *Job {
	ctx, cancel := context.WithCancelCause(context.Background())
	j := m.jobs.Create(command, target, cancel)
	j.Expect(expected)
	m.jobsWG.Add(1)
	go func() {
		defer m.jobsWG.Done()
		defer cancel(nil)
		select {
		case m.venvMu <- struct{}{}:
		case <-ctx.Done():
			j.Logf("Job '%s %s' was cancelled before it started", command, target)
			j.SetStatus(JobFailed, fmt.Errorf("%w before it started", ErrCancelled))
			return
		}
		defer func() { <-m.venvMu }()
		j.SetStatus(JobInProgress, nil)
		apps, err := work(ctx, j)
		if err != nil {
			if errors.Is(context.Cause(ctx), ErrCancelled) {
				step, _, _ := strings.Cut(err.Error(), ": "+ErrCancelled.Error())
				if step == ErrCancelled.Error() {
					step = "before the apps venv changed"
				}
				err = fmt.Errorf("%w (%s); the installed version, if any, is unchanged", ErrCancelled, step)
			}
			j.Logf("Job '%s %s' failed: %v", command, target, err)
			m.log.Warn("job failed", "job", j.ID(), "command", command, "target", target, "err", err)
			j.SetStatus(JobFailed, err)
			return
		}
		j.Logf("Job '%s %s' completed successfully", command, target)
		m.log.Info("job done", "job", j.ID(), "command", command, "target", target, "apps", apps)
		j.SetStatus(JobDone, nil, apps...)
	}()
	return j
}
