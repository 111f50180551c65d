package hubemu

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/robothub/robothub/core/hub"
)

// Client calls the local hub's own API (beyond the public hub's) through a hub client, with its
// token, retries and errors. It sits here rather than in http/ so that a program that only calls
// the hub (robothub's front, cli/robothub) links none of the server.
type Client struct{ *hub.Client }

// Emit makes the emulator emit an event. It is sent once.
func (c Client) Emit(ctx context.Context, in EmitInput) (*EmitResult, error) {
	if in.Repo == "" || in.Scope == "" || in.Action == "" {
		return nil, &hub.ValidationError{Field: "repo", Problem: "an event needs a repo (type:owner/name), a scope and an action"}
	}
	var out EmitResult
	return &out, c.Send(ctx, hub.Call{Method: http.MethodPost, Path: APIPath + "/events", Body: in}, &out)
}

func webhookPath(id, suffix string) string {
	return APIPath + "/webhooks/" + url.PathEscape(id) + suffix
}

func withLimit(path string, limit int) string {
	if limit > 0 {
		return path + "?limit=" + strconv.Itoa(limit)
	}
	return path
}

// get sends an idempotent GET of path into out.
func (c Client) get(ctx context.Context, path string, out any) error {
	return c.Send(ctx, hub.Call{Method: http.MethodGet, Path: path, Idempotent: true}, out)
}

// Activity returns up to limit (0: the emulator's default) of a webhook's latest deliveries.
func (c Client) Activity(ctx context.Context, webhookID string, limit int) (*Activity, error) {
	if err := hub.CheckID("webhook_id", webhookID); err != nil {
		return nil, err
	}
	var out Activity
	return &out, c.get(ctx, withLimit(webhookPath(webhookID, "/activity"), limit), &out)
}

// Delivery returns one delivery with the payload as sent.
func (c Client) Delivery(ctx context.Context, webhookID, deliveryID string) (*Delivery, error) {
	if err := checkIDs(webhookID, deliveryID); err != nil {
		return nil, err
	}
	var out Delivery
	return &out, c.get(ctx, webhookPath(webhookID, "/deliveries/"+url.PathEscape(deliveryID)), &out)
}

// Replay sends a delivery's event again to the webhook's current URL and secret. It is sent once.
func (c Client) Replay(ctx context.Context, webhookID, deliveryID string) (*DeliveryRef, error) {
	if err := checkIDs(webhookID, deliveryID); err != nil {
		return nil, err
	}
	var out DeliveryRef
	p := webhookPath(webhookID, "/deliveries/"+url.PathEscape(deliveryID)+"/replay")
	return &out, c.Send(ctx, hub.Call{Method: http.MethodPost, Path: p}, &out)
}

func checkIDs(webhookID, deliveryID string) error {
	if err := hub.CheckID("webhook_id", webhookID); err != nil {
		return err
	}
	return hub.CheckID("delivery_id", deliveryID)
}

// CreateSourceJob stores a source job on the emulator. It is sent once.
func (c Client) CreateSourceJob(ctx context.Context, in JobInput) (*SourceJobRecord, error) {
	if len(in.Command) == 0 || in.Command[0] == "" {
		return nil, &hub.ValidationError{Field: "command", Problem: "give the program to run and its arguments"}
	}
	for _, m := range []map[string]string{in.Environment, in.Secrets} {
		if err := hub.CheckSecrets(m); err != nil {
			return nil, err
		}
	}
	var out SourceJobRecord
	return &out, c.Send(ctx, hub.Call{Method: http.MethodPost, Path: APIPath + "/jobs", Body: in}, &out)
}

// SourceJobs lists the caller's source jobs.
func (c Client) SourceJobs(ctx context.Context) ([]SourceJobRecord, error) {
	var out []SourceJobRecord
	return out, c.get(ctx, APIPath+"/jobs", &out)
}

// JobRuns lists a job webhook's runs, newest first, without their logs.
func (c Client) JobRuns(ctx context.Context, webhookID string, limit int) ([]JobRun, error) {
	if err := hub.CheckID("webhook_id", webhookID); err != nil {
		return nil, err
	}
	var out []JobRun
	return out, c.get(ctx, withLimit(webhookPath(webhookID, "/runs"), limit), &out)
}

// JobRun returns one run with its log.
func (c Client) JobRun(ctx context.Context, runID string) (*JobRun, error) {
	if err := hub.CheckID("run_id", runID); err != nil {
		return nil, err
	}
	var out JobRun
	return &out, c.get(ctx, APIPath+"/runs/"+url.PathEscape(runID), &out)
}
