package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/robothub/robothub/internal/hubemu"
)

func (t *tx) InsertDelivery(ctx context.Context, d hubemu.NewDelivery) error {
	return t.exec(ctx, `INSERT INTO deliveries (id, webhook_id, event_id, replay_of, emitter_id, state, kind, next_attempt_at, last_error, created_at, updated_at)
		SELECT ?, id, ?, ?, ?, ?, `+deliveryKindOf+`, ?, ?, ?, ? FROM webhooks WHERE id = ?`,
		d.ID, d.EventID, d.ReplayOf, d.EmitterID, d.State, ms(d.CreatedAt), d.LastError, ms(d.CreatedAt), ms(d.CreatedAt), d.WebhookID)
}

func (q queries) TriggersSince(ctx context.Context, webhookID string, since time.Time) (int, time.Time, error) {
	var n int
	var oldest sql.NullInt64
	err := q.q.QueryRowContext(ctx, "SELECT COUNT(*), MIN(created_at) FROM deliveries WHERE webhook_id = ? AND created_at > ? AND state != ?",
		webhookID, ms(since), hubemu.StateRateLimited).Scan(&n, &oldest)
	return n, fromMS(oldest.Int64), err
}

func (q queries) EmitterTriggersSince(ctx context.Context, webhookID, emitterID string, since time.Time) (int, time.Time, error) {
	var n int
	var oldest sql.NullInt64
	err := q.q.QueryRowContext(ctx, `SELECT COUNT(*), MIN(created_at) FROM deliveries
		WHERE webhook_id = ? AND emitter_id = ? AND created_at > ? AND state != ?`,
		webhookID, emitterID, ms(since), hubemu.StateRateLimited).Scan(&n, &oldest)
	return n, fromMS(oldest.Int64), err
}

func (q queries) DeliveryEvent(ctx context.Context, webhookID, deliveryID string) (string, error) {
	var eventID string
	err := q.q.QueryRowContext(ctx, "SELECT event_id FROM deliveries WHERE id = ? AND webhook_id = ?", deliveryID, webhookID).Scan(&eventID)
	return eventID, notFound("delivery "+deliveryID, err)
}

func (t *tx) ReleaseLeases(ctx context.Context, reason string, at time.Time) error {
	if err := t.exec(ctx, "UPDATE deliveries SET leased = 0 WHERE leased = 1"); err != nil {
		return err
	}
	return t.exec(ctx, "UPDATE job_runs SET state = ?, error = ?, finished_at = ? WHERE state = ?",
		hubemu.RunError, reason, ms(at), hubemu.RunRunning)
}

func (t *tx) ClaimDeliveries(ctx context.Context, kind string, n int, now time.Time) ([]hubemu.Claim, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT d.id, d.webhook_id, d.attempts, w.url, w.secret, COALESCE(w.job_id, ''), w.disabled, ev.payload
		FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN events ev ON ev.id = d.event_id
		WHERE d.state = ? AND d.leased = 0 AND d.kind = ? AND d.next_attempt_at <= ?
		ORDER BY d.next_attempt_at, d.id LIMIT ?`, hubemu.StatePending, kind, ms(now), n)
	if err != nil {
		return nil, err
	}
	var out []hubemu.Claim
	for rows.Next() {
		var c hubemu.Claim
		if err := rows.Scan(&c.DeliveryID, &c.WebhookID, &c.Attempts, &c.URL, &c.Secret, &c.JobID, &c.Disabled, &c.Payload); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, c := range out {
		if err := t.exec(ctx, "UPDATE deliveries SET leased = 1 WHERE id = ?", c.DeliveryID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (q queries) NextDue(ctx context.Context, kind string) (time.Time, bool, error) {
	var at int64
	err := q.q.QueryRowContext(ctx, `SELECT next_attempt_at FROM deliveries WHERE state = ? AND leased = 0 AND kind = ?
		ORDER BY next_attempt_at LIMIT 1`, hubemu.StatePending, kind).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	return fromMS(at), err == nil, err
}

func (t *tx) SkipDelivery(ctx context.Context, deliveryID, reason string, at time.Time) error {
	return t.exec(ctx, "UPDATE deliveries SET state = ?, leased = 0, last_error = ?, updated_at = ? WHERE id = ?",
		hubemu.StateSkipped, reason, ms(at), deliveryID)
}

func (t *tx) RecordAttempt(ctx context.Context, a hubemu.AttemptRecord) error {
	// The webhook (and with it the delivery) may have been deleted while this attempt ran.
	if err := t.exec(ctx, `INSERT INTO attempts (delivery_id, at, target, status, latency_us, error, response, job_run_id)
		SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM deliveries WHERE id = ?)`,
		a.DeliveryID, ms(a.At), a.Target, a.Status, a.Latency.Microseconds(), a.Error, a.Response, a.JobRunID, a.DeliveryID); err != nil {
		return err
	}
	return t.exec(ctx, `UPDATE deliveries SET state = ?, leased = 0, attempts = ?, next_attempt_at = ?, last_status = ?,
		last_error = ?, updated_at = ? WHERE id = ?`, a.State, a.Attempts, ms(a.NextAttemptAt), a.Status, a.Error, ms(a.UpdatedAt), a.DeliveryID)
}

func (q queries) Deliveries(ctx context.Context, webhookID, deliveryID string, limit int) ([]hubemu.Delivery, error) {
	where, args := "d.webhook_id = ? ORDER BY d.created_at DESC, d.id DESC LIMIT ?", []any{webhookID, limit}
	withPayload := deliveryID != ""
	if withPayload {
		where, args = "d.webhook_id = ? AND d.id = ?", []any{webhookID, deliveryID}
	}
	rows, err := q.q.QueryContext(ctx, `SELECT d.id, d.webhook_id, d.event_id, ev.scope, ev.action, r.type || ':' || r.name, d.replay_of,
		d.state, d.attempts, d.next_attempt_at, d.last_status, d.last_error, d.created_at, ev.payload
		FROM deliveries d JOIN events ev ON ev.id = d.event_id LEFT JOIN repos r ON r.id = ev.repo_id WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	var out []hubemu.Delivery
	index := map[string]int{}
	for rows.Next() {
		var d hubemu.Delivery
		var next, created int64
		var payload string
		var repo sql.NullString
		if err := rows.Scan(&d.ID, &d.WebhookID, &d.EventID, &d.Scope, &d.Action, &repo, &d.ReplayOf, &d.State, &d.AttemptCount,
			&next, &d.LastStatus, &d.LastError, &created, &payload); err != nil {
			rows.Close()
			return nil, err
		}
		d.Repo = repo.String
		d.CreatedAt = fromMS(created)
		if d.State == hubemu.StatePending {
			t := fromMS(next)
			d.NextAttemptAt = &t
		}
		if withPayload {
			d.Payload = []byte(payload)
		}
		d.Attempts = []hubemu.Attempt{}
		index[d.ID] = len(out)
		out = append(out, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, err
	}
	ids := make([]any, 0, len(out))
	for _, d := range out {
		ids = append(ids, d.ID)
	}
	arows, err := q.q.QueryContext(ctx, `SELECT delivery_id, at, target, status, latency_us, error, response, job_run_id
		FROM attempts WHERE delivery_id IN (`+placeholders(len(ids))+`) ORDER BY id`, ids...)
	if err != nil {
		return nil, err
	}
	defer arows.Close()
	for arows.Next() {
		var id string
		var a hubemu.Attempt
		var at, us int64
		if err := arows.Scan(&id, &at, &a.Target, &a.Status, &us, &a.Error, &a.Response, &a.JobRunID); err != nil {
			return nil, err
		}
		a.At, a.LatencyMS = fromMS(at), float64(us)/1000
		d := &out[index[id]]
		d.Attempts = append(d.Attempts, a)
	}
	if err := arows.Err(); err != nil {
		return nil, fmt.Errorf("attempts: %w", err)
	}
	return out, nil
}
