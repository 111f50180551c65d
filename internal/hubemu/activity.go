package hubemu

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// Activity is a webhook's recent deliveries with every attempt, newest first, and its use of the
// trigger limit.
type Activity struct {
	WebhookID    string     `json:"webhookId"`
	Triggers24h  int        `json:"triggers24h"`
	TriggerLimit int        `json:"triggerLimit"` // 0: no limit
	Deliveries   []Delivery `json:"deliveries"`
}

// Delivery is one event sent (or to be sent) to one webhook.
type Delivery struct {
	ID            string          `json:"id"`
	WebhookID     string          `json:"webhookId"`
	EventID       string          `json:"eventId"`
	Scope         string          `json:"scope"`
	Action        string          `json:"action"`
	Repo          string          `json:"repo"` // type:owner/name
	ReplayOf      string          `json:"replayOf,omitempty"`
	State         string          `json:"state"`
	AttemptCount  int             `json:"attemptCount"`
	NextAttemptAt *time.Time      `json:"nextAttemptAt,omitempty"` // when pending
	LastStatus    int             `json:"lastStatus,omitempty"`
	LastError     string          `json:"lastError,omitempty"`
	CreatedAt     time.Time       `json:"createdAt"`
	Attempts      []Attempt       `json:"attempts"`
	Payload       json.RawMessage `json:"payload,omitempty"` // in the view of one delivery only
}

// Attempt is one try at a delivery: an HTTP request, or a job run.
type Attempt struct {
	At        time.Time `json:"at"`
	Target    string    `json:"target"` // the URL (a ?secret= value redacted), or "job <source job ID>"
	Status    int       `json:"status"` // HTTP status; 0 when no answer came (or for a job run)
	LatencyMS float64   `json:"latencyMs"`
	Error     string    `json:"error,omitempty"`
	Response  string    `json:"response,omitempty"` // the first KiB of the receiver's answer
	JobRunID  string    `json:"jobRunId,omitempty"`
}

// Activity returns up to limit of the webhook's latest deliveries (default 50) with their attempts.
func (e *Emulator) Activity(ctx context.Context, userID, webhookID string, limit int) (*Activity, error) {
	if _, err := e.Webhook(ctx, userID, webhookID); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 50
	}
	a := &Activity{WebhookID: webhookID, TriggerLimit: max(e.triggerLimit, 0)}
	n, err := triggersSince(ctx, e.db.r, webhookID, e.now().Add(-24*time.Hour))
	if err != nil {
		return nil, err
	}
	a.Triggers24h = n
	a.Deliveries, err = e.deliveries(ctx, false, "d.webhook_id = ? ORDER BY d.created_at DESC, d.id DESC LIMIT ?", webhookID, limit)
	return a, err
}

// Delivery returns one delivery of the user's webhook, with the payload as it is sent.
func (e *Emulator) Delivery(ctx context.Context, userID, webhookID, deliveryID string) (*Delivery, error) {
	if _, err := e.Webhook(ctx, userID, webhookID); err != nil {
		return nil, err
	}
	list, err := e.deliveries(ctx, true, "d.webhook_id = ? AND d.id = ?", webhookID, deliveryID)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, notFound("delivery", deliveryID)
	}
	return &list[0], nil
}

func (e *Emulator) deliveries(ctx context.Context, withPayload bool, where string, args ...any) ([]Delivery, error) {
	rows, err := e.db.r.QueryContext(ctx, `SELECT d.id, d.webhook_id, d.event_id, ev.scope, ev.action, r.type || ':' || r.name, d.replay_of,
		d.state, d.attempts, d.next_attempt_at, d.last_status, d.last_error, d.created_at, ev.payload
		FROM deliveries d JOIN events ev ON ev.id = d.event_id LEFT JOIN repos r ON r.id = ev.repo_id WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	var out []Delivery
	index := map[string]int{}
	for rows.Next() {
		var d Delivery
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
		if d.State == StatePending {
			t := fromMS(next)
			d.NextAttemptAt = &t
		}
		if withPayload {
			d.Payload = withWebhookRef(payload, d.WebhookID)
		}
		d.Attempts = []Attempt{}
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
	arows, err := e.db.r.QueryContext(ctx, `SELECT delivery_id, at, target, status, latency_us, error, response, job_run_id
		FROM attempts WHERE delivery_id IN (`+placeholders(len(ids))+`) ORDER BY id`, ids...)
	if err != nil {
		return nil, err
	}
	defer arows.Close()
	for arows.Next() {
		var id string
		var a Attempt
		var at, us int64
		if err := arows.Scan(&id, &at, &a.Target, &a.Status, &us, &a.Error, &a.Response, &a.JobRunID); err != nil {
			return nil, err
		}
		a.At, a.LatencyMS = fromMS(at), float64(us)/1000
		d := &out[index[id]]
		d.Attempts = append(d.Attempts, a)
	}
	return out, arows.Err()
}

// Replay sends a delivery's event again, as a new delivery, to the webhook's current URL with its
// current secret. A disabled webhook cannot replay (fault.ErrRefused); a webhook over its trigger limit
// gets fault.ErrRateLimited.
func (e *Emulator) Replay(ctx context.Context, userID, webhookID, deliveryID string) (*DeliveryRef, error) {
	var ref DeliveryRef
	err := e.db.tx(ctx, func(tx *sql.Tx) error {
		var disabled bool
		err := tx.QueryRowContext(ctx, "SELECT disabled FROM webhooks WHERE id = ? AND user_id = ?", webhookID, userID).Scan(&disabled)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("webhook", webhookID)
		}
		if err != nil {
			return err
		}
		if disabled {
			return errorf(fault.Refused, "webhook %s is disabled: enable it to replay a delivery", webhookID)
		}
		var eventID string
		err = tx.QueryRowContext(ctx, "SELECT event_id FROM deliveries WHERE id = ? AND webhook_id = ?", deliveryID, webhookID).Scan(&eventID)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("delivery", deliveryID)
		}
		if err != nil {
			return err
		}
		ref, err = e.queueDelivery(ctx, tx, webhookID, eventID, deliveryID)
		if err != nil {
			return err
		}
		if ref.State == StateRateLimited {
			// A trigger becomes available when the oldest one in the window turns 24 hours old.
			var oldest int64
			_ = tx.QueryRowContext(ctx, "SELECT MIN(created_at) FROM deliveries WHERE webhook_id = ? AND created_at > ? AND state != ?",
				webhookID, ms(e.now().Add(-24*time.Hour)), StateRateLimited).Scan(&oldest)
			return &fault.Error{Kind: fault.RateLimited, RetryAfter: max(fromMS(oldest).Add(24*time.Hour).Sub(e.now()), time.Second),
				Msg: fmt.Sprintf("webhook %s has used its %d triggers of the last 24 hours", webhookID, e.triggerLimit)}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.wakeDispatcher()
	return &ref, nil
}
