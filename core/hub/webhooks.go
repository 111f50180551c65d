package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/robothub/robothub/core/fault"
)

// WebhooksPath is the root of the management API.
const WebhooksPath = "/api/settings/webhooks"

type webhookEnvelope struct {
	Webhook *Webhook `json:"webhook"`
}

func webhookPath(id string, suffix string) string {
	return WebhooksPath + "/" + url.PathEscape(id) + suffix
}

func (c *Client) one(ctx context.Context, cl Call) (*Webhook, error) {
	var env webhookEnvelope
	if _, err := c.do(ctx, cl, &env); err != nil {
		return nil, err
	}
	if env.Webhook == nil {
		return nil, fmt.Errorf("%s %s: the hub's answer has no \"webhook\" object", cl.Method, cl.Path)
	}
	return env.Webhook, nil
}

// List returns the caller's webhooks.
func (c *Client) List(ctx context.Context) ([]Webhook, error) {
	return list[Webhook](ctx, c, WebhooksPath)
}

// Get returns one webhook. Another user's webhook is fault.ErrNotFound, as a missing one is.
func (c *Client) Get(ctx context.Context, id string) (*Webhook, error) {
	return c.byID(ctx, http.MethodGet, id, "")
}

type createBody struct {
	Watched     []WatchedItem     `json:"watched"`
	Domains     []string          `json:"domains,omitempty"`
	Secret      string            `json:"secret,omitempty"`
	URL         string            `json:"url,omitempty"`
	JobSourceID string            `json:"jobSourceId,omitempty"`
	Secrets     map[string]string `json:"secrets,omitempty"`
}

// Create makes a webhook and returns its record. The request is checked first; it is sent once and
// never retried, so a failure can never leave two webhooks behind.
func (c *Client) Create(ctx context.Context, r CreateRequest) (*Webhook, error) {
	r, err := r.Validate()
	if err != nil {
		return nil, err
	}
	body := createBody{Watched: r.Watched, Domains: r.Domains, Secret: r.Secret, URL: r.URL, JobSourceID: r.JobID, Secrets: r.Secrets}
	return c.one(ctx, Call{Method: http.MethodPost, Path: WebhooksPath, Body: body})
}

// updateBody sends the fields that are set (omitzero omits a nil slice, map or pointer, but not an
// empty one), in the order of a JSON object's sorted keys.
type updateBody struct {
	Domains     []string          `json:"domains,omitzero"`
	JobSourceID string            `json:"jobSourceId,omitzero"`
	Secret      *string           `json:"secret,omitzero"`
	Secrets     map[string]string `json:"secrets,omitzero"`
	URL         *string           `json:"url,omitzero"`
	Watched     []WatchedItem     `json:"watched,omitzero"`
}

// Update changes only the fields set in r and returns the updated record.
func (c *Client) Update(ctx context.Context, id string, r UpdateRequest) (*Webhook, error) {
	if err := CheckID("webhook_id", id); err != nil {
		return nil, err
	}
	r, err := r.Validate()
	if err != nil {
		return nil, err
	}
	body := updateBody{Domains: r.Domains, JobSourceID: r.JobID, Secret: r.Secret, Secrets: r.Secrets, URL: r.URL, Watched: r.Watched}
	// Setting the same fields twice gives the same webhook: safe to retry.
	return c.one(ctx, Call{Method: http.MethodPost, Path: webhookPath(id, ""), Body: body, Idempotent: true})
}

// Enable makes a disabled webhook deliver again. Enabling an enabled webhook changes nothing.
func (c *Client) Enable(ctx context.Context, id string) (*Webhook, error) {
	return c.byID(ctx, http.MethodPost, id, "/enable")
}

// Disable stops a webhook's deliveries and keeps the webhook.
func (c *Client) Disable(ctx context.Context, id string) (*Webhook, error) {
	return c.byID(ctx, http.MethodPost, id, "/disable")
}

// byID sends an idempotent call on webhook id and returns the webhook of the answer.
func (c *Client) byID(ctx context.Context, method, id, suffix string) (*Webhook, error) {
	if err := CheckID("webhook_id", id); err != nil {
		return nil, err
	}
	return c.one(ctx, Call{Method: method, Path: webhookPath(id, suffix), Idempotent: true})
}

// Delete removes a webhook for good.
func (c *Client) Delete(ctx context.Context, id string) error {
	if err := CheckID("webhook_id", id); err != nil {
		return err
	}
	unknown, err := c.do(ctx, Call{Method: http.MethodDelete, Path: webhookPath(id, ""), Idempotent: true}, nil)
	if unknown && errors.Is(err, fault.ErrNotFound) {
		// An earlier attempt got no answer and this one finds nothing: that attempt deleted it.
		return nil
	}
	return err
}
