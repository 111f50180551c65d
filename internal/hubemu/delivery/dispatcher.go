// Package delivery sends what the local hub recorded: it claims due deliveries from the store,
// POSTs them to their webhooks' URLs (or runs a job webhook's source job as a subprocess), and
// records each attempt and the delivery's next state, retrying with backoff. It is the hub's only
// outgoing traffic on a user's behalf.
package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robothub/robothub/internal/egress"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/hubemu"
)

// DefaultJobTimeout bounds a job run unless Config says otherwise.
const DefaultJobTimeout = 10 * time.Minute

// Config configures a Dispatcher.
type Config struct {
	// Policy sets timeouts, retries and concurrency of deliveries.
	Policy Policy
	// AllowJobs runs the source jobs of job webhooks (hubemu.Config.AllowJobs says why it is off by
	// default); without it, deliveries of job webhooks stored earlier fail without running anything.
	AllowJobs bool
	// JobTimeout bounds one job run. Default DefaultJobTimeout.
	JobTimeout time.Duration
	// JobPath is the PATH of job runs. Default: this process's PATH. Jobs read its directories and
	// the system's, and no others (sandbox.go).
	JobPath string
	// Private lists the files and directories that jobs must never read: the database's directory,
	// the repositories, the token file. A directory of JobPath that holds one is not given to jobs.
	Private []string
	// Allow lists the targets of deliveries that are refused by default: loopback, link-local,
	// "this host" and multicast addresses (egress.go says why). nil allows none of them.
	Allow *egress.Allowlist
	// HTTPClient sends deliveries. Default: a client that follows no redirects, uses no proxy, and
	// connects only where Allow permits. A client given here is used as it is.
	HTTPClient *http.Client
	// Logger receives the dispatcher's logs. Default slog.Default().
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Dispatcher sends deliveries: call Run, and Wake when the hub recorded new ones.
type Dispatcher struct {
	db         hubemu.Store
	policy     Policy
	allowJobs  bool
	jobTimeout time.Duration
	jobPath    string
	jobRead    []string // what job runs read: jobReadDirs
	client     *http.Client
	log        *slog.Logger
	now        func() time.Time
	wake       chan struct{}
	running    atomic.Bool
}

// New returns a dispatcher of the deliveries in db.
func New(db hubemu.Store, cfg Config) *Dispatcher {
	d := &Dispatcher{db: db, policy: cfg.Policy, allowJobs: cfg.AllowJobs, jobTimeout: cfg.JobTimeout, jobPath: cfg.JobPath,
		client: cfg.HTTPClient, log: cfg.Logger, now: cfg.Now, wake: make(chan struct{}, 1)}
	d.policy.fill()
	if d.jobTimeout <= 0 {
		d.jobTimeout = DefaultJobTimeout
	}
	if d.jobPath == "" {
		d.jobPath = os.Getenv("PATH")
	}
	if d.client == nil {
		d.client = guardedClient(cfg.Allow, d.policy.Workers)
	}
	if d.log == nil {
		d.log = slog.Default()
	}
	if d.now == nil {
		d.now = time.Now
	}
	var skipped []string
	d.jobRead, skipped = jobReadDirs(d.jobPath, nil, cfg.Private)
	if err := sandboxError(); d.allowJobs && err != nil {
		d.log.Warn("jobs are on, but no job will run", "why", err.Error())
	}
	if d.allowJobs && len(skipped) > 0 {
		d.log.Warn("jobs will not read these directories of their PATH: they hold the hub's own files", "dirs", skipped)
	}
	return d
}

func (d *Dispatcher) storeFailed(doing string, err error) error {
	return &hubemu.StoreError{Database: d.db.Database(), Doing: doing, Err: err}
}

// Policy says how events reach receivers.
type Policy struct {
	Timeout     time.Duration // per attempt; default 10s
	MaxAttempts int           // attempts in all, the first included; default 8
	BaseDelay   time.Duration // pause after the first failure, doubled after each; default 2s
	MaxDelay    time.Duration // cap of one pause, and of a receiver's Retry-After; default 10min
	Workers     int           // deliveries sent at the same time; default 32
	JobWorkers  int           // job runs at the same time; default 2
}

func (p *Policy) fill() {
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

// backoff is the pause after the n-th failed attempt: hub.Backoff, between 50 and 150 % of the
// exponential pause.
func (p Policy) backoff(n int) time.Duration { return hub.Backoff(p.BaseDelay, p.MaxDelay, n) }

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
	run        *hubemu.RunEnd // how the job run ended, recorded with the attempt
	retryAfter time.Duration
	final      bool  // no retry whatever happened (job runs)
	skipped    bool  // the webhook is disabled: nothing was sent
	cancelled  bool  // cut short because Run stopped: not recorded, sent again by the next Run
	storeErr   error // the database refused the job run's record: nothing ran, and Run stops
}

func (o outcome) ok() bool { return o.err == "" && (o.final || o.status >= 200 && o.status < 300) }

// Wake makes Run look for due deliveries now: the hub calls it when it recorded some.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers events and runs jobs until ctx ends, and returns nil then. Deliveries that were
// being sent when an earlier Run stopped (or the process died) are sent again: delivery is at least
// once. When the database fails (a full or read-only disk among other causes), Run stops with a
// *StoreError that names the database and what failed. It holds nothing in memory that the database
// does not also hold: a delivery whose result could not be recorded is still leased there, and the
// next Run sends it again; a job run that ended unrecorded is marked interrupted and run again.
func (d *Dispatcher) Run(ctx context.Context) (err error) {
	if !d.running.CompareAndSwap(false, true) {
		return errors.New("delivery: Run is already running")
	}
	defer d.running.Store(false)
	if err := d.recover(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return d.storeFailed("releasing the deliveries of the last run", err)
	}
	p := d.policy
	urls, jobs := make(chan task), make(chan task)
	results := make(chan outcome, p.Workers+p.JobWorkers)
	workCtx, stopWork := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range p.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range urls {
				results <- d.send(workCtx, t)
			}
		}()
	}
	for range p.JobWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range jobs {
				results <- d.runJob(workCtx, t)
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
		if err := d.record(bg, done); err != nil {
			d.log.Error("recording delivery results at shutdown: those deliveries are sent again at the next start",
				"database", d.db.Database(), "results", len(done), "err", err)
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
			if queued, err = d.claim(ctx, freeURL, freeJob); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return d.storeFailed("claiming deliveries", err)
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
				next, err := d.nextDue(ctx, urlRoom, jobRoom)
				if err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return d.storeFailed("finding the next delivery", err)
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
				if err := d.collect(ctx, o, results, &busyURL, &busyJob); err != nil {
					return err
				}
			case <-ctx.Done():
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-d.wake:
		case <-timer.C:
		case o := <-results:
			if err := d.collect(ctx, o, results, &busyURL, &busyJob); err != nil {
				return err
			}
		}
	}
}

// collect records o and every other result already waiting, in one transaction. The record is not
// cut short when ctx ends: it is a short local write, and what it records is not sent again.
func (d *Dispatcher) collect(ctx context.Context, o outcome, results <-chan outcome, busyURL, busyJob *int) error {
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
			return d.storeFailed("recording the start of a job run", o.storeErr)
		}
	}
	if err := d.record(context.WithoutCancel(ctx), batch); err != nil {
		return d.storeFailed("recording deliveries", err)
	}
	return nil
}

// recover prepares the store for a new Run: deliveries claimed by a Run that stopped are pending
// again, and job runs it left running are marked as interrupted.
func (d *Dispatcher) recover(ctx context.Context) error {
	return d.db.Update(ctx, func(tx hubemu.Tx) error {
		return tx.ReleaseLeases(ctx, "interrupted: the emulator stopped while the job was running; the delivery is run again", d.now())
	})
}

// claim leases up to nURL due deliveries to URL webhooks and nJob to job webhooks.
func (d *Dispatcher) claim(ctx context.Context, nURL, nJob int) ([]task, error) {
	var out []task
	err := d.db.Update(ctx, func(tx hubemu.Tx) error {
		out = out[:0]
		now := d.now()
		for _, kind := range []struct {
			name string
			n    int
		}{{hubemu.DeliveryURL, nURL}, {hubemu.DeliveryJob, nJob}} {
			if kind.n <= 0 {
				continue
			}
			claims, err := tx.ClaimDeliveries(ctx, kind.name, kind.n, now)
			if err != nil {
				return err
			}
			for _, c := range claims {
				out = append(out, task{deliveryID: c.DeliveryID, webhookID: c.WebhookID, attempts: c.Attempts, url: c.URL,
					secret: c.Secret, jobID: c.JobID, disabled: c.Disabled, payload: hubemu.WithWebhookRef(c.Payload, c.WebhookID)})
			}
		}
		return nil
	})
	return out, err
}

// nextDue returns when the next delivery that a free worker could take is due (zero: none is
// waiting). Deliveries of a kind whose workers are all busy are left out, so that the loop sleeps
// until a worker is free instead of waking for them.
func (d *Dispatcher) nextDue(ctx context.Context, urlFree, jobFree bool) (time.Time, error) {
	var next time.Time
	for kind, free := range map[string]bool{hubemu.DeliveryURL: urlFree, hubemu.DeliveryJob: jobFree} {
		if !free {
			continue
		}
		t, ok, err := d.db.NextDue(ctx, kind)
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
func (d *Dispatcher) send(runCtx context.Context, t task) outcome {
	o := outcome{task: t, at: d.now(), target: redactTarget(t.url)}
	if t.disabled {
		o.skipped = true
		return o
	}
	ctx, cancel := context.WithTimeout(runCtx, d.policy.Timeout)
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
	resp, err := d.client.Do(req)
	if err != nil {
		o.latency = time.Since(start)
		switch refused := refusedTarget(err); {
		case refused != nil:
			// Not retried: the target stays refused until the operator allows it.
			o.final, o.err = true, refused.Error()
		case runCtx.Err() != nil:
			o.cancelled, o.err = true, "cancelled: the emulator is stopping"
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			o.err = fmt.Sprintf("timeout: no answer within %s", d.policy.Timeout)
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
func (d *Dispatcher) record(ctx context.Context, batch []outcome) error {
	if len(batch) == 0 {
		return nil
	}
	type logged struct {
		o       outcome
		attempt int
		state   string
	}
	var logs []logged
	debug := d.log.Enabled(ctx, slog.LevelDebug)
	err := d.db.Update(ctx, func(tx hubemu.Tx) error {
		logs = logs[:0]
		now := d.now()
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
			state, next := hubemu.StatePending, now
			switch {
			case o.ok():
				state = hubemu.StateDelivered
			case o.final || n >= d.policy.MaxAttempts:
				state = hubemu.StateFailed
			default:
				wait := d.policy.backoff(n)
				if o.retryAfter > wait {
					wait = min(o.retryAfter, d.policy.MaxDelay)
				}
				next = now.Add(wait)
			}
			if err := tx.RecordAttempt(ctx, hubemu.AttemptRecord{DeliveryID: o.deliveryID, At: o.at, Target: o.target, Status: o.status,
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
		d.log.Log(ctx, level, "delivery attempt", "delivery", l.o.deliveryID, "webhook", l.o.webhookID, "attempt", l.attempt,
			"status", l.o.status, "latency", l.o.latency, "error", l.o.err, "state", l.state)
	}
	return nil
}
