package hub

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// The calls in this file exist only on the local hub emulator (robothub hub serve); the public hub
// answers them with 404.

// EmulatorPath is the root of the emulator-only API.
const EmulatorPath = "/api/emulator"

// EmitRequest describes an event for the emulator to emit, as a push or a discussion would.
type EmitRequest struct {
	Repo          string          `json:"repo"`   // type:owner/name, such as model:alice/bert
	Scope         string          `json:"scope"`  // repo, repo.content, repo.config, discussion, discussion.comment
	Action        string          `json:"action"` // create, update, delete, move
	Private       *bool           `json:"private,omitempty"`
	HeadSha       string          `json:"headSha,omitempty"`
	UpdatedConfig json.RawMessage `json:"updatedConfig,omitempty"`
	Discussion    *EmitDiscussion `json:"discussion,omitempty"`
	Comment       *EmitComment    `json:"comment,omitempty"`
	MovedTo       string          `json:"movedTo,omitempty"`
}

// EmitDiscussion describes the discussion of a discussion event; Num 0 is a new one on create and
// the latest one otherwise.
type EmitDiscussion struct {
	Num           int    `json:"num,omitempty"`
	Title         string `json:"title,omitempty"`
	IsPullRequest bool   `json:"isPullRequest,omitempty"`
	Status        string `json:"status,omitempty"`
}

// EmitComment describes the comment of a discussion.comment event.
type EmitComment struct {
	Content string `json:"content,omitempty"`
	Hidden  bool   `json:"hidden,omitempty"`
}

// EmitResult is the emitted event and the deliveries it queued.
type EmitResult struct {
	ID         string          `json:"id"`
	Payload    json.RawMessage `json:"payload"`
	Deliveries []DeliveryRef   `json:"deliveries"`
}

// DeliveryRef names a delivery and its state.
type DeliveryRef struct {
	ID        string `json:"id"`
	WebhookID string `json:"webhookId"`
	State     string `json:"state"` // pending, delivered, failed, skipped, rate_limited
}

// Activity is a webhook's recent deliveries, newest first.
type Activity struct {
	WebhookID    string     `json:"webhookId"`
	Triggers24h  int        `json:"triggers24h"`
	TriggerLimit int        `json:"triggerLimit"`
	Deliveries   []Delivery `json:"deliveries"`
}

// Delivery is one event sent to one webhook, with every attempt.
type Delivery struct {
	ID            string          `json:"id"`
	WebhookID     string          `json:"webhookId"`
	EventID       string          `json:"eventId"`
	Scope         string          `json:"scope"`
	Action        string          `json:"action"`
	Repo          string          `json:"repo"`
	ReplayOf      string          `json:"replayOf,omitempty"`
	State         string          `json:"state"`
	AttemptCount  int             `json:"attemptCount"`
	NextAttemptAt *time.Time      `json:"nextAttemptAt,omitempty"`
	LastStatus    int             `json:"lastStatus,omitempty"`
	LastError     string          `json:"lastError,omitempty"`
	CreatedAt     time.Time       `json:"createdAt"`
	Attempts      []Attempt       `json:"attempts"`
	Payload       json.RawMessage `json:"payload,omitempty"`
}

// Attempt is one try at a delivery.
type Attempt struct {
	At        time.Time `json:"at"`
	Target    string    `json:"target"`
	Status    int       `json:"status"`
	LatencyMS float64   `json:"latencyMs"`
	Error     string    `json:"error,omitempty"`
	Response  string    `json:"response,omitempty"`
	JobRunID  string    `json:"jobRunId,omitempty"`
}

// SourceJobRequest creates a source job: the command a job webhook runs.
type SourceJobRequest struct {
	Command     []string          `json:"command"`
	Environment map[string]string `json:"environment,omitempty"`
	Secrets     map[string]string `json:"secrets,omitempty"` // the job's own; never copied to webhooks
}

// SourceJob is a source job, with the names of its secrets.
type SourceJob struct {
	ID          string            `json:"id"`
	Command     []string          `json:"command"`
	Environment map[string]string `json:"environment"`
	SecretNames []string          `json:"secrets"`
	CreatedAt   time.Time         `json:"createdAt"`
}

// JobRun is one run of a job webhook's source job.
type JobRun struct {
	ID          string     `json:"id"`
	WebhookID   string     `json:"webhookId"`
	DeliveryID  string     `json:"deliveryId"`
	SourceJobID string     `json:"sourceJobId"`
	State       string     `json:"state"` // running, completed, error
	ExitCode    *int       `json:"exitCode,omitempty"`
	Error       string     `json:"error,omitempty"`
	Log         string     `json:"log,omitempty"`
	StartedAt   time.Time  `json:"startedAt"`
	FinishedAt  *time.Time `json:"finishedAt,omitempty"`
}

// Emit makes the emulator emit an event. It is sent once.
func (c *Client) Emit(ctx context.Context, r EmitRequest) (*EmitResult, error) {
	if r.Repo == "" || r.Scope == "" || r.Action == "" {
		return nil, invalid("repo", "an event needs a repo (type:owner/name), a scope and an action")
	}
	var out EmitResult
	if _, err := c.do(ctx, call{method: http.MethodPost, path: EmulatorPath + "/events", body: r}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func emulatorWebhookPath(id, suffix string) string {
	return EmulatorPath + "/webhooks/" + url.PathEscape(id) + suffix
}

func withLimit(path string, limit int) string {
	if limit > 0 {
		return path + "?limit=" + strconv.Itoa(limit)
	}
	return path
}

// Activity returns up to limit (0: the emulator's default) of a webhook's latest deliveries.
func (c *Client) Activity(ctx context.Context, webhookID string, limit int) (*Activity, error) {
	if err := checkID("webhook_id", webhookID); err != nil {
		return nil, err
	}
	var out Activity
	p := withLimit(emulatorWebhookPath(webhookID, "/activity"), limit)
	if _, err := c.do(ctx, call{method: http.MethodGet, path: p, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delivery returns one delivery with the payload as sent.
func (c *Client) Delivery(ctx context.Context, webhookID, deliveryID string) (*Delivery, error) {
	if err := checkID("webhook_id", webhookID); err != nil {
		return nil, err
	}
	if err := checkID("delivery_id", deliveryID); err != nil {
		return nil, err
	}
	var out Delivery
	p := emulatorWebhookPath(webhookID, "/deliveries/"+url.PathEscape(deliveryID))
	if _, err := c.do(ctx, call{method: http.MethodGet, path: p, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Replay sends a delivery's event again to the webhook's current URL and secret. It is sent once.
func (c *Client) Replay(ctx context.Context, webhookID, deliveryID string) (*DeliveryRef, error) {
	if err := checkID("webhook_id", webhookID); err != nil {
		return nil, err
	}
	if err := checkID("delivery_id", deliveryID); err != nil {
		return nil, err
	}
	var out DeliveryRef
	p := emulatorWebhookPath(webhookID, "/deliveries/"+url.PathEscape(deliveryID)+"/replay")
	if _, err := c.do(ctx, call{method: http.MethodPost, path: p}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateSourceJob stores a source job on the emulator. It is sent once.
func (c *Client) CreateSourceJob(ctx context.Context, r SourceJobRequest) (*SourceJob, error) {
	if len(r.Command) == 0 || r.Command[0] == "" {
		return nil, invalid("command", "give the program to run and its arguments")
	}
	for _, m := range []map[string]string{r.Environment, r.Secrets} {
		if err := checkSecrets(m); err != nil {
			return nil, err
		}
	}
	var out SourceJob
	if _, err := c.do(ctx, call{method: http.MethodPost, path: EmulatorPath + "/jobs", body: r}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SourceJobs lists the caller's source jobs.
func (c *Client) SourceJobs(ctx context.Context) ([]SourceJob, error) {
	var out []SourceJob
	if _, err := c.do(ctx, call{method: http.MethodGet, path: EmulatorPath + "/jobs", idempotent: true}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// JobRuns lists a job webhook's runs, newest first, without their logs.
func (c *Client) JobRuns(ctx context.Context, webhookID string, limit int) ([]JobRun, error) {
	if err := checkID("webhook_id", webhookID); err != nil {
		return nil, err
	}
	var out []JobRun
	p := withLimit(emulatorWebhookPath(webhookID, "/runs"), limit)
	if _, err := c.do(ctx, call{method: http.MethodGet, path: p, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// JobRun returns one run with its log.
func (c *Client) JobRun(ctx context.Context, runID string) (*JobRun, error) {
	if err := checkID("run_id", runID); err != nil {
		return nil, err
	}
	var out JobRun
	if _, err := c.do(ctx, call{method: http.MethodGet, path: EmulatorPath + "/runs/" + url.PathEscape(runID), idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
