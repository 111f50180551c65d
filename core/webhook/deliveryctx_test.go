package webhook

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestHandlerContext: what a handler's context says, for handlers that never select on Done (they
// see the end through Err), after the handler returned, and with a deadline of the request's own.
func TestHandlerContext(t *testing.T) {
	kept := make(chan context.Context, 1)
	s, ts, _ := newTestServer(t, WithHandlerTimeout(100*time.Millisecond))
	must(t, s.Add("poll", func(ctx context.Context, _ *Payload, _ http.Header) (any, error) {
		// Busy work that only looks at Err, as a loop over items would.
		for ctx.Err() == nil {
			runtime.Gosched()
		}
		return nil, ctx.Err()
	}))
	must(t, s.Add("keep", func(ctx context.Context, _ *Payload, _ http.Header) (any, error) {
		if d, ok := ctx.Deadline(); !ok || time.Until(d) > 100*time.Millisecond {
			t.Errorf("deadline %v %v, want within the 100ms timeout", d, ok)
		}
		if ctx.Value(http.ServerContextKey) == nil {
			t.Error("the request's context values are not the handler's")
		}
		kept <- ctx
		return "kept", nil
	}))
	start := time.Now()
	r := send(t, "POST", ts.URL+"/webhooks/poll", nil, minimalPayload)
	if r.status != 503 || !strings.Contains(r.raw, "did not finish within 100ms") || time.Since(start) > 5*time.Second {
		t.Errorf("a handler that polls Err: %d %s after %s", r.status, r.raw, time.Since(start))
	}
	if !r.close {
		t.Errorf("the early 503 keeps the connection that its handler still holds: %v", r.header)
	}
	if r := send(t, "POST", ts.URL+"/webhooks/keep", nil, minimalPayload); r.status != 200 || r.body["message"] != "kept" {
		t.Fatalf("keep: %d %s", r.status, r.raw)
	}
	ctx := <-kept
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the context a handler kept did not end when the handler returned")
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("after the handler returned: %v, want context.Canceled", ctx.Err())
	}
}

// TestHandlerTimerReused: the timers of handlers that returned in time are used again by later
// deliveries; each delivery's timeout still runs from its own start, and a delivery after one that
// timed out gets its own.
func TestHandlerTimerReused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(WithSecret("s"), WithHandlerTimeout(time.Second), WithLogger(slog.New(slog.DiscardHandler)))
		must(t, s.Add("fast", func(context.Context, *Payload, http.Header) (any, error) { return nil, nil }))
		var waited time.Duration
		must(t, s.Add("slow", func(ctx context.Context, _ *Payload, _ http.Header) (any, error) {
			start := time.Now()
			<-ctx.Done()
			waited = time.Since(start)
			return nil, nil
		}))
		deliver := func(route string) int {
			req := httptest.NewRequest("POST", "/webhooks/"+route, strings.NewReader(minimalPayload))
			req.Header.Set(SecretHeader, "s")
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			return w.Code
		}
		for i := range 3 {
			if code := deliver("fast"); code != 200 {
				t.Fatalf("fast delivery %d: %d", i, code)
			}
			time.Sleep(700 * time.Millisecond) // more than half the timeout between deliveries
		}
		for i := range 2 {
			if code := deliver("slow"); code != 503 || waited != time.Second {
				t.Errorf("slow delivery %d: %d after %s, want 503 after the 1s timeout", i, code, waited)
			}
			if code := deliver("fast"); code != 200 {
				t.Errorf("a delivery after a timed-out one: %d", code)
			}
		}
	})
}
