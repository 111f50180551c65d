package webhook

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"testing"
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
