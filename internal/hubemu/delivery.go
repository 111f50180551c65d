package hubemu

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"
)

// Delivery states.
const (
	StatePending     = "pending"      // waiting for its first or next attempt
	StateDelivered   = "delivered"    // the receiver answered 2xx, or the job exited with status 0
	StateFailed      = "failed"       // every attempt failed, or the job failed
	StateSkipped     = "skipped"      // the webhook was disabled before it was sent
	StateRateLimited = "rate_limited" // over the webhook's trigger limit: never sent
)

// Waker is told that deliveries were recorded, so that they are sent now rather than at the next
// poll: the delivery dispatcher (internal/hubemu/delivery).
type Waker interface{ Wake() }

// queueDelivery records a delivery of an event by emitter to a webhook: pending, or rate_limited
// when the webhook has had its TriggerLimit of deliveries of emitter's events in the last 24
// hours. The limit is counted per emitting user, so that nobody spends another's deliveries (anyone
// may open discussions on a public repo, and each one triggers its owner's webhooks).
func (e *Emulator) queueDelivery(ctx context.Context, tx Tx, webhookID, eventID, replayOf string, emitter User) (DeliveryRef, error) {
	now := e.now()
	state := StatePending
	lastError := ""
	if e.triggerLimit > 0 {
		n, _, err := tx.EmitterTriggersSince(ctx, webhookID, emitter.ID, now.Add(-24*time.Hour))
		if err != nil {
			return DeliveryRef{}, err
		}
		if n >= e.triggerLimit {
			state = StateRateLimited
			lastError = fmt.Sprintf("rate limit: this webhook had %d triggers from %s's events in the last 24 hours (limit %d a user)", n, emitter.Name, e.triggerLimit)
		}
	}
	ref := DeliveryRef{ID: NewID(now), WebhookID: webhookID, State: state}
	err := tx.InsertDelivery(ctx, NewDelivery{ID: ref.ID, WebhookID: webhookID, EventID: eventID, ReplayOf: replayOf,
		EmitterID: emitter.ID, State: state, LastError: lastError, CreatedAt: now})
	return ref, err
}

func (e *Emulator) wakeDispatcher() {
	if e.waker != nil {
		e.waker.Wake()
	}
}

// WithWebhookRef adds the webhook field to a stored event payload. The stored payload is always a
// JSON object that Emit marshalled without a webhook field, so appending the member before its
// closing brace is exact (and much cheaper than decoding and encoding it again).
func WithWebhookRef(payload, webhookID string) []byte {
	p := strings.TrimRight(payload, " \n")
	var b bytes.Buffer
	b.Grow(len(p) + 48)
	b.WriteString(p[:len(p)-1])
	b.WriteString(`,"webhook":{"id":"`)
	b.WriteString(webhookID)
	b.WriteString(`","version":3}}`)
	return b.Bytes()
}
