package webhook

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
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

// TestHandlerTimeouts: the Server's one timer times every running handler from its own start:
// handlers that overlap, that return before their deadline from the head or the middle of the
// queue, and that come after others timed out.
func TestHandlerTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewServer(WithSecret("s"), WithHandlerTimeout(time.Second), WithLogger(slog.New(slog.DiscardHandler)))
		must(t, s.Add("fast", func(context.Context, *Payload, http.Header) (any, error) { return nil, nil }))
		must(t, s.Add("slow", func(ctx context.Context, _ *Payload, h http.Header) (any, error) {
			if d, err := time.ParseDuration(h.Get("X-Return-After")); err == nil {
				select {
				case <-ctx.Done():
				case <-time.After(d):
				}
				return nil, nil
			}
			<-ctx.Done()
			return nil, nil
		}))
		type answer struct {
			code  int
			after time.Duration
		}
		deliver := func(route, returnAfter string) answer {
			req := httptest.NewRequest("POST", "/webhooks/"+route, strings.NewReader(minimalPayload))
			req.Header.Set(SecretHeader, "s")
			req.Header.Set("X-Return-After", returnAfter)
			w := httptest.NewRecorder()
			start := time.Now()
			s.ServeHTTP(w, req)
			return answer{w.Code, time.Since(start)}
		}
		for i := range 3 {
			if a := deliver("fast", ""); a.code != 200 {
				t.Fatalf("fast delivery %d: %d", i, a.code)
			}
			time.Sleep(700 * time.Millisecond) // more than half the timeout between deliveries
		}
		// At 0, 300 and 600 ms: a handler that never returns, one that returns at 800 ms (from the
		// middle of the queue), one that never returns; a fast one at 100 ms.
		cases := []struct {
			at          time.Duration
			route, back string
			want        answer
		}{
			{0, "slow", "", answer{503, time.Second}},
			{100 * time.Millisecond, "fast", "", answer{200, 0}},
			{300 * time.Millisecond, "slow", "500ms", answer{200, 500 * time.Millisecond}},
			{600 * time.Millisecond, "slow", "", answer{503, time.Second}},
		}
		got := make([]answer, len(cases))
		var wg sync.WaitGroup
		for i, c := range cases {
			wg.Go(func() {
				time.Sleep(c.at)
				got[i] = deliver(c.route, c.back)
			})
		}
		wg.Wait()
		for i, c := range cases {
			if got[i] != c.want {
				t.Errorf("%s delivery at %s: %d after %s, want %d after %s", c.route, c.at, got[i].code, got[i].after, c.want.code, c.want.after)
			}
		}
		if a := deliver("slow", ""); a != (answer{503, time.Second}) {
			t.Errorf("a delivery after timed-out ones: %d after %s", a.code, a.after)
		}
	})
}
