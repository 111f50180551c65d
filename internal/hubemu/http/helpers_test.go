package http_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/hubemu/delivery"
)

// fastDelivery keeps retries quick in tests.
var fastDelivery = delivery.Policy{Timeout: 2 * time.Second, MaxAttempts: 5, BaseDelay: 20 * time.Millisecond, MaxDelay: 100 * time.Millisecond, Workers: 4, JobWorkers: 2}

// receiver is a real webhook receiver (core/webhook) that keeps what it got.
type receiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	payloads []*webhook.Payload
}

func newReceiver(t *testing.T, secret string) *receiver {
	t.Helper()
	rc := &receiver{}
	s := webhook.NewServer(webhook.WithSecret(secret), webhook.WithLogger(slog.New(slog.DiscardHandler)))
	if err := s.Add("hook", func(ctx context.Context, p *webhook.Payload, h http.Header) (any, error) {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.payloads = append(rc.payloads, p)
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	rc.srv = httptest.NewServer(s)
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) url() string { return rc.srv.URL + "/webhooks/hook" }

func (rc *receiver) received() []*webhook.Payload {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*webhook.Payload(nil), rc.payloads...)
}
