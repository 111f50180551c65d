package hub

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/hashicorp/go-retryablehttp"
)

// RetryPolicy says how often and how patiently a request is retried: the hub client's idempotent
// calls after 429, 502, 503, 504 or a connection error (creates are never retried), the receiver's
// forward action after a connection error, 429 or 5xx. Do is the loop both run.
type RetryPolicy struct {
	MaxAttempts int           // attempts in all, the first included; 1 disables retries
	BaseDelay   time.Duration // the first pause; each retry doubles it
	MaxDelay    time.Duration // the cap of one pause
	// MaxRetryAfter is the longest Retry-After the client waits for; a longer one returns the error
	// at once (with Error.RetryAfter set). Zero waits for any.
	MaxRetryAfter time.Duration
}

// DefaultRetryPolicy: 4 attempts, pauses of about 0.5 s, 1 s, 2 s, Retry-After honoured up to 1 min.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 4, BaseDelay: 500 * time.Millisecond, MaxDelay: 10 * time.Second, MaxRetryAfter: time.Minute}

// Backoff is the one retry pause of the project (the hub client, the local hub's deliveries, the
// receiver's forward action, a fleet's failed updates): the pause after the given failed attempt
// (1-based) of NewBackOff's exponential backoff.
func Backoff(base, maxDelay time.Duration, attempt int) time.Duration {
	b := NewBackOff(base, maxDelay)
	d := b.NextBackOff()
	for i := 1; i < attempt; i++ {
		d = b.NextBackOff()
	}
	return d
}

// noCap is the longest pause of a backoff without a cap: an hour, so that the pause stays a
// number time.Duration can hold however many attempts failed.
const noCap = time.Hour

// NewBackOff is the project's exponential backoff (github.com/cenkalti/backoff/v5, for loops that
// keep its state): base doubled after each failed attempt, capped at maxDelay (0: an hour), each
// pause randomized by ±50 % so that clients that failed together do not come back together.
// go-retryablehttp, which runs the HTTP retries (Do), has no jittered exponential pause of its own.
func NewBackOff(base, maxDelay time.Duration) *backoff.ExponentialBackOff {
	if maxDelay <= 0 {
		maxDelay = noCap
	}
	return &backoff.ExponentialBackOff{InitialInterval: base, RandomizationFactor: 0.5, Multiplier: 2, MaxInterval: maxDelay}
}

func retryableStatus(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// parseRetryAfter reads Retry-After as seconds or as an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(n, 0)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// Do sends req through hc as p says, and is the project's one HTTP retry loop:
// github.com/hashicorp/go-retryablehttp's, which rewinds the body for each attempt, drains a failed
// answer so that its connection is reused, and stops waiting when req's context ends. An attempt
// fails when retryable says so of its answer or transport error; it is tried again after a pause of
// NewBackOff,
// or after the Retry-After the answer asks for (up to MaxRetryAfter: a longer one ends the retries
// at once), until MaxAttempts attempts were made. onRetry, if not nil, is told of each retry before
// its pause: which attempt failed, how long the pause is, and the answer or error.
//
// Do returns the last attempt's answer, whatever its status (the caller reads and closes its
// body), or its transport error; the caller's context error if it ended during a pause. read, if
// not nil, reads each answer that is not retried as it arrives; an error from it fails the attempt,
// which is then retried like a transport error (an answer cut short).
func (p RetryPolicy) Do(hc *http.Client, req *retryablehttp.Request, retryable func(*http.Response, error) bool,
	read func(*http.Response) error, onRetry func(attempt int, delay time.Duration, resp *http.Response, err error)) (*http.Response, error) {
	attempts := max(p.MaxAttempts, 1)
	pauses := NewBackOff(p.BaseDelay, p.MaxDelay)
	var attempt int
	var delay time.Duration
	rc := &retryablehttp.Client{
		HTTPClient: hc,
		RetryMax:   attempts - 1,
		CheckRetry: func(ctx context.Context, resp *http.Response, err error) (bool, error) {
			if err == nil && resp != nil && read != nil && !retryable(resp, nil) {
				return false, nil // retryablehttp calls the response handler, then asks again
			}
			attempt++
			if ctx.Err() != nil || !retryable(resp, err) {
				return false, nil
			}
			delay = pauses.NextBackOff()
			if resp != nil {
				if wait := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); wait > 0 {
					if p.MaxRetryAfter > 0 && wait > p.MaxRetryAfter {
						return false, nil // the server asks for a longer pause than the caller accepts
					}
					delay = wait
				}
			}
			if attempt < attempts && onRetry != nil {
				onRetry(attempt, delay, resp, err)
			}
			return true, nil
		},
		Backoff:      func(time.Duration, time.Duration, int, *http.Response) time.Duration { return delay },
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
	}
	if read != nil {
		req.SetResponseHandler(read)
	}
	return rc.Do(req)
}

// ReadBody returns a response handler for Do that reads at most limit bytes of each answer into
// *body and closes it.
func ReadBody(body *[]byte, limit int64) func(*http.Response) error {
	return func(resp *http.Response) error {
		defer resp.Body.Close()
		var err error
		*body, err = io.ReadAll(io.LimitReader(resp.Body, limit))
		return err
	}
}
