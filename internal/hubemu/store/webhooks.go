package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/hubemu"
)

// deliveryKindOf is the SQL for the kind of delivery a row of webhooks gets: "url" or "job".
const deliveryKindOf = "CASE WHEN job_id IS NULL THEN 'url' ELSE 'job' END"

// creationOrder sorts webhooks oldest first. IDs start with the creation second only, so within a
// second the rowid, which SQLite gives in insertion order, decides.
const creationOrder = "w.created_at, w.rowid"

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (t *tx) InsertWebhook(ctx context.Context, w *hubemu.Webhook) error {
	watched, _ := json.Marshal(w.Watched)
	domains, _ := json.Marshal(w.Domains)
	if err := t.exec(ctx, `INSERT INTO webhooks (id, user_id, url, job_id, watched, domains, secret, disabled, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, w.ID, w.UserID, w.URL, nullable(w.JobID), string(watched), string(domains), w.Secret,
		w.Disabled, ms(w.CreatedAt), ms(w.UpdatedAt)); err != nil {
		return err
	}
	if err := t.writeWatch(ctx, w.ID, w.Watched); err != nil {
		return err
	}
	return t.writeRecord(ctx, w.ID)
}

func (t *tx) UpdateWebhook(ctx context.Context, w *hubemu.Webhook) error {
	watched, _ := json.Marshal(w.Watched)
	domains, _ := json.Marshal(w.Domains)
	if err := t.exec(ctx, `UPDATE webhooks SET url = ?, job_id = ?, watched = ?, domains = ?, secret = ?, disabled = ?, updated_at = ?
		WHERE id = ?`, w.URL, nullable(w.JobID), string(watched), string(domains), w.Secret, w.Disabled, ms(w.UpdatedAt), w.ID); err != nil {
		return err
	}
	if err := t.writeWatch(ctx, w.ID, w.Watched); err != nil {
		return err
	}
	// Pending deliveries follow the webhook's kind (it may have turned from URL to job or back).
	if err := t.exec(ctx, `UPDATE deliveries SET kind = (SELECT `+deliveryKindOf+` FROM webhooks WHERE id = ?)
		WHERE webhook_id = ? AND state = ?`, w.ID, w.ID, hubemu.StatePending); err != nil {
		return err
	}
	return t.writeRecord(ctx, w.ID)
}

func (t *tx) writeWatch(ctx context.Context, id string, watched []hub.WatchedItem) error {
	if err := t.exec(ctx, "DELETE FROM webhook_watch WHERE webhook_id = ?", id); err != nil {
		return err
	}
	for _, item := range watched {
		if err := t.exec(ctx, "INSERT INTO webhook_watch (webhook_id, type, name) VALUES (?, ?, ?)", id, item.Type, item.Name); err != nil {
			return err
		}
	}
	return nil
}

// MergeWebhookSecrets applies spec rule 3: a listed secret replaces the stored value, an empty
// value removes that secret, and the others are kept.
func (t *tx) MergeWebhookSecrets(ctx context.Context, id string, secrets map[string]string) error {
	for name, value := range secrets {
		var err error
		if value == "" {
			err = t.exec(ctx, "DELETE FROM webhook_secrets WHERE webhook_id = ? AND name = ?", id, name)
		} else {
			err = t.exec(ctx, `INSERT INTO webhook_secrets (webhook_id, name, value) VALUES (?, ?, ?)
				ON CONFLICT (webhook_id, name) DO UPDATE SET value = excluded.value`, id, name, value)
		}
		if err != nil {
			return err
		}
	}
	return t.writeRecord(ctx, id)
}

func (t *tx) ClearWebhookSecrets(ctx context.Context, id string) error {
	if err := t.exec(ctx, "DELETE FROM webhook_secrets WHERE webhook_id = ?", id); err != nil {
		return err
	}
	return t.writeRecord(ctx, id)
}

func (t *tx) DeleteWebhook(ctx context.Context, userID, id string) error {
	res, err := t.tx.ExecContext(ctx, "DELETE FROM webhooks WHERE id = ? AND user_id = ?", id, userID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("webhook %s: %w", id, hubemu.ErrNotFound)
	}
	return nil
}

func (q queries) Webhook(ctx context.Context, userID, id string) (*hubemu.Webhook, error) {
	where, args := "w.id = ?", []any{id}
	if userID != "" {
		where, args = "w.user_id = ? AND w.id = ?", []any{userID, id}
	}
	list, err := q.loadWebhooks(ctx, where, args...)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("webhook %s: %w", id, hubemu.ErrNotFound)
	}
	return list[0], nil
}

func (q queries) Webhooks(ctx context.Context, userID string) ([]*hubemu.Webhook, error) {
	return q.loadWebhooks(ctx, "w.user_id = ?", userID)
}

func (q queries) loadWebhooks(ctx context.Context, where string, args ...any) ([]*hubemu.Webhook, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT w.id, w.user_id, w.url, COALESCE(w.job_id, ''), w.watched, w.domains, w.secret,
		w.disabled, w.created_at, w.updated_at FROM webhooks w WHERE `+where+` ORDER BY `+creationOrder, args...)
	if err != nil {
		return nil, err
	}
	var out []*hubemu.Webhook
	var jobIDs, jobHooks []string
	for rows.Next() {
		w := new(hubemu.Webhook)
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
	jobs, err := q.sourceJobs(ctx, "id IN ("+placeholders(len(jobIDs))+")", anySlice(jobIDs)...)
	if err != nil {
		return nil, err
	}
	byID := map[string]*hubemu.SourceJob{}
	for _, j := range jobs {
		byID[j.ID] = j
	}
	names, err := q.secretNames(ctx, jobHooks)
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

func (q queries) secretNames(ctx context.Context, webhookIDs []string) (map[string][]string, error) {
	rows, err := q.q.QueryContext(ctx, "SELECT webhook_id, name FROM webhook_secrets WHERE webhook_id IN ("+
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

func (q queries) WebhookSecrets(ctx context.Context, webhookID string) (map[string]string, error) {
	rows, err := q.q.QueryContext(ctx, "SELECT name, value FROM webhook_secrets WHERE webhook_id = ?", webhookID)
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

func (q queries) MatchingWebhooks(ctx context.Context, repo *hubemu.Repo, owner, domain string) ([]string, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT DISTINCT w.id, w.domains FROM webhook_watch ww JOIN webhooks w ON w.id = ww.webhook_id
		WHERE w.disabled = 0 AND ((ww.type = ? AND ww.name = ?) OR (ww.type IN ('user', 'org') AND ww.name = ?))
		AND (? = 0 OR w.user_id = ?)
		ORDER BY w.id`, repo.Type, repo.Name, owner, repo.Private, repo.OwnerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, domains string
		if err := rows.Scan(&id, &domains); err != nil {
			return nil, err
		}
		var list []string
		if err := json.Unmarshal([]byte(domains), &list); err != nil {
			return nil, fmt.Errorf("webhook %s: stored domains: %w", id, err)
		}
		for _, d := range list {
			if d == domain {
				out = append(out, id)
				break
			}
		}
	}
	return out, rows.Err()
}
