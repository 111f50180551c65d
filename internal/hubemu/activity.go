package hubemu

import (
	"context"
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
	Triggers24h  int        `json:"triggers24h"`  // deliveries of the last 24 hours, every emitter's
	TriggerLimit int        `json:"triggerLimit"` // per emitting user; 0: no limit
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
	n, _, err := e.db.TriggersSince(ctx, webhookID, e.now().Add(-24*time.Hour))
	if err != nil {
		return nil, err
	}
	a.Triggers24h = n
	a.Deliveries, err = e.db.Deliveries(ctx, webhookID, "", limit)
	return a, err
}

// Delivery returns one delivery of the user's webhook, with the payload as it is sent.
func (e *Emulator) Delivery(ctx context.Context, userID, webhookID, deliveryID string) (*Delivery, error) {
	if _, err := e.Webhook(ctx, userID, webhookID); err != nil {
		return nil, err
	}
	list, err := e.db.Deliveries(ctx, webhookID, deliveryID, 1)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, notFound("delivery", deliveryID)
	}
	d := &list[0]
	d.Payload = WithWebhookRef(string(d.Payload), d.WebhookID)
	return d, nil
}

// Replay sends a delivery's event again, as a new delivery, to the webhook's current URL with its
// current secret. A disabled webhook cannot replay (fault.ErrRefused); a webhook over its trigger limit
// gets fault.ErrRateLimited.
func (e *Emulator) Replay(ctx context.Context, by Principal, webhookID, deliveryID string) (*DeliveryRef, error) {
	userID := by.User.ID
	var ref DeliveryRef
	err := e.db.Update(ctx, func(tx Tx) error {
		w, err := ownWebhook(ctx, tx, userID, webhookID)
		if err != nil {
			return err
		}
		if w.Disabled {
			return errorf(fault.Refused, "webhook %s is disabled: enable it to replay a delivery", webhookID)
		}
		eventID, err := tx.DeliveryEvent(ctx, webhookID, deliveryID)
		if errors.Is(err, ErrNotFound) {
			return notFound("delivery", deliveryID)
		}
		if err != nil {
			return err
		}
		ref, err = e.queueDelivery(ctx, tx, webhookID, eventID, deliveryID, by.User)
		if err != nil {
			return err
		}
		if ref.State == StateRateLimited {
			// A trigger becomes available when the oldest one in the window turns 24 hours old.
			_, oldest, _ := tx.EmitterTriggersSince(ctx, webhookID, userID, e.now().Add(-24*time.Hour))
			return &fault.Error{Kind: fault.RateLimited, RetryAfter: max(oldest.Add(24*time.Hour).Sub(e.now()), time.Second),
				Msg: fmt.Sprintf("webhook %s has used its %d triggers of the last 24 hours for your events", webhookID, e.triggerLimit)}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.wakeDispatcher()
	return &ref, nil
}
