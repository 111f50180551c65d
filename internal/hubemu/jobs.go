package hubemu

import (
	"context"
	"errors"
	"time"

	"github.com/robothub/robothub/core/fault"

	"github.com/robothub/robothub/core/hub"
)

// SourceJob is a job definition that job webhooks run: a command (program and arguments), run
// locally as a subprocess, with its environment. Its own secrets stay with it: a webhook's runs get
// the webhook's secrets, never these (spec rule 2).
type SourceJob struct {
	ID          string
	UserID      string
	Command     []string
	Environment map[string]string
	SecretNames []string // names of the job's own secrets
	CreatedAt   time.Time
}

// JobInput creates a source job.
type JobInput struct {
	Command     []string          `json:"command"`
	Environment map[string]string `json:"environment"`
	Secrets     map[string]string `json:"secrets"`
}

// CreateSourceJob stores a source job of the user.
func (e *Emulator) CreateSourceJob(ctx context.Context, userID string, in JobInput) (*SourceJob, error) {
	if !e.allowJobs {
		return nil, JobsOff()
	}
	if len(in.Command) == 0 || in.Command[0] == "" {
		return nil, errorf(fault.Invalid, "command: give the program to run and its arguments, such as [\"sh\", \"-c\", \"echo $WEBHOOK_PAYLOAD\"]")
	}
	for name := range in.Environment {
		if !hub.IsEnvName(name) {
			return nil, errorf(fault.Invalid, "environment: %q is not a valid variable name", name)
		}
	}
	for name := range in.Secrets {
		if !hub.IsEnvName(name) {
			return nil, errorf(fault.Invalid, "secrets: %q is not a valid variable name", name)
		}
	}
	if in.Environment == nil {
		in.Environment = map[string]string{}
	}
	if in.Secrets == nil {
		in.Secrets = map[string]string{}
	}
	now := e.now()
	j := &SourceJob{ID: NewID(now), UserID: userID, Command: in.Command, Environment: in.Environment,
		SecretNames: sortedKeys(in.Secrets), CreatedAt: now.UTC().Truncate(time.Millisecond)}
	if err := e.db.Update(ctx, func(tx Tx) error { return tx.InsertSourceJob(ctx, j, in.Secrets) }); err != nil {
		return nil, err
	}
	return j, nil
}

// SourceJobs returns the user's source jobs, oldest first.
func (e *Emulator) SourceJobs(ctx context.Context, userID string) ([]*SourceJob, error) {
	return e.db.SourceJobs(ctx, userID)
}

// SourceJob returns one of the user's source jobs.
func (e *Emulator) SourceJob(ctx context.Context, userID, id string) (*SourceJob, error) {
	j, err := e.db.SourceJob(ctx, userID, id)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("job", id)
	}
	return j, err
}

// SourceJobRecord is a source job in the emulator's JSON: the names of its secrets, not their values.
type SourceJobRecord struct {
	ID          string            `json:"id"`
	Command     []string          `json:"command"`
	Environment map[string]string `json:"environment"`
	Secrets     []string          `json:"secrets"`
	CreatedAt   time.Time         `json:"createdAt"`
}

// Record returns the source job as the API shows it.
func (j *SourceJob) Record() SourceJobRecord {
	rec := SourceJobRecord{ID: j.ID, Command: j.Command, Environment: j.Environment, Secrets: j.SecretNames, CreatedAt: j.CreatedAt}
	if rec.Secrets == nil {
		rec.Secrets = []string{}
	}
	return rec
}

// APIPath is the root of the emulator's own API, beside the hub's: events, activity, replay, jobs.
// The public hub answers it with 404.
const APIPath = "/api/emulator"

// PathJobs is the emulator's route of source jobs.
const PathJobs = APIPath + "/jobs"

// Job run states.
const (
	RunRunning   = "running"
	RunCompleted = "completed" // the command exited with status 0
	RunError     = "error"     // it exited with another status, could not start, timed out, or was interrupted
)

// JobRun is one run of a job webhook's source job, triggered by one delivery.
type JobRun struct {
	ID          string     `json:"id"`
	WebhookID   string     `json:"webhookId"`
	DeliveryID  string     `json:"deliveryId"`
	SourceJobID string     `json:"sourceJobId"`
	State       string     `json:"state"`
	ExitCode    *int       `json:"exitCode,omitempty"`
	Error       string     `json:"error,omitempty"`
	Log         string     `json:"log,omitempty"`
	StartedAt   time.Time  `json:"startedAt"`
	FinishedAt  *time.Time `json:"finishedAt,omitempty"`
}

// JobRuns returns the runs of one of the user's webhooks, newest first, without their logs.
func (e *Emulator) JobRuns(ctx context.Context, userID, webhookID string, limit int) ([]JobRun, error) {
	if _, err := e.Webhook(ctx, userID, webhookID); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 100
	}
	return e.db.JobRuns(ctx, webhookID, limit)
}

// JobRun returns one run of the user's webhooks with its log.
func (e *Emulator) JobRun(ctx context.Context, userID, runID string) (*JobRun, error) {
	run, err := e.db.JobRun(ctx, userID, runID)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("job run", runID)
	}
	return run, err
}

// errJobsOff is the answer to a job request on a hub started without --allow-jobs.
func JobsOff() error {
	return errorf(fault.Forbidden, "jobs are off on this hub: a job webhook runs a command on this machine, as the hub's user; start the hub with robothub hub serve --allow-jobs (robothub dev does) to use them")
}
