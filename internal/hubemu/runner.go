package hubemu

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/robothub/robothub/core/procgroup"
	"github.com/robothub/robothub/core/webhook"
)

// maxJobLog caps the log kept of one job run.
const maxJobLog = 1 << 20

// runJob runs the source job of a job webhook for one delivery, as a subprocess whose environment
// holds only PATH, HOME (a fresh directory), the source job's environment, the webhook payload
// (WEBHOOK_PAYLOAD, WEBHOOK_REPO_ID, WEBHOOK_REPO_TYPE, WEBHOOK_SECRET) and the webhook's secrets.
// Neither the emulator's own environment nor the source job's secrets reach it.
func (e *Emulator) runJob(runCtx context.Context, t task) outcome {
	o := outcome{task: t, at: e.now(), target: "job " + t.jobID, final: true}
	start := time.Now()
	defer func() { o.latency = time.Since(start) }()
	if !e.allowJobs { // a job webhook stored by a run with --allow-jobs
		o.err = errJobsOff().Error()
		return o
	}

	jobs, err := sourceJobs(runCtx, e.db.r, "id = ?", t.jobID)
	if err != nil || len(jobs) == 0 {
		o.err = fmt.Sprintf("source job %s is gone", t.jobID)
		return o
	}
	job := jobs[0]
	secrets, err := e.webhookSecrets(runCtx, t.webhookID)
	if err != nil {
		o.err = "reading the webhook's secrets: " + err.Error()
		return o
	}
	p, err := webhook.Parse(t.payload)
	if err != nil {
		o.err = "the stored payload does not parse: " + err.Error()
		return o
	}

	runID := newID(e.now())
	o.jobRunID = runID
	if _, err := e.db.w.ExecContext(runCtx, `INSERT INTO job_runs (id, webhook_id, delivery_id, source_job_id, state, started_at)
		VALUES (?, ?, ?, ?, ?, ?)`, runID, t.webhookID, t.deliveryID, t.jobID, RunRunning, ms(e.now())); err != nil {
		// The job does not run. A full or read-only disk (or any other failure of the store) stops
		// Run, and the next Run runs the delivery: it stays leased.
		o.jobRunID = ""
		if runCtx.Err() != nil {
			o.cancelled = true
		} else {
			o.storeErr = err
		}
		return o
	}

	dir, err := os.MkdirTemp("", "hubemu-run-")
	if err != nil {
		o.err = "making the run's directory: " + err.Error()
		o.run = &runEnd{state: RunError, err: o.err, at: e.now()}
		return o
	}
	defer os.RemoveAll(dir)

	env := []string{"PATH=" + e.jobPath, "HOME=" + dir}
	for _, k := range sortedKeys(job.Environment) {
		env = append(env, k+"="+job.Environment[k])
	}
	env = append(env, "WEBHOOK_PAYLOAD="+string(t.payload), "WEBHOOK_REPO_ID="+p.Repo.Name, "WEBHOOK_REPO_TYPE="+p.Repo.Type)
	if t.secret != "" {
		env = append(env, "WEBHOOK_SECRET="+t.secret)
	}
	for _, k := range sortedKeys(secrets) {
		env = append(env, k+"="+secrets[k])
	}

	ctx, cancel := context.WithTimeout(runCtx, e.jobTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, job.Command[0], job.Command[1:]...)
	cmd.Env, cmd.Dir = env, dir
	var log cappedBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	procgroup.KillOnCancel(cmd)
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()

	var exitCode *int
	state := RunCompleted
	if cmd.ProcessState != nil {
		c := cmd.ProcessState.ExitCode()
		if c >= 0 {
			exitCode = &c
		}
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case runCtx.Err() != nil:
		o.cancelled = true
		state, o.err = RunError, "cancelled: the emulator is stopping"
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		state, o.err = RunError, fmt.Sprintf("timeout: the job ran longer than %s and was killed", e.jobTimeout)
	case errors.As(err, &ee):
		state, o.err = RunError, fmt.Sprintf("the job exited with status %d", ee.ExitCode())
	default:
		state, o.err = RunError, "the job could not start: "+err.Error()
	}
	if !o.cancelled {
		o.run = &runEnd{state: state, exitCode: exitCode, err: o.err, log: log.String(), at: e.now()}
	}
	return o
}

// runEnd is how a job run ended. It is recorded with the delivery's attempt, in one transaction:
// if the disk refuses that write, neither is kept, and the next Run marks the run interrupted and
// runs the delivery again.
type runEnd struct {
	state    string
	exitCode *int
	err      string
	log      string
	at       time.Time
}

func (r *runEnd) record(ctx context.Context, tx *sql.Tx, runID string) error {
	var code any
	if r.exitCode != nil {
		code = *r.exitCode
	}
	_, err := tx.ExecContext(ctx, "UPDATE job_runs SET state = ?, exit_code = ?, error = ?, log = ?, finished_at = ? WHERE id = ?",
		r.state, code, r.err, r.log, ms(r.at), runID)
	return err
}

// cappedBuffer keeps the first maxJobLog bytes written to it, from any number of goroutines.
type cappedBuffer struct {
	mu        sync.Mutex
	b         strings.Builder
	truncated bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := maxJobLog - c.b.Len()
	if len(p) > room {
		c.b.Write(p[:max(room, 0)])
		c.truncated = true
	} else {
		c.b.Write(p)
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.truncated {
		return c.b.String() + "\n[log truncated at 1 MiB]\n"
	}
	return c.b.String()
}
