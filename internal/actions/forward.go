package actions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/version"
	"github.com/robothub/robothub/core/webhook"
)

// ForwardResult is the reply of a successful forward action.
type ForwardResult struct {
	Message  string `json:"message"`
	Status   int    `json:"status"`
	Attempts int    `json:"attempts"`
}

// forwardMaxRetryAfter is the longest Retry-After a forward waits for: the hub waits for the
// answer, and a longer pause would outlast its patience.
const forwardMaxRetryAfter = 30 * time.Second

func (b *Builder) forwardAction(route, target string) (webhook.HandlerFunc, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("route %s: forward: %q is not an absolute http(s) URL", route, target)
	}
	client, err := guardedClient(b.cfg.ForwardClient, u.Hostname())
	if err != nil {
		return nil, fmt.Errorf("route %s: %w", route, err)
	}
	shown := displayURL(u) // the query may hold a secret (?secret=...): never show it
	log := b.cfg.Logger.With("route", route, "target", shown)
	agent := "robothub-forward/" + version.String()
	policy := hub.RetryPolicy{MaxAttempts: b.cfg.ForwardAttempts, BaseDelay: b.cfg.ForwardBackoff, MaxRetryAfter: forwardMaxRetryAfter}
	retryable := func(resp *http.Response, err error) bool {
		if err != nil {
			return !errors.As(err, new(*LocalTargetError))
		}
		return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
	}

	return func(ctx context.Context, p *webhook.Payload, _ http.Header) (any, error) {
		req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, target, []byte(p.Raw))
		if err != nil {
			return nil, fmt.Errorf("forward to %s: %v", shown, transportErr(err))
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", agent)
		failed := 0 // attempts that failed and were retried
		resp, err := policy.Do(client, req, retryable, nil, func(attempt int, delay time.Duration, resp *http.Response, err error) {
			failed = attempt
			if err != nil {
				log.Warn("forward attempt failed", "attempt", attempt, "retry_in", delay, "err", transportErr(err))
			} else {
				log.Warn("forward attempt failed", "attempt", attempt, "retry_in", delay, "status", resp.StatusCode)
			}
		})
		attempts := failed + 1
		if err != nil && err == ctx.Err() {
			attempts = failed // the caller gave up during a pause, before the next attempt
		}
		var local *LocalTargetError
		switch {
		case errors.As(err, &local):
			log.Error("forward refused", "err", local.Error())
			return nil, fault.New(fault.Upstream, "forward to %s refused: %s", shown, local.Error())
		case err != nil && ctx.Err() != nil:
			return nil, fault.New(fault.Upstream, "forward to %s gave up after %d attempts: %s", shown, attempts, ctx.Err())
		case err != nil:
			return nil, fault.New(fault.Upstream, "forward to %s failed after %d attempts: request failed: %s", shown, attempts, transportErr(err))
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		switch {
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			log.Info("forwarded", "status", resp.StatusCode, "attempts", attempts)
			return ForwardResult{Message: "forwarded to " + shown, Status: resp.StatusCode, Attempts: attempts}, nil
		case retryable(resp, nil):
			return nil, fault.New(fault.Upstream, "forward to %s failed after %d attempts: the target answered %s", shown, attempts, resp.Status)
		default: // the target refuses this payload (or redirects): retrying will not help
			log.Error("forward refused", "status", resp.StatusCode)
			return nil, fault.New(fault.Upstream, "forward to %s: the target answered %s", shown, resp.Status)
		}
	}, nil
}

// displayURL is u without user info, query or fragment.
func displayURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.Fragment, c.ForceQuery = nil, "", "", false
	return c.String()
}

// transportErr is the cause of a failed request without the URL, which may hold a secret.
func transportErr(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
