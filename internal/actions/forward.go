package actions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

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

func (b *Builder) forwardAction(route, target string) (webhook.HandlerFunc, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("route %s: forward: %q is not an absolute http(s) URL", route, target)
	}
	shown := displayURL(u) // the query may hold a secret (?secret=...): never show it
	log := b.cfg.Logger.With("route", route, "target", shown)
	agent := "robothub-forward/" + version.String()

	return func(ctx context.Context, p *webhook.Payload, _ http.Header) (any, error) {
		var last string
		for attempt := 1; attempt <= b.cfg.ForwardAttempts; attempt++ {
			if attempt > 1 {
				// Equal jitter keeps many receivers from retrying in step.
				select {
				case <-time.After(hub.Backoff(b.cfg.ForwardBackoff, 0, attempt-1)):
				case <-ctx.Done():
					return nil, fault.New(fault.Upstream, "forward to %s gave up after %d attempts: %s", shown, attempt-1, last)
				}
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(p.Raw))
			if err != nil {
				return nil, fmt.Errorf("forward to %s: %v", shown, err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("User-Agent", agent)
			resp, err := b.cfg.ForwardClient.Do(req)
			if err != nil {
				last = "request failed: " + transportErr(err)
				log.Warn("forward attempt failed", "attempt", attempt, "err", last)
				continue
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			switch {
			case resp.StatusCode >= 200 && resp.StatusCode < 300:
				log.Info("forwarded", "status", resp.StatusCode, "attempts", attempt)
				return ForwardResult{Message: "forwarded to " + shown, Status: resp.StatusCode, Attempts: attempt}, nil
			case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
				last = "the target answered " + resp.Status
				log.Warn("forward attempt failed", "attempt", attempt, "status", resp.StatusCode)
			default: // the target refuses this payload: retrying will not help
				log.Error("forward refused", "status", resp.StatusCode)
				return nil, fault.New(fault.Upstream, "forward to %s: the target answered %s", shown, resp.Status)
			}
		}
		return nil, fault.New(fault.Upstream, "forward to %s failed after %d attempts: %s", shown, b.cfg.ForwardAttempts, last)
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
