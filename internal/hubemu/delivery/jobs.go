package delivery

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/robothub/robothub/core/procgroup"
	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/hubemu"
)

// maxJobLog caps the log kept of one job run.
const maxJobLog = 1 << 20

// runJob runs the source job of a job webhook for one delivery, as a subprocess in a sandbox that
// keeps it away from this machine's services and files (sandbox.go), whose environment holds only
// PATH, HOME and TMPDIR (a fresh directory), the source job's environment, the webhook payload
// (WEBHOOK_PAYLOAD, WEBHOOK_REPO_ID, WEBHOOK_REPO_TYPE, WEBHOOK_SECRET) and the webhook's secrets.
// Neither the emulator's own environment nor the source job's secrets reach it.
func (d *Dispatcher) runJob(runCtx context.Context, t task) outcome {
	o := outcome{task: t, at: d.now(), target: "job " + t.jobID, final: true}
	start := time.Now()
	defer func() { o.latency = time.Since(start) }()
	if !d.allowJobs { // a job webhook stored by a run with --allow-jobs
		o.err = hubemu.JobsOff().Error()
		return o
	}

	job, err := d.db.SourceJob(runCtx, "", t.jobID)
	if err != nil {
		o.err = fmt.Sprintf("source job %s is gone", t.jobID)
		return o
	}
	secrets, err := d.db.WebhookSecrets(runCtx, t.webhookID)
	if err != nil {
		o.err = "reading the webhook's secrets: " + err.Error()
		return o
	}
	p, err := webhook.Parse(t.payload)
	if err != nil {
		o.err = "the stored payload does not parse: " + err.Error()
		return o
	}

	runID := hubemu.NewID(d.now())
	o.jobRunID = runID
	run := hubemu.JobRun{ID: runID, WebhookID: t.webhookID, DeliveryID: t.deliveryID, SourceJobID: t.jobID, State: hubemu.RunRunning, StartedAt: d.now()}
	if err := d.db.Update(runCtx, func(tx hubemu.Tx) error { return tx.StartJobRun(runCtx, run) }); err != nil {
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

	base, err := os.MkdirTemp("", "hubemu-run-")
	if err != nil {
		o.err = "making the run's directory: " + err.Error()
		o.run = &hubemu.RunEnd{State: hubemu.RunError, Err: o.err, At: d.now()}
		return o
	}
	defer os.RemoveAll(base)
	// home is the job's HOME and TMPDIR; root, the mount point of its root filesystem (sandbox.go).
	dir, root := filepath.Join(base, "home"), filepath.Join(base, "root")
	for _, p := range []string{dir, root} {
		if err := os.Mkdir(p, 0o700); err != nil {
			o.err = "making the run's directory: " + err.Error()
			o.run = &hubemu.RunEnd{State: hubemu.RunError, Err: o.err, At: d.now()}
			return o
		}
	}

	env := []string{"PATH=" + d.jobPath, "HOME=" + dir, "TMPDIR=" + dir}
	for _, k := range slices.Sorted(maps.Keys(job.Environment)) {
		env = append(env, k+"="+job.Environment[k])
	}
	env = append(env, "WEBHOOK_PAYLOAD="+string(t.payload), "WEBHOOK_REPO_ID="+p.Repo.Name, "WEBHOOK_REPO_TYPE="+p.Repo.Type)
	if t.secret != "" {
		env = append(env, "WEBHOOK_SECRET="+t.secret)
	}
	for _, k := range slices.Sorted(maps.Keys(secrets)) {
		env = append(env, k+"="+secrets[k])
	}

	ctx, cancel := context.WithTimeout(runCtx, d.jobTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, job.Command[0], job.Command[1:]...)
	cmd.Env, cmd.Dir = env, dir
	var log cappedBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	procgroup.KillOnCancel(cmd)
	cmd.WaitDelay = 5 * time.Second
	if err = startSandboxed(cmd, d.jobRead, dir, root); err == nil {
		err = cmd.Wait()
	}

	var exitCode *int
	state := hubemu.RunCompleted
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
		state, o.err = hubemu.RunError, "cancelled: the emulator is stopping"
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		state, o.err = hubemu.RunError, fmt.Sprintf("timeout: the job ran longer than %s and was killed", d.jobTimeout)
	case errors.As(err, &ee):
		state, o.err = hubemu.RunError, fmt.Sprintf("the job exited with status %d", ee.ExitCode())
	default:
		state, o.err = hubemu.RunError, "the job could not start: "+err.Error()
	}
	if !o.cancelled {
		o.run = &hubemu.RunEnd{State: state, ExitCode: exitCode, Err: o.err, Log: log.String(), At: d.now()}
	}
	return o
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
