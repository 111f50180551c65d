package hub_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub"
)

const secretToken = "hf_SuperSecretTokenValue0123456789ab"

// faultyHub answers each request with the next step of its script, then with ok.
type faultyHub struct {
	mu       sync.Mutex
	steps    []func(w http.ResponseWriter, r *http.Request)
	requests []string // method path, in order
	bodies   []string
	auth     []string
}

func (f *faultyHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path)
	f.bodies = append(f.bodies, string(body))
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	var step func(w http.ResponseWriter, r *http.Request)
	if len(f.steps) > 0 {
		step, f.steps = f.steps[0], f.steps[1:]
	}
	f.mu.Unlock()
	if step != nil {
		step(w, r)
		return
	}
	okWebhook(w, r)
}

// seen returns the requests received so far.
func (f *faultyHub) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

func okWebhook(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusOK)
	case r.URL.Path == hub.WebhooksPath && r.Method == http.MethodGet:
		io.WriteString(w, `[{"id":"abc","url":"https://e.com","watched":[{"type":"user","name":"a"}],"domains":["repo"],"disabled":false}]`)
	default:
		io.WriteString(w, `{"webhook":{"id":"abc","url":"https://e.com","watched":[{"type":"user","name":"a"}],"domains":["repo"],"secret":"s","disabled":false}}`)
	}
}

func status(code int, hdr ...string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, `{"error":"injected `+http.StatusText(code)+`"}`)
	}
}

func hangUp(w http.ResponseWriter, r *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

func stall(d time.Duration) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
		}
	}
}

func newFaulty(t *testing.T, logs io.Writer, steps ...func(w http.ResponseWriter, r *http.Request)) (*faultyHub, *hub.Client) {
	t.Helper()
	f := &faultyHub{steps: steps}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	if logs == nil {
		logs = io.Discard
	}
	c, err := hub.New(srv.URL, hub.WithToken(secretToken),
		hub.WithRetry(hub.RetryPolicy{MaxAttempts: 4, BaseDelay: 5 * time.Millisecond, MaxDelay: 20 * time.Millisecond, MaxRetryAfter: 2 * time.Second}),
		hub.WithAttemptTimeout(200*time.Millisecond),
		hub.WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func TestIdempotentCallsAreRetried(t *testing.T) {
	ctx := context.Background()
	calls := map[string]func(c *hub.Client) error{
		"list": func(c *hub.Client) error { _, err := c.List(ctx); return err },
		"get":  func(c *hub.Client) error { _, err := c.Get(ctx, "abc"); return err },
		"update": func(c *hub.Client) error {
			_, err := c.Update(ctx, "abc", hub.UpdateRequest{URL: new("https://e.com")})
			return err
		},
		"enable":  func(c *hub.Client) error { _, err := c.Enable(ctx, "abc"); return err },
		"disable": func(c *hub.Client) error { _, err := c.Disable(ctx, "abc"); return err },
		"delete":  func(c *hub.Client) error { return c.Delete(ctx, "abc") },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			f, c := newFaulty(t, &logs, status(429), status(502), status(503))
			if err := call(c); err != nil {
				t.Fatal(err)
			}
			if len(f.seen()) != 4 {
				t.Fatalf("%d requests, want 4: %v", len(f.seen()), f.seen())
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			for _, a := range f.auth {
				if a != "Bearer "+secretToken {
					t.Fatalf("Authorization %q", a)
				}
			}
			if strings.Contains(logs.String(), secretToken) {
				t.Fatal("the token is in the log")
			}
			if !strings.Contains(logs.String(), "retrying") {
				t.Fatalf("retries not logged: %s", logs.String())
			}
		})
	}
}

func TestConnectionErrorsAndTimeoutsAreRetried(t *testing.T) {
	f, c := newFaulty(t, nil, hangUp, stall(time.Second), status(504))
	list, err := c.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "abc" || len(f.seen()) != 4 {
		t.Fatalf("list %+v after %d requests", list, len(f.seen()))
	}
}

func TestCreateIsNeverSentTwice(t *testing.T) {
	for name, step := range map[string]func(w http.ResponseWriter, r *http.Request){
		"503": status(503), "429": status(429, "Retry-After", "0"), "hang up": hangUp, "timeout": stall(time.Second),
	} {
		t.Run(name, func(t *testing.T) {
			f, c := newFaulty(t, nil, step)
			_, err := c.Create(context.Background(), hub.CreateRequest{URL: "https://e.com/h", Watched: []hub.WatchedItem{{"user", "a"}}})
			if err == nil {
				t.Fatal("no error")
			}
			if len(f.seen()) != 1 {
				t.Fatalf("create sent %d times", len(f.seen()))
			}
			if strings.Contains(err.Error(), secretToken) {
				t.Fatal("token in error")
			}
		})
	}
}

func TestRetriesGiveUp(t *testing.T) {
	f, c := newFaulty(t, nil, status(503), status(503), status(503), status(503), status(503))
	_, err := c.List(context.Background())
	var he *hub.Error
	if !errors.As(err, &he) || he.Status != 503 || len(f.seen()) != 4 {
		t.Fatalf("err %v after %d requests", err, len(f.seen()))
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	f, c := newFaulty(t, nil, status(429, "Retry-After", "1"))
	start := time.Now()
	if _, err := c.Get(context.Background(), "abc"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < time.Second {
		t.Fatalf("retried after %s, want the 1 s the hub asked for", d)
	}
	if len(f.seen()) != 2 {
		t.Fatalf("%d requests", len(f.seen()))
	}
	// A pause longer than the policy accepts is not waited for.
	f, c = newFaulty(t, nil, status(429, "Retry-After", "3600"))
	_, err := c.Get(context.Background(), "abc")
	var he *hub.Error
	if !errors.As(err, &he) || he.RetryAfter != time.Hour || !errors.Is(err, fault.ErrRateLimited) || len(f.seen()) != 1 {
		t.Fatalf("err %v after %d requests", err, len(f.seen()))
	}
	if !strings.Contains(err.Error(), "retry after 1h0m0s") {
		t.Fatalf("message %q", err)
	}
}

func TestDeleteWhoseFirstAnswerWasLost(t *testing.T) {
	// The first attempt deleted the webhook but its answer never came; the retry finds nothing.
	_, c := newFaulty(t, nil, hangUp, status(404))
	if err := c.Delete(context.Background(), "abc"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	// Without a lost answer, 404 is an error.
	_, c = newFaulty(t, nil, status(404))
	if err := c.Delete(context.Background(), "abc"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("delete: %v", err)
	}
}

func TestErrorsCarryStatusMessageAndRequestID(t *testing.T) {
	for _, c := range []struct {
		step   func(w http.ResponseWriter, r *http.Request)
		kind   error
		status int
		msg    string
	}{
		{status(401, "X-Request-Id", "req-1"), fault.ErrUnauthenticated, 401, "injected Unauthorized"},
		{status(403, "X-Error-Message", "Forbidden: pass a write token"), fault.ErrForbidden, 403, "Forbidden: pass a write token; injected Forbidden"},
		{status(404), fault.ErrNotFound, 404, "injected Not Found"},
		{status(409), fault.ErrRefused, 409, "injected Conflict"},
		{status(400), fault.ErrInvalid, 400, "injected Bad Request"},
		{func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Error-Message", "Invalid credentials in Authorization header")
			w.WriteHeader(401)
		}, fault.ErrUnauthenticated, 401, "Invalid credentials in Authorization header"},
		{func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(400)
			io.WriteString(w, `{"error":["first","second"]}`)
		}, fault.ErrInvalid, 400, "first; second"},
	} {
		f, cl := newFaulty(t, nil, c.step)
		_, err := cl.Get(context.Background(), "abc")
		var he *hub.Error
		if !errors.As(err, &he) || !errors.Is(err, c.kind) || he.Status != c.status || he.Message != c.msg {
			t.Errorf("err %#v, want %d %q", err, c.status, c.msg)
			continue
		}
		if he.Method != "GET" || he.Path != "/api/settings/webhooks/abc" || len(f.seen()) != 1 {
			t.Errorf("err %+v", he)
		}
		if c.status == 401 && he.RequestID == "" && strings.Contains(c.msg, "injected") {
			t.Errorf("no request ID in %+v", he)
		}
		if strings.Contains(err.Error(), secretToken) {
			t.Error("token in error")
		}
	}
}

func TestValidationHappensBeforeAnyRequest(t *testing.T) {
	f, c := newFaulty(t, nil)
	ctx := context.Background()
	if _, err := c.Create(ctx, hub.CreateRequest{URL: "https://e.com"}); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("create: %v", err)
	}
	if _, err := c.Update(ctx, "abc", hub.UpdateRequest{}); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("update: %v", err)
	}
	if _, err := c.Get(ctx, "a/../b"); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("get: %v", err)
	}
	if len(f.seen()) != 0 {
		t.Fatalf("requests were sent: %v", f.seen())
	}
}

func TestEndpointCredentialsStayOutOfErrors(t *testing.T) {
	_, err := hub.New("ftp://user:hunter2@example.com")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err %v", err)
	}
	c, err := hub.New("http://user:hunter2@127.0.0.1:1", hub.WithRetry(hub.RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.List(context.Background())
	var te *hub.TransportError
	if !errors.As(err, &te) || strings.Contains(err.Error(), "hunter2") || strings.Contains(c.Endpoint(), "hunter2") {
		t.Fatalf("err %v, endpoint %s", err, c.Endpoint())
	}
}

func TestJobSecretsDecodeFromNamesOrObject(t *testing.T) {
	for _, body := range []string{
		`{"webhook":{"id":"a","job":{"command":["sh"],"secrets":["B","A"],"environment":{"N":1}},"watched":[],"domains":[],"disabled":false}}`,
		`{"webhook":{"id":"a","job":{"command":["sh"],"secrets":{"A":"***","B":null},"environment":{"N":1}},"watched":[],"domains":[],"disabled":false}}`,
	} {
		_, c := newFaulty(t, nil, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
		wh, err := c.Get(context.Background(), "a")
		if err != nil {
			t.Fatal(err)
		}
		names := strings.Join(wh.Job.SecretNames, ",")
		if names != "A,B" && names != "B,A" || wh.Job.Environment["N"] != "1" {
			t.Errorf("job %+v", wh.Job)
		}
	}
}

func TestAnswersDecodeAsEncodingJSONWould(t *testing.T) {
	// Mixed-case names, a duplicate name (the last wins) and invalid UTF-8 must not fail a list.
	body := "[{\"ID\":\"a\",\"Url\":\"https://e.com/\xff\",\"watched\":[],\"domains\":[\"repo\"],\"disabled\":false,\"disabled\":true}]"
	_, c := newFaulty(t, nil, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
	list, err := c.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "a" || !strings.HasPrefix(list[0].URL, "https://e.com/") || !list[0].Disabled {
		t.Fatalf("%+v", list)
	}
}

// A hub on this machine that is not running fails at once, in one error: no retries (and no retry
// warnings) for a port nobody listens on.
func TestRefusedLoopbackHubIsNotRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var logs strings.Builder
	c, err := hub.New("http://"+addr, hub.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		hub.WithRetry(hub.RetryPolicy{MaxAttempts: 4, BaseDelay: time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.List(context.Background())
	var te *hub.TransportError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err %v, want a transport error: connection refused", err)
	}
	if logs.Len() != 0 {
		t.Fatalf("retries were logged:\n%s", logs.String())
	}
}
