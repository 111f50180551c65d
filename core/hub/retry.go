package hub

import (
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy says how often and how patiently idempotent calls are retried after 429, 502, 503,
// 504 or a connection error. Creates are never retried.
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
// receiver's forward action): the pause after the given failed attempt (1-based) is base doubled
// for each attempt after the first, capped at maxDelay (0: no cap), with "equal jitter": a random pause
// between half and all of that, so that clients that failed together do not come back together,
// yet each waits at least half the nominal pause. (No maintained backoff module is on the module
// proxy this project uses, and this is one function.)
func Backoff(base, maxDelay time.Duration, attempt int) time.Duration {
	d := base
	for i := 1; i < attempt && (maxDelay <= 0 || d < maxDelay) && d < math.MaxInt64/2; i++ {
		d *= 2
	}
	if maxDelay > 0 && d > maxDelay {
		d = maxDelay
	}
	if d <= 0 {
		return 0
	}
	half := d / 2
	return half + rand.N(half+1)
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
