package hubemu

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
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
		return nil, errJobsOff()
	}
	if in.Domains == nil {
		d := append([]string(nil), domainList...)
		in.Domains = &d
	}
	now := e.now()
	w := &Webhook{ID: newID(now), UserID: userID, Watched: *in.Watched, Domains: *in.Domains}
	if in.URL != nil {
		w.URL = *in.URL
	}
	if in.JobSourceID != nil {
		w.JobID = *in.JobSourceID
	}
	if in.Secret != nil {
		w.Secret = *in.Secret
	}
	err := e.db.tx(ctx, func(tx *sql.Tx) error {
		if w.JobID != "" {
			if err := checkSourceJob(ctx, tx, userID, w.JobID); err != nil {
				return err
			}
		}
		watched, _ := json.Marshal(w.Watched)
		domains, _ := json.Marshal(w.Domains)
		var jobID any
		if w.JobID != "" {
			jobID = w.JobID
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhooks (id, user_id, url, job_id, watched, domains, secret, disabled, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`, w.ID, userID, w.URL, jobID, string(watched), string(domains), w.Secret, ms(now), ms(now)); err != nil {
			return err
		}
		if err := writeWatch(ctx, tx, w.ID, w.Watched); err != nil {
			return err
		}
		if in.Secrets != nil {
			if err := mergeSecrets(ctx, tx, w.ID, *in.Secrets); err != nil {
				return err
			}
		}
		return writeRecord(ctx, tx, w.ID)
	})
	if err != nil {
		return nil, err
	}
	return e.Webhook(ctx, userID, w.ID)
}

func checkSourceJob(ctx context.Context, tx *sql.Tx, userID, jobID string) error {
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM source_jobs WHERE id = ? AND user_id = ?", jobID, userID).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return errorf(fault.Invalid, "jobSourceId: you have no job %s (create one with POST %s)", jobID, pathJobs)
	}
	return nil
}

func writeWatch(ctx context.Context, tx *sql.Tx, id string, watched []hub.WatchedItem) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM webhook_watch WHERE webhook_id = ?", id); err != nil {
		return err
	}
	for _, item := range watched {
		if _, err := tx.ExecContext(ctx, "INSERT INTO webhook_watch (webhook_id, type, name) VALUES (?, ?, ?)", id, item.Type, item.Name); err != nil {
			return err
		}
	}
	return nil
}

// mergeSecrets applies spec rule 3: a listed secret replaces the stored value, an empty value
// removes that secret, and the others are kept.
func mergeSecrets(ctx context.Context, tx *sql.Tx, id string, secrets map[string]string) error {
	for name, value := range secrets {
		var err error
		if value == "" {
			_, err = tx.ExecContext(ctx, "DELETE FROM webhook_secrets WHERE webhook_id = ? AND name = ?", id, name)
		} else {
			_, err = tx.ExecContext(ctx, `INSERT INTO webhook_secrets (webhook_id, name, value) VALUES (?, ?, ?)
				ON CONFLICT (webhook_id, name) DO UPDATE SET value = excluded.value`, id, name, value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// UpdateWebhook changes the fields present in in. Giving a URL turns a job webhook into a URL
// webhook (its secrets are dropped); giving a jobSourceId does the reverse.
func (e *Emulator) UpdateWebhook(ctx context.Context, userID, id string, in WebhookInput) (*Webhook, error) {
	if err := in.validate(false); err != nil {
		return nil, err
	}
	if in.JobSourceID != nil && !e.allowJobs {
		return nil, errJobsOff()
	}
	err := e.db.tx(ctx, func(tx *sql.Tx) error {
		if err := ownWebhook(ctx, tx, userID, id); err != nil {
			return err
		}
		var sets []string
		var args []any
		set := func(col string, v any) { sets = append(sets, col+" = ?"); args = append(args, v) }
		if in.URL != nil {
			set("url", *in.URL)
			set("job_id", nil)
			if _, err := tx.ExecContext(ctx, "DELETE FROM webhook_secrets WHERE webhook_id = ?", id); err != nil {
				return err
			}
		}
		if in.JobSourceID != nil {
			if err := checkSourceJob(ctx, tx, userID, *in.JobSourceID); err != nil {
				return err
			}
			set("job_id", *in.JobSourceID)
			set("url", "")
		}
		if in.Watched != nil {
			b, _ := json.Marshal(*in.Watched)
			set("watched", string(b))
			if err := writeWatch(ctx, tx, id, *in.Watched); err != nil {
				return err
			}
		}
		if in.Domains != nil {
			b, _ := json.Marshal(*in.Domains)
			set("domains", string(b))
		}
		if in.Secret != nil {
			set("secret", *in.Secret)
		}
		if in.Secrets != nil {
			if err := mergeSecrets(ctx, tx, id, *in.Secrets); err != nil {
				return err
			}
		}
		set("updated_at", ms(e.now()))
		args = append(args, id)
		if _, err := tx.ExecContext(ctx, "UPDATE webhooks SET "+strings.Join(sets, ", ")+" WHERE id = ?", args...); err != nil {
			return err
		}
		if in.URL != nil || in.JobSourceID != nil { // pending deliveries follow the webhook's new kind
			if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET kind = (SELECT `+deliveryKindOf+` FROM webhooks WHERE id = ?)
				WHERE webhook_id = ? AND state = ?`, id, id, StatePending); err != nil {
				return err
			}
		}
		return writeRecord(ctx, tx, id)
	})
	if err != nil {
		return nil, err
	}
	return e.Webhook(ctx, userID, id)
}

func ownWebhook(ctx context.Context, tx *sql.Tx, userID, id string) error {
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM webhooks WHERE id = ? AND user_id = ?", id, userID).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return notFound("webhook", id)
	}
	return nil
}

// SetWebhookDisabled disables or enables a webhook. A disabled webhook receives nothing: deliveries
// still pending when it is disabled are skipped.
func (e *Emulator) SetWebhookDisabled(ctx context.Context, userID, id string, disabled bool) (*Webhook, error) {
	err := e.db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE webhooks SET disabled = ?, updated_at = ? WHERE id = ? AND user_id = ?",
			disabled, ms(e.now()), id, userID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("webhook", id)
		}
		return writeRecord(ctx, tx, id)
	})
	if err != nil {
		return nil, err
	}
	return e.Webhook(ctx, userID, id)
}

// DeleteWebhook removes a webhook with its deliveries, activity and job runs.
func (e *Emulator) DeleteWebhook(ctx context.Context, userID, id string) error {
	res, err := e.db.w.ExecContext(ctx, "DELETE FROM webhooks WHERE id = ? AND user_id = ?", id, userID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("webhook", id)
	}
	return nil
}

// Webhook returns one of the user's webhooks; another user's is not found.
func (e *Emulator) Webhook(ctx context.Context, userID, id string) (*Webhook, error) {
	list, err := loadWebhooks(ctx, e.db.r, "w.user_id = ? AND w.id = ?", userID, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, notFound("webhook", id)
	}
	return list[0], nil
}

// Webhooks returns the user's webhooks, oldest first.
func (e *Emulator) Webhooks(ctx context.Context, userID string) ([]*Webhook, error) {
	return loadWebhooks(ctx, e.db.r, "w.user_id = ?", userID)
}

// creationOrder sorts webhooks oldest first. IDs start with the creation second only, so within a
// second the rowid, which SQLite gives in insertion order, decides.
const creationOrder = "w.created_at, w.rowid"

func loadWebhooks(ctx context.Context, q querier, where string, args ...any) ([]*Webhook, error) {
	rows, err := q.QueryContext(ctx, `SELECT w.id, w.user_id, w.url, COALESCE(w.job_id, ''), w.watched, w.domains, w.secret,
		w.disabled, w.created_at, w.updated_at FROM webhooks w WHERE `+where+` ORDER BY `+creationOrder, args...)
	if err != nil {
		return nil, err
	}
	var out []*Webhook
	var jobIDs, jobHooks []string
	for rows.Next() {
		w := new(Webhook)
		var watched, domains string
		var created, updated int64
		if err := rows.Scan(&w.ID, &w.UserID, &w.URL, &w.JobID, &watched, &domains, &w.Secret, &w.Disabled, &created, &updated); err != nil {
			rows.Close()
			return nil, err
		}
		if err := json.Unmarshal([]byte(watched), &w.Watched); err != nil {
			rows.Close()
			return nil, fmt.Errorf("webhook %s: stored watched list: %w", w.ID, err)
		}
		if err := json.Unmarshal([]byte(domains), &w.Domains); err != nil {
			rows.Close()
			return nil, fmt.Errorf("webhook %s: stored domains: %w", w.ID, err)
		}
		w.CreatedAt, w.UpdatedAt = fromMS(created), fromMS(updated)
		if w.JobID != "" {
			jobIDs = append(jobIDs, w.JobID)
			jobHooks = append(jobHooks, w.ID)
		}
		out = append(out, w)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(jobIDs) == 0 {
		return out, nil
	}
	// Job webhooks: attach the source job and the names of the webhook's secrets.
	jobs, err := sourceJobs(ctx, q, "id IN ("+placeholders(len(jobIDs))+")", anySlice(jobIDs)...)
	if err != nil {
		return nil, err
	}
	byID := map[string]*SourceJob{}
	for _, j := range jobs {
		byID[j.ID] = j
	}
	names, err := secretNames(ctx, q, jobHooks)
	if err != nil {
		return nil, err
	}
	for _, w := range out {
		if w.JobID != "" {
			w.Job = byID[w.JobID]
			w.SecretNames = names[w.ID]
		}
	}
	return out, nil
}

func secretNames(ctx context.Context, q querier, webhookIDs []string) (map[string][]string, error) {
	rows, err := q.QueryContext(ctx, "SELECT webhook_id, name FROM webhook_secrets WHERE webhook_id IN ("+
		placeholders(len(webhookIDs))+") ORDER BY name", anySlice(webhookIDs)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, err
		}
		out[id] = append(out[id], name)
	}
	return out, rows.Err()
}

// webhookSecrets returns the values of a job webhook's secrets, for a run.
func (e *Emulator) webhookSecrets(ctx context.Context, webhookID string) (map[string]string, error) {
	rows, err := e.db.r.QueryContext(ctx, "SELECT name, value FROM webhook_secrets WHERE webhook_id = ?", webhookID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var n, v string
		if err := rows.Scan(&n, &v); err != nil {
			return nil, err
		}
		out[n] = v
	}
	return out, rows.Err()
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
