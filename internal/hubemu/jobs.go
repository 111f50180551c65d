package hubemu

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
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
		return nil, errJobsOff()
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
	j := &SourceJob{ID: newID(now), UserID: userID, Command: in.Command, Environment: in.Environment,
		SecretNames: sortedKeys(in.Secrets), CreatedAt: now.UTC().Truncate(time.Millisecond)}
	cmd, _ := json.Marshal(in.Command)
	env, _ := json.Marshal(in.Environment)
	sec, _ := json.Marshal(in.Secrets)
	_, err := e.db.w.ExecContext(ctx, "INSERT INTO source_jobs (id, user_id, command, environment, secrets, created_at) VALUES (?, ?, ?, ?, ?, ?)",
		j.ID, userID, string(cmd), string(env), string(sec), ms(now))
	if err != nil {
		return nil, err
	}
	return j, nil
}

// SourceJobs returns the user's source jobs, oldest first.
func (e *Emulator) SourceJobs(ctx context.Context, userID string) ([]*SourceJob, error) {
	return sourceJobs(ctx, e.db.r, "user_id = ?", userID)
}

// SourceJob returns one of the user's source jobs.
func (e *Emulator) SourceJob(ctx context.Context, userID, id string) (*SourceJob, error) {
	jobs, err := sourceJobs(ctx, e.db.r, "user_id = ? AND id = ?", userID, id)
	if err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, notFound("job", id)
	}
	return jobs[0], nil
}

func sourceJobs(ctx context.Context, q querier, where string, args ...any) ([]*SourceJob, error) {
	rows, err := q.QueryContext(ctx, "SELECT id, user_id, command, environment, secrets, created_at FROM source_jobs WHERE "+where+" ORDER BY id", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*SourceJob
	for rows.Next() {
		j := new(SourceJob)
		var cmd, env, sec string
		var created int64
		if err := rows.Scan(&j.ID, &j.UserID, &cmd, &env, &sec, &created); err != nil {
			return nil, err
		}
		var secrets map[string]string
		if err := errors.Join(json.Unmarshal([]byte(cmd), &j.Command), json.Unmarshal([]byte(env), &j.Environment),
			json.Unmarshal([]byte(sec), &secrets)); err != nil {
			return nil, fmt.Errorf("job %s: stored fields: %w", j.ID, err)
		}
		j.SecretNames = sortedKeys(secrets)
		j.CreatedAt = fromMS(created)
		out = append(out, j)
	}
	return out, rows.Err()
}

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
	return e.jobRuns(ctx, false, "r.webhook_id = ? ORDER BY r.started_at DESC, r.id DESC LIMIT ?", webhookID, limit)
}

// JobRun returns one run of the user's webhooks with its log.
func (e *Emulator) JobRun(ctx context.Context, userID, runID string) (*JobRun, error) {
	runs, err := e.jobRuns(ctx, true, "r.id = ? AND w.user_id = ?", runID, userID)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, notFound("job run", runID)
	}
	return &runs[0], nil
}

func (e *Emulator) jobRuns(ctx context.Context, withLog bool, where string, args ...any) ([]JobRun, error) {
	logCol := "''"
	if withLog {
		logCol = "r.log"
	}
	rows, err := e.db.r.QueryContext(ctx, `SELECT r.id, r.webhook_id, r.delivery_id, r.source_job_id, r.state, r.exit_code, r.error, `+logCol+`,
		r.started_at, r.finished_at FROM job_runs r JOIN webhooks w ON w.id = r.webhook_id WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []JobRun
	for rows.Next() {
		var r JobRun
		var exit, finished sql.NullInt64
		var started int64
		if err := rows.Scan(&r.ID, &r.WebhookID, &r.DeliveryID, &r.SourceJobID, &r.State, &exit, &r.Error, &r.Log, &started, &finished); err != nil {
			return nil, err
		}
		if exit.Valid {
			c := int(exit.Int64)
			r.ExitCode = &c
		}
		r.StartedAt = fromMS(started)
		if finished.Valid {
			t := fromMS(finished.Int64)
			r.FinishedAt = &t
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// errJobsOff is the answer to a job request on a hub started without --allow-jobs.
func errJobsOff() error {
	return errorf(fault.Forbidden, "jobs are off on this hub: a job webhook runs a command on this machine, as the hub's user; start the hub with robothub hub serve --allow-jobs (robothub dev does) to use them")
}
