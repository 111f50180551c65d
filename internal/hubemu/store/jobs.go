package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/robothub/robothub/internal/hubemu"
)

func (t *tx) InsertSourceJob(ctx context.Context, j *hubemu.SourceJob, secrets map[string]string) error {
	cmd, _ := json.Marshal(j.Command)
	env, _ := json.Marshal(j.Environment)
	sec, _ := json.Marshal(secrets)
	return t.exec(ctx, "INSERT INTO source_jobs (id, user_id, command, environment, secrets, created_at) VALUES (?, ?, ?, ?, ?, ?)",
		j.ID, j.UserID, string(cmd), string(env), string(sec), ms(j.CreatedAt))
}

func (q queries) SourceJob(ctx context.Context, userID, id string) (*hubemu.SourceJob, error) {
	where, args := "id = ?", []any{id}
	if userID != "" {
		where, args = "user_id = ? AND id = ?", []any{userID, id}
	}
	jobs, err := q.sourceJobs(ctx, where, args...)
	if err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("job %s: %w", id, hubemu.ErrNotFound)
	}
	return jobs[0], nil
}

func (q queries) SourceJobs(ctx context.Context, userID string) ([]*hubemu.SourceJob, error) {
	return q.sourceJobs(ctx, "user_id = ?", userID)
}

func (q queries) sourceJobs(ctx context.Context, where string, args ...any) ([]*hubemu.SourceJob, error) {
	rows, err := q.q.QueryContext(ctx, "SELECT id, user_id, command, environment, secrets, created_at FROM source_jobs WHERE "+where+" ORDER BY id", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*hubemu.SourceJob
	for rows.Next() {
		j := new(hubemu.SourceJob)
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
		j.SecretNames = make([]string, 0, len(secrets))
		for k := range secrets {
			j.SecretNames = append(j.SecretNames, k)
		}
		sort.Strings(j.SecretNames)
		j.CreatedAt = fromMS(created)
		out = append(out, j)
	}
	return out, rows.Err()
}

func (q queries) JobRuns(ctx context.Context, webhookID string, limit int) ([]hubemu.JobRun, error) {
	return q.jobRuns(ctx, false, "r.webhook_id = ? ORDER BY r.started_at DESC, r.id DESC LIMIT ?", webhookID, limit)
}

func (q queries) JobRun(ctx context.Context, userID, runID string) (*hubemu.JobRun, error) {
	runs, err := q.jobRuns(ctx, true, "r.id = ? AND w.user_id = ?", runID, userID)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("job run %s: %w", runID, hubemu.ErrNotFound)
	}
	return &runs[0], nil
}

func (q queries) jobRuns(ctx context.Context, withLog bool, where string, args ...any) ([]hubemu.JobRun, error) {
	logCol := "''"
	if withLog {
		logCol = "r.log"
	}
	rows, err := q.q.QueryContext(ctx, `SELECT r.id, r.webhook_id, r.delivery_id, r.source_job_id, r.state, r.exit_code, r.error, `+logCol+`,
		r.started_at, r.finished_at FROM job_runs r JOIN webhooks w ON w.id = r.webhook_id WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []hubemu.JobRun
	for rows.Next() {
		var r hubemu.JobRun
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

func (t *tx) StartJobRun(ctx context.Context, r hubemu.JobRun) error {
	return t.exec(ctx, `INSERT INTO job_runs (id, webhook_id, delivery_id, source_job_id, state, started_at) VALUES (?, ?, ?, ?, ?, ?)`,
		r.ID, r.WebhookID, r.DeliveryID, r.SourceJobID, r.State, ms(r.StartedAt))
}

func (t *tx) FinishJobRun(ctx context.Context, runID string, end hubemu.RunEnd) error {
	var code any
	if end.ExitCode != nil {
		code = *end.ExitCode
	}
	return t.exec(ctx, "UPDATE job_runs SET state = ?, exit_code = ?, error = ?, log = ?, finished_at = ? WHERE id = ?",
		end.State, code, end.Err, end.Log, ms(end.At), runID)
}
