package hubemu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/webhook"
)

// Delivery states.
const (
	StatePending     = "pending"      // waiting for its first or next attempt
	StateDelivered   = "delivered"    // the receiver answered 2xx, or the job exited with status 0
	StateFailed      = "failed"       // every attempt failed, or the job failed
	StateSkipped     = "skipped"      // the webhook was disabled before it was sent
	StateRateLimited = "rate_limited" // over the webhook's trigger limit: never sent
)

// DeliveryPolicy says how events reach receivers.
type DeliveryPolicy struct {
	Timeout     time.Duration // per attempt; default 10s
	MaxAttempts int           // attempts in all, the first included; default 8
	BaseDelay   time.Duration // pause after the first failure, doubled after each; default 2s
	MaxDelay    time.Duration // cap of one pause, and of a receiver's Retry-After; default 10min
	Workers     int           // deliveries sent at the same time; default 32
	JobWorkers  int           // job runs at the same time; default 2
}

func (p *DeliveryPolicy) fill() {
	if p.Timeout <= 0 {
		p.Timeout = 10 * time.Second
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 8
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 2 * time.Second
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 10 * time.Minute
	}
	if p.Workers <= 0 {
		p.Workers = 32
	}
	if p.JobWorkers <= 0 {
		p.JobWorkers = 2
	}
}

// backoff is the pause after the n-th failed attempt: hub.Backoff, between 50 and 100 % of the
// exponential pause.
func (p DeliveryPolicy) backoff(n int) time.Duration { return hub.Backoff(p.BaseDelay, p.MaxDelay, n) }

// queueDelivery records a delivery of an event to a webhook: pending, or rate_limited when the
// webhook has had its TriggerLimit of deliveries in the last 24 hours.
func (e *Emulator) queueDelivery(ctx context.Context, tx Tx, webhookID, eventID, replayOf string) (DeliveryRef, error) {
	now := e.now()
	state := StatePending
	lastError := ""
	if e.triggerLimit > 0 {
		n, _, err := tx.TriggersSince(ctx, webhookID, now.Add(-24*time.Hour))
		if err != nil {
			return DeliveryRef{}, err
		}
		if n >= e.triggerLimit {
			state = StateRateLimited
			lastError = fmt.Sprintf("rate limit: this webhook had %d triggers in the last 24 hours (limit %d)", n, e.triggerLimit)
		}
	}
	ref := DeliveryRef{ID: newID(now), WebhookID: webhookID, State: state}
	err := tx.InsertDelivery(ctx, NewDelivery{ID: ref.ID, WebhookID: webhookID, EventID: eventID, ReplayOf: replayOf,
		State: state, LastError: lastError, CreatedAt: now})
	return ref, err
}

// task is one attempt to make: a delivery with what it needs, read when it was claimed so that it
// goes to the webhook's current URL with its current secret.
type task struct {
	deliveryID string
	webhookID  string
	attempts   int // made before this one
	url        string
	secret     string
	jobID      string
	disabled   bool
	payload    []byte // as sent
}

// outcome is what became of a task.
type outcome struct {
	task
	at         time.Time
	target     string
	status     int
	latency    time.Duration
	err        string
	response   string
	jobRunID   string
	run        *RunEnd // how the job run ended, recorded with the attempt
	retryAfter time.Duration
	final      bool  // no retry whatever happened (job runs)
	skipped    bool  // the webhook is disabled: nothing was sent
	cancelled  bool  // cut short because Run stopped: not recorded, sent again by the next Run
	storeErr   error // the database refused the job run's record: nothing ran, and Run stops
}

func (o outcome) ok() bool { return o.err == "" && (o.final || o.status >= 200 && o.status < 300) }

func (e *Emulator) wakeDispatcher() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Run delivers events and runs jobs until ctx ends, and returns nil then. Deliveries that were
// being sent when an earlier Run stopped (or the process died) are sent again: delivery is at least
// once. When the database fails (a full or read-only disk among other causes), Run stops with a
// *StoreError that names the database and what failed. It holds nothing in memory that the database
// does not also hold: a delivery whose result could not be recorded is still leased there, and the
// next Run sends it again; a job run that ended unrecorded is marked interrupted and run again.
func (e *Emulator) Run(ctx context.Context) (err error) {
	if !e.running.CompareAndSwap(false, true) {
		return errors.New("hubemu: Run is already running")
	}
	defer e.running.Store(false)
	if err := e.recover(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return e.storeFailed("releasing the deliveries of the last run", err)
	}
	p := e.delivery
	urls, jobs := make(chan task), make(chan task)
	results := make(chan outcome, p.Workers+p.JobWorkers)
	workCtx, stopWork := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range p.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range urls {
				results <- e.send(workCtx, t)
			}
		}()
	}
	for range p.JobWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range jobs {
				results <- e.runJob(workCtx, t)
			}
		}()
	}
	defer func() {
		close(urls)
		close(jobs)
		stopWork()
		go func() { wg.Wait(); close(results) }()
		// Record what finished before the stop; what was cut short stays pending for the next
		// Run. After a store failure nothing is recorded: those deliveries are sent again.
		var done []outcome
		for o := range results {
			if !o.cancelled && o.storeErr == nil {
				done = append(done, o)
			}
		}
		if err != nil {
			return
		}
		bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := e.record(bg, done); err != nil {
			e.log.Error("recording delivery results at shutdown: those deliveries are sent again at the next start",
				"database", e.db.Database(), "results", len(done), "err", err)
		}
	}()

	busyURL, busyJob := 0, 0
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var queued []task
		freeURL, freeJob := p.Workers-busyURL, p.JobWorkers-busyJob
		if freeURL > 0 || freeJob > 0 {
			var err error
			if queued, err = e.claim(ctx, freeURL, freeJob); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return e.storeFailed("claiming deliveries", err)
			}
			// When the claim took fewer than the free workers could, nothing else is due now: sleep
			// until the next delivery is due. Otherwise a finishing worker wakes the loop.
			urlRoom, jobRoom := freeURL > 0, freeJob > 0
			for _, t := range queued {
				if t.jobID != "" {
					freeJob--
				} else {
					freeURL--
				}
			}
			if (urlRoom && freeURL > 0) || (jobRoom && freeJob > 0) {
				next, err := e.nextDue(ctx, urlRoom, jobRoom)
				if err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return e.storeFailed("finding the next delivery", err)
				}
				wait := time.Hour
				if !next.IsZero() {
					wait = max(time.Until(next), time.Millisecond)
				}
				timer.Reset(wait)
			}
		}
		// Hand out the claimed tasks while collecting results, so that no worker waits on us.
		for len(queued) > 0 {
			t := queued[0]
			ch := urls
			if t.jobID != "" && !t.disabled {
				ch = jobs
			}
			select {
			case ch <- t:
				queued = queued[1:]
				if ch == jobs {
					busyJob++
				} else {
					busyURL++
				}
			case o := <-results:
				if err := e.collect(ctx, o, results, &busyURL, &busyJob); err != nil {
					return err
				}
			case <-ctx.Done():
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-e.wake:
		case <-timer.C:
		case o := <-results:
			if err := e.collect(ctx, o, results, &busyURL, &busyJob); err != nil {
				return err
			}
		}
	}
}

// collect records o and every other result already waiting, in one transaction. The record is not
// cut short when ctx ends: it is a short local write, and what it records is not sent again.
func (e *Emulator) collect(ctx context.Context, o outcome, results <-chan outcome, busyURL, busyJob *int) error {
	batch := []outcome{o}
	for more := true; more && len(batch) < 256; {
		select {
		case o := <-results:
			batch = append(batch, o)
		default:
			more = false
		}
	}
	for _, o := range batch {
		if o.jobID != "" && !o.disabled {
			*busyJob--
		} else {
			*busyURL--
		}
		if o.storeErr != nil {
			return e.storeFailed("recording the start of a job run", o.storeErr)
		}
	}
	if err := e.record(context.WithoutCancel(ctx), batch); err != nil {
		return e.storeFailed("recording deliveries", err)
	}
	return nil
}

// recover prepares the store for a new Run: deliveries claimed by a Run that stopped are pending
// again, and job runs it left running are marked as interrupted.
func (e *Emulator) recover(ctx context.Context) error {
	return e.db.Update(ctx, func(tx Tx) error {
		return tx.ReleaseLeases(ctx, "interrupted: the emulator stopped while the job was running; the delivery is run again", e.now())
	})
}

// claim leases up to nURL due deliveries to URL webhooks and nJob to job webhooks.
func (e *Emulator) claim(ctx context.Context, nURL, nJob int) ([]task, error) {
	var out []task
	err := e.db.Update(ctx, func(tx Tx) error {
		out = out[:0]
		now := e.now()
		for _, kind := range []struct {
			name string
			n    int
		}{{DeliveryURL, nURL}, {DeliveryJob, nJob}} {
			if kind.n <= 0 {
				continue
			}
			claims, err := tx.ClaimDeliveries(ctx, kind.name, kind.n, now)
			if err != nil {
				return err
			}
			for _, c := range claims {
				out = append(out, task{deliveryID: c.DeliveryID, webhookID: c.WebhookID, attempts: c.Attempts, url: c.URL,
					secret: c.Secret, jobID: c.JobID, disabled: c.Disabled, payload: withWebhookRef(c.Payload, c.WebhookID)})
			}
		}
		return nil
	})
	return out, err
}

// withWebhookRef adds the webhook field to a stored event payload. The stored payload is always a
// JSON object that Emit marshalled without a webhook field, so appending the member before its
// closing brace is exact (and much cheaper than decoding and encoding it again).
func withWebhookRef(payload, webhookID string) []byte {
	p := strings.TrimRight(payload, " \n")
	var b bytes.Buffer
	b.Grow(len(p) + 48)
	b.WriteString(p[:len(p)-1])
	b.WriteString(`,"webhook":{"id":"`)
	b.WriteString(webhookID)
	b.WriteString(`","version":3}}`)
	return b.Bytes()
}

// nextDue returns when the next delivery that a free worker could take is due (zero: none is
// waiting). Deliveries of a kind whose workers are all busy are left out, so that the loop sleeps
// until a worker is free instead of waking for them.
func (e *Emulator) nextDue(ctx context.Context, urlFree, jobFree bool) (time.Time, error) {
	var next time.Time
	for kind, free := range map[string]bool{DeliveryURL: urlFree, DeliveryJob: jobFree} {
		if !free {
			continue
		}
		t, ok, err := e.db.NextDue(ctx, kind)
		if err != nil {
			return time.Time{}, err
		}
		if ok && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next, nil
}

// send makes one HTTP attempt of a delivery.
func (e *Emulator) send(runCtx context.Context, t task) outcome {
	o := outcome{task: t, at: e.now(), target: redactTarget(t.url)}
	if t.disabled {
		o.skipped = true
		return o
	}
	ctx, cancel := context.WithTimeout(runCtx, e.delivery.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(t.payload))
	if err != nil {
		o.err = "invalid URL: " + err.Error()
		return o
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "robothub-hubemu")
	if t.secret != "" {
		req.Header.Set(webhook.SecretHeader, t.secret)
	}
	start := time.Now()
	resp, err := e.client.Do(req)
	if err != nil {
		o.latency = time.Since(start)
		switch {
		case runCtx.Err() != nil:
			o.cancelled, o.err = true, "cancelled: the emulator is stopping"
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			o.err = fmt.Sprintf("timeout: no answer within %s", e.delivery.Timeout)
		default:
			o.err = deliveryError(err)
		}
		return o
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	o.latency = time.Since(start)
	o.status = resp.StatusCode
	o.response = string(head)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		o.err = "receiver answered " + strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
				o.retryAfter = time.Duration(secs) * time.Second
			}
		}
	}
	return o
}

// deliveryError describes a failed request without its URL, which may carry the secret as ?secret=.
func deliveryError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// redactTarget hides a secret carried in the target URL's query before it is stored in the activity.
func redactTarget(target string) string {
	u, err := url.Parse(target)
	if err != nil || !u.Query().Has(webhook.SecretQueryParam) {
		return target
	}
	q := u.Query()
	q.Set(webhook.SecretQueryParam, "REDACTED")
	u.RawQuery = q.Encode()
	return u.String()
}

// record stores the outcomes: one attempt each, the end of its job run, and the new state of each
// delivery, in one transaction. It logs them once they are stored.
func (e *Emulator) record(ctx context.Context, batch []outcome) error {
	if len(batch) == 0 {
		return nil
	}
	type logged struct {
		o       outcome
		attempt int
		state   string
	}
	var logs []logged
	debug := e.log.Enabled(ctx, slog.LevelDebug)
	err := e.db.Update(ctx, func(tx Tx) error {
		logs = logs[:0]
		now := e.now()
		for _, o := range batch {
			if o.skipped {
				if err := tx.SkipDelivery(ctx, o.deliveryID, "the webhook is disabled", now); err != nil {
					return err
				}
				continue
			}
			if o.run != nil {
				if err := tx.FinishJobRun(ctx, o.jobRunID, *o.run); err != nil {
					return err
				}
			}
			n := o.attempts + 1
			state, next := StatePending, now
			switch {
			case o.ok():
				state = StateDelivered
			case o.final || n >= e.delivery.MaxAttempts:
				state = StateFailed
			default:
				wait := e.delivery.backoff(n)
				if o.retryAfter > wait {
					wait = min(o.retryAfter, e.delivery.MaxDelay)
				}
				next = now.Add(wait)
			}
			if err := tx.RecordAttempt(ctx, AttemptRecord{DeliveryID: o.deliveryID, At: o.at, Target: o.target, Status: o.status,
				Latency: o.latency, Error: o.err, Response: o.response, JobRunID: o.jobRunID,
				State: state, Attempts: n, NextAttemptAt: next, UpdatedAt: now}); err != nil {
				return err
			}
			if debug || !o.ok() {
				logs = append(logs, logged{o, n, state})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, l := range logs {
		level := slog.LevelDebug
		if !l.o.ok() {
			level = slog.LevelWarn
		}
		e.log.Log(ctx, level, "delivery attempt", "delivery", l.o.deliveryID, "webhook", l.o.webhookID, "attempt", l.attempt,
			"status", l.o.status, "latency", l.o.latency, "error", l.o.err, "state", l.state)
	}
	return nil
}
