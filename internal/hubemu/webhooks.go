package hubemu

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/robothub/robothub/core/fault"

	"github.com/robothub/robothub/core/hub"
)

// domainList is every domain, the hub's default. Items and domains are checked by core/hub's
// validation, the client's, so that the local hub refuses what the client refuses.
var domainList = []string{"repo", "discussion"}

// Webhook is a stored webhook. Exactly one of URL and JobID is set.
type Webhook struct {
	ID          string
	UserID      string
	URL         string
	JobID       string // the source job, for a job webhook
	Watched     []hub.WatchedItem
	Domains     []string
	Secret      string
	Disabled    bool
	SecretNames []string   // names of the secrets handed to job runs
	Job         *SourceJob // the source job, for a job webhook
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// WebhookInput is a create or update request in the hub's JSON shape. On update, absent (nil)
// fields keep their value.
type WebhookInput struct {
	URL         *string            `json:"url"`
	JobSourceID *string            `json:"jobSourceId"`
	Watched     *[]hub.WatchedItem `json:"watched"`
	Domains     *[]string          `json:"domains"`
	Secret      *string            `json:"secret"`
	Secrets     *map[string]string `json:"secrets"`
}

func (in *WebhookInput) validate(create bool) error {
	hasURL := in.URL != nil && *in.URL != ""
	hasJob := in.JobSourceID != nil && *in.JobSourceID != ""
	switch {
	case hasURL && hasJob:
		return errorf(fault.Invalid, "url and jobSourceId: give one of them, not both")
	case create && !hasURL && !hasJob:
		return errorf(fault.Invalid, "url or jobSourceId is required")
	case in.URL != nil && !hasURL:
		return errorf(fault.Invalid, "url: must not be empty")
	case in.JobSourceID != nil && !hasJob:
		return errorf(fault.Invalid, "jobSourceId: must not be empty")
	}
	if hasURL {
		if err := invalidInput(hub.CheckURL("url", *in.URL)); err != nil {
			return err
		}
	}
	if in.Secrets != nil && !hasJob {
		if create {
			return errorf(fault.Invalid, "secrets: only a job webhook (jobSourceId) has secrets")
		}
		return errorf(fault.Invalid, "secrets: send them together with jobSourceId")
	}
	if create && in.Watched == nil {
		return errorf(fault.Invalid, "watched: at least one item is required")
	}
	if !create && in.Watched != nil && len(*in.Watched) == 0 {
		// The public Python client sends "watched": [] on every update that does not change the
		// list (its CLI's update "only changes the provided options"): an empty list keeps it.
		in.Watched = nil
	}
	if in.Watched != nil {
		if len(*in.Watched) == 0 {
			return errorf(fault.Invalid, "watched: at least one item is required")
		}
		for i, w := range *in.Watched {
			if err := invalidInput(hub.CheckWatchedItem(fmt.Sprintf("watched[%d]", i), w)); err != nil {
				return err
			}
		}
	}
	if in.Domains != nil {
		if !create && len(*in.Domains) == 0 {
			return errorf(fault.Invalid, "domains: give at least one of repo, discussion")
		}
		d, err := normalizeDomains(*in.Domains)
		if err != nil {
			return err
		}
		*in.Domains = d
	}
	if in.Secret != nil {
		if err := invalidInput(hub.CheckSecret(*in.Secret)); err != nil {
			return err
		}
	}
	if in.Secrets != nil {
		if err := invalidInput(hub.CheckSecrets(*in.Secrets)); err != nil {
			return err
		}
	}
	return nil
}

// invalidInput turns the hub client's validation error into the emulator's: the local hub refuses
// what the client refuses, with the same words.
func invalidInput(err error) error {
	if err == nil {
		return nil
	}
	return errorf(fault.Invalid, "%s", err.Error())
}

func normalizeDomains(in []string) ([]string, error) {
	out, err := hub.NormalizeDomains(in)
	if err != nil {
		return nil, invalidInput(err)
	}
	if len(out) == 0 {
		return append([]string(nil), domainList...), nil // the hub's default: every domain
	}
	return out, nil
}

// CreateWebhook stores a new webhook of the user. A new webhook is enabled.
func (e *Emulator) CreateWebhook(ctx context.Context, userID string, in WebhookInput) (*Webhook, error) {
	if err := in.validate(true); err != nil {
		return nil, err
	}
	if in.JobSourceID != nil && !e.allowJobs {
		return nil, JobsOff()
	}
	if in.Domains == nil {
		d := append([]string(nil), domainList...)
		in.Domains = &d
	}
	now := e.now()
	w := &Webhook{ID: NewID(now), UserID: userID, Watched: *in.Watched, Domains: *in.Domains, CreatedAt: now, UpdatedAt: now}
	if in.URL != nil {
		w.URL = *in.URL
	}
	if in.JobSourceID != nil {
		w.JobID = *in.JobSourceID
	}
	if in.Secret != nil {
		w.Secret = *in.Secret
	}
	err := e.db.Update(ctx, func(tx Tx) error {
		if w.JobID != "" {
			if err := checkSourceJob(ctx, tx, userID, w.JobID); err != nil {
				return err
			}
		}
		if err := tx.InsertWebhook(ctx, w); err != nil {
			return err
		}
		if in.Secrets != nil {
			return tx.MergeWebhookSecrets(ctx, w.ID, *in.Secrets)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return e.Webhook(ctx, userID, w.ID)
}

func checkSourceJob(ctx context.Context, tx Tx, userID, jobID string) error {
	_, err := tx.SourceJob(ctx, userID, jobID)
	if errors.Is(err, ErrNotFound) {
		return errorf(fault.Invalid, "jobSourceId: you have no job %s (create one with POST %s)", jobID, PathJobs)
	}
	return err
}

// UpdateWebhook changes the fields present in in. Giving a URL turns a job webhook into a URL
// webhook (its secrets are dropped); giving a jobSourceId does the reverse. Pending deliveries
// follow the webhook's new kind.
func (e *Emulator) UpdateWebhook(ctx context.Context, userID, id string, in WebhookInput) (*Webhook, error) {
	if err := in.validate(false); err != nil {
		return nil, err
	}
	if in.JobSourceID != nil && !e.allowJobs {
		return nil, JobsOff()
	}
	err := e.db.Update(ctx, func(tx Tx) error {
		w, err := ownWebhook(ctx, tx, userID, id)
		if err != nil {
			return err
		}
		if in.URL != nil {
			w.URL, w.JobID = *in.URL, ""
			if err := tx.ClearWebhookSecrets(ctx, id); err != nil {
				return err
			}
		}
		if in.JobSourceID != nil {
			if err := checkSourceJob(ctx, tx, userID, *in.JobSourceID); err != nil {
				return err
			}
			w.JobID, w.URL = *in.JobSourceID, ""
		}
		if in.Watched != nil {
			w.Watched = *in.Watched
		}
		if in.Domains != nil {
			w.Domains = *in.Domains
		}
		if in.Secret != nil {
			w.Secret = *in.Secret
		}
		if in.Secrets != nil {
			if err := tx.MergeWebhookSecrets(ctx, id, *in.Secrets); err != nil {
				return err
			}
		}
		w.UpdatedAt = e.now()
		return tx.UpdateWebhook(ctx, w)
	})
	if err != nil {
		return nil, err
	}
	return e.Webhook(ctx, userID, id)
}

// ownWebhook returns a webhook of userID, or not found: another user's webhook is not found either.
func ownWebhook(ctx context.Context, q Reads, userID, id string) (*Webhook, error) {
	w, err := q.Webhook(ctx, userID, id)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("webhook", id)
	}
	return w, err
}

// SetWebhookDisabled disables or enables a webhook. A disabled webhook receives nothing: deliveries
// still pending when it is disabled are skipped.
func (e *Emulator) SetWebhookDisabled(ctx context.Context, userID, id string, disabled bool) (*Webhook, error) {
	err := e.db.Update(ctx, func(tx Tx) error {
		w, err := ownWebhook(ctx, tx, userID, id)
		if err != nil {
			return err
		}
		w.Disabled, w.UpdatedAt = disabled, e.now()
		return tx.UpdateWebhook(ctx, w)
	})
	if err != nil {
		return nil, err
	}
	return e.Webhook(ctx, userID, id)
}

// DeleteWebhook removes a webhook with its deliveries, activity and job runs.
func (e *Emulator) DeleteWebhook(ctx context.Context, userID, id string) error {
	err := e.db.Update(ctx, func(tx Tx) error { return tx.DeleteWebhook(ctx, userID, id) })
	if errors.Is(err, ErrNotFound) {
		return notFound("webhook", id)
	}
	return err
}

// Webhook returns one of the user's webhooks; another user's is not found.
func (e *Emulator) Webhook(ctx context.Context, userID, id string) (*Webhook, error) {
	return ownWebhook(ctx, e.db, userID, id)
}

// Webhooks returns the user's webhooks, oldest first.
func (e *Emulator) Webhooks(ctx context.Context, userID string) ([]*Webhook, error) {
	return e.db.Webhooks(ctx, userID)
}

// WebhookListJSON returns the user's webhooks as the list API answers them: a JSON array of records.
func (e *Emulator) WebhookListJSON(ctx context.Context, userID string) ([]byte, error) {
	return e.db.WebhookListJSON(ctx, userID)
}

// WebhookRecord is a webhook in the hub's JSON shape: core/hub's record, whose job part the
// emulator always fills in whole (every list present, empty or not).
type WebhookRecord struct {
	hub.Webhook
	Job *JobRecord `json:"job,omitempty"`
}

// JobRecord is the job a job webhook runs, with the names (never the values) of its secrets.
type JobRecord struct {
	ID          string            `json:"id"`
	Command     []string          `json:"command"`
	Arguments   []string          `json:"arguments"`
	Environment map[string]string `json:"environment"`
	Secrets     []string          `json:"secrets"`
}

// Record returns the webhook as the API shows it.
func (w *Webhook) Record() WebhookRecord {
	rec := WebhookRecord{Webhook: hub.Webhook{ID: w.ID, URL: w.URL, Watched: w.Watched, Domains: w.Domains, Secret: w.Secret, Disabled: w.Disabled}}
	if w.JobID != "" {
		j := &JobRecord{ID: w.JobID, Command: []string{}, Arguments: []string{}, Environment: map[string]string{}, Secrets: w.SecretNames}
		if w.Job != nil {
			j.Command = w.Job.Command
			j.Environment = w.Job.Environment
		}
		if j.Secrets == nil {
			j.Secrets = []string{}
		}
		rec.Job = j
	}
	return rec
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
