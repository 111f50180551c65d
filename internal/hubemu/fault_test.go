package hubemu_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// TestReceiverDownWhileEventsAreEmitted emits events to a webhook whose receiver is not listening
// (connection refused), then starts the receiver at that address: every event arrives, exactly
// once (the emulator restarts nothing here, so its at-least-once rule allows no duplicate), and the
// activity shows the refused attempts before the delivery.
func TestReceiverDownWhileEventsAreEmitted(t *testing.T) {
	const events = 20
	cfg := localhub.Config{Delivery: fastDelivery}
	cfg.Delivery.MaxAttempts = 1000 // never give up while the receiver is down
	cfg.Delivery.BaseDelay, cfg.Delivery.MaxDelay = 20*time.Millisecond, 200*time.Millisecond
	h := newTestHub(t, cfg)

	// An address nothing listens on, kept for the receiver.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	wh := h.createWebhook(h.token, map[string]any{"url": "http://" + addr + "/webhooks/hook", "watched": watch("user:alice"), "secret": "s"})
	for i := range events {
		h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update", HeadSha: fmt.Sprintf("%040x", i+1)})
	}
	wait.For(t, 10*time.Second, "two refused attempts of every delivery", func() bool {
		a := h.activity(h.token, wh.ID)
		if len(a.Deliveries) != events {
			return false
		}
		for _, d := range a.Deliveries {
			if d.AttemptCount < 2 {
				return false
			}
		}
		return true
	})

	var mu sync.Mutex
	got := map[string]int{}
	srv := webhook.NewServer(webhook.WithSecret("s"), webhook.WithLogger(slog.New(slog.DiscardHandler)))
	if err := srv.Add("hook", func(_ context.Context, p *webhook.Payload, _ http.Header) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		got[p.Repo.HeadSha]++
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the receiver's address was taken meanwhile: %v", err)
	}
	hs := &http.Server{Handler: srv}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { hs.Close() })

	var a hubemu.Activity
	wait.For(t, 10*time.Second, "every delivery to be delivered", func() bool {
		a = h.activity(h.token, wh.ID)
		for _, d := range a.Deliveries {
			if d.State != hubemu.StateDelivered {
				return false
			}
		}
		return true
	})
	h.stop() // once Run has returned, nothing more can arrive: count then
	mu.Lock()
	defer mu.Unlock()
	if len(got) != events {
		t.Errorf("%d distinct events arrived, want %d", len(got), events)
	}
	for sha, n := range got {
		if n != 1 {
			t.Errorf("event %s arrived %d times", sha, n)
		}
	}
	for _, d := range a.Deliveries {
		first, last := d.Attempts[0], d.Attempts[len(d.Attempts)-1] // oldest first
		if !strings.Contains(first.Error, "connection refused") || first.Status != 0 {
			t.Errorf("delivery %s: first attempt %+v, want a refused connection", d.ID, first)
		}
		if last.Status != 200 {
			t.Errorf("delivery %s: last attempt %+v", d.ID, last)
		}
	}
}
