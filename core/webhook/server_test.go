package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/fault/httpstatus"
	"github.com/robothub/robothub/internal/testkit/syncbuf"
)

const testSecret = "s3cret-value-for-tests"

func newTestServer(t *testing.T, opts ...Option) (*Server, *httptest.Server, *syncbuf.Buffer) {
	t.Helper()
	logs := &syncbuf.Buffer{}
	opts = append([]Option{WithLogger(slog.New(slog.NewTextHandler(logs, nil))), WithGetenv(func(string) string { return "" })}, opts...)
	s := NewServer(opts...)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts, logs
}

type reply struct {
	status int
	close  bool // the server closes the connection after this answer
	header http.Header
	body   map[string]any
	raw    string
}

func send(t *testing.T, method, url string, header map[string]string, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, close: resp.Close, header: resp.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

const minimalPayload = `{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"model","name":"alice/bert"}}`

// TestStatusCodes walks every status code of a webhook route through a real HTTP server.
func TestStatusCodes(t *testing.T) {
	s, ts, _ := newTestServer(t, WithSecret(testSecret), WithMaxBodyBytes(4096), WithHandlerTimeout(200*time.Millisecond))
	got := make(chan *Payload, 10)
	must(t, s.Add("ok", func(_ context.Context, p *Payload, _ http.Header) (any, error) {
		got <- p
		return map[string]string{"message": "received " + p.Repo.Name}, nil
	}))
	must(t, s.Add("nothing", func(context.Context, *Payload, http.Header) (any, error) { return nil, nil }))
	must(t, s.Add("text", func(context.Context, *Payload, http.Header) (any, error) { return "hello", nil }))
	must(t, s.Add("accepted", func(context.Context, *Payload, http.Header) (any, error) {
		return Response{Status: http.StatusAccepted, Body: map[string]int{"queued": 1}}, nil
	}))
	must(t, s.Add("fails", func(context.Context, *Payload, http.Header) (any, error) {
		return nil, errors.New("model store unavailable")
	}))
	must(t, s.Add("refuses", func(context.Context, *Payload, http.Header) (any, error) {
		return nil, fault.Refusedf("already processed")
	}))
	must(t, s.Add("panics", func(context.Context, *Payload, http.Header) (any, error) { panic("boom") }))
	finishLate := make(chan struct{}) // the slow handler is still running when its 503 is answered
	t.Cleanup(func() { close(finishLate) })
	must(t, s.Add("slow", func(ctx context.Context, _ *Payload, _ http.Header) (any, error) {
		<-ctx.Done()
		<-finishLate
		return "too late", nil
	}))
	must(t, s.Add("bad-result", func(context.Context, *Payload, http.Header) (any, error) { return func() {}, nil }))

	good := map[string]string{SecretHeader: testSecret, "Content-Type": "application/json"}
	cases := []struct {
		name, method, path string
		header             map[string]string
		body               string
		status             int
		want               map[string]any
	}{
		{"handler result", "POST", "/webhooks/ok", good, minimalPayload, 200, map[string]any{"message": "received alice/bert"}},
		{"trailing slash", "POST", "/webhooks/ok/", good, minimalPayload, 200, map[string]any{"message": "received alice/bert"}},
		{"handler returns nothing", "POST", "/webhooks/nothing", good, minimalPayload, 200, map[string]any{"message": "ok"}},
		{"handler returns a string", "POST", "/webhooks/text", good, minimalPayload, 200, map[string]any{"message": "hello"}},
		{"handler chooses status", "POST", "/webhooks/accepted", good, minimalPayload, 202, map[string]any{"queued": 1.0}},
		{"secret in query", "POST", "/webhooks/ok?secret=" + testSecret, nil, minimalPayload, 200, map[string]any{"message": "received alice/bert"}},
		{"unknown route", "POST", "/webhooks/nope", good, minimalPayload, 404, nil},
		{"unknown page", "GET", "/favicon.ico", nil, "", 404, nil},
		{"GET on a route", "GET", "/webhooks/ok", good, "", 405, nil},
		{"PUT on a route", "PUT", "/webhooks/ok", good, minimalPayload, 405, nil},
		{"no secret", "POST", "/webhooks/ok", nil, minimalPayload, 401, map[string]any{"error": "x-webhook-secret header not set."}},
		{"query without secret", "POST", "/webhooks/ok?other=1", nil, minimalPayload, 401, map[string]any{"error": "x-webhook-secret header not set."}},
		{"wrong secret", "POST", "/webhooks/ok", map[string]string{SecretHeader: "guess"}, minimalPayload, 403, map[string]any{"error": "Invalid webhook secret."}},
		{"empty secret", "POST", "/webhooks/ok", map[string]string{SecretHeader: ""}, minimalPayload, 403, map[string]any{"error": "Invalid webhook secret."}},
		{"wrong secret in query", "POST", "/webhooks/ok?secret=guess", nil, minimalPayload, 403, map[string]any{"error": "Invalid webhook secret."}},
		{"too big", "POST", "/webhooks/ok", good, `{"pad":"` + strings.Repeat("x", 5000) + `"}`, 413, nil},
		{"not JSON", "POST", "/webhooks/ok", good, `event=update`, 400, nil},
		{"empty body", "POST", "/webhooks/ok", good, ``, 400, nil},
		{"JSON but not a payload", "POST", "/webhooks/ok", good, `{"event":{"scope":"repo"},"repo":{"type":"model","name":"a/b"}}`, 422, map[string]any{"error": "payload field event.action is missing"}},
		{"no repo", "POST", "/webhooks/ok", good, `{"event":{"action":"update","scope":"repo"}}`, 422, map[string]any{"error": "payload field repo is missing"}},
		{"wrong type", "POST", "/webhooks/ok", good, `{"event":{"action":"update","scope":"repo"},"repo":{"type":"model","name":"a/b","private":1}}`, 422, map[string]any{"error": "payload field repo.private must be a boolean"}},
		{"handler error", "POST", "/webhooks/fails", good, minimalPayload, 500, map[string]any{"error": "model store unavailable"}},
		{"handler status error", "POST", "/webhooks/refuses", good, minimalPayload, 409, map[string]any{"error": "already processed"}},
		{"handler panic", "POST", "/webhooks/panics", good, minimalPayload, 500, map[string]any{"error": "handler panics panicked"}},
		{"handler timeout", "POST", "/webhooks/slow", good, minimalPayload, 503, map[string]any{"error": "handler slow did not finish within 200ms"}},
		{"result not JSON", "POST", "/webhooks/bad-result", good, minimalPayload, 500, map[string]any{"error": "handler bad-result returned a value that is not JSON"}},
		{"health", "GET", "/healthz", nil, "", 200, map[string]any{"status": "ok", "routes": 9.0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := send(t, c.method, ts.URL+c.path, c.header, c.body)
			if r.status != c.status {
				t.Fatalf("status = %d, want %d; body %s", r.status, c.status, r.raw)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			if c.status >= 400 {
				if msg, _ := r.body["error"].(string); msg == "" {
					t.Errorf("error body %q has no error message", r.raw)
				}
			}
			for k, v := range c.want {
				if r.body[k] != v {
					t.Errorf("body[%q] = %v, want %v (body %s)", k, r.body[k], v, r.raw)
				}
			}
			if c.status == 405 && r.header.Get("Allow") != "POST" {
				t.Errorf("Allow = %q, want POST", r.header.Get("Allow"))
			}
			if strings.Contains(r.raw, testSecret) {
				t.Errorf("the secret leaked into a response: %s", r.raw)
			}
		})
	}
	select {
	case p := <-got:
		if p.Repo.Name != "alice/bert" || string(p.Raw) == "" {
			t.Errorf("handler got %+v", p)
		}
	default:
		t.Error("the ok handler never ran")
	}
}

func TestHandlerReceivesHeadersAndContext(t *testing.T) {
	s, ts, _ := newTestServer(t)
	must(t, s.Add("/echo/", func(ctx context.Context, p *Payload, h http.Header) (any, error) {
		if _, ok := ctx.Deadline(); !ok {
			return nil, errors.New("context has no deadline")
		}
		return map[string]string{"agent": h.Get("User-Agent"), "scope": p.Event.Scope}, nil
	}))
	r := send(t, "POST", ts.URL+"/webhooks/echo", map[string]string{"User-Agent": "hub-test/1"}, minimalPayload)
	if r.status != 200 || r.body["agent"] != "hub-test/1" || r.body["scope"] != "repo.content" {
		t.Fatalf("got %d %s", r.status, r.raw)
	}
}

func TestOpenServerWarnsOnce(t *testing.T) {
	_, ts, logs := newTestServer(t)
	if n := strings.Count(logs.String(), "every /webhooks/ route accepts requests from anyone"); n != 1 {
		t.Fatalf("warning logged %d times, want once:\n%s", n, logs)
	}
	_ = ts
	_, _, logs2 := newTestServer(t, WithSecret(testSecret))
	if strings.Contains(logs2.String(), "anyone") {
		t.Errorf("a server with a secret warned it is open:\n%s", logs2)
	}
}

func TestSecretFromEnvironment(t *testing.T) {
	env := map[string]string{SecretEnv: "from-env"}
	logs := &syncbuf.Buffer{}
	s := NewServer(WithGetenv(func(k string) string { return env[k] }), WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	if !s.SecretIsSet() {
		t.Fatal("WEBHOOK_SECRET was not read")
	}
	must(t, s.Add("x", func(context.Context, *Payload, http.Header) (any, error) { return nil, nil }))
	ts := httptest.NewServer(s)
	defer ts.Close()
	if r := send(t, "POST", ts.URL+"/webhooks/x", map[string]string{SecretHeader: "from-env"}, minimalPayload); r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	if r := send(t, "POST", ts.URL+"/webhooks/x", map[string]string{"x-webhook-secret": "nope"}, minimalPayload); r.status != 403 {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	// An explicit option wins over the environment, even an empty one.
	open := NewServer(WithSecret(""), WithGetenv(func(k string) string { return env[k] }), WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if open.SecretIsSet() {
		t.Error("WithSecret(\"\") should override WEBHOOK_SECRET")
	}
}

func TestSecretNeverLogged(t *testing.T) {
	s, ts, logs := newTestServer(t, WithSecret(testSecret))
	must(t, s.Add("x", func(context.Context, *Payload, http.Header) (any, error) { return nil, errors.New("failed") }))
	send(t, "POST", ts.URL+"/webhooks/x", map[string]string{SecretHeader: testSecret + "-wrong"}, minimalPayload)
	send(t, "POST", ts.URL+"/webhooks/x", map[string]string{SecretHeader: testSecret}, minimalPayload)
	send(t, "POST", ts.URL+"/webhooks/x?secret="+testSecret, nil, `nope`)
	if strings.Contains(logs.String(), testSecret) {
		t.Fatalf("secret in logs:\n%s", logs)
	}
	if fmt.Sprint(NewSecret(testSecret)) != "[set]" {
		t.Error("Secret prints its value")
	}
}

func TestRegistration(t *testing.T) {
	s, _, _ := newTestServer(t)
	fn := func(context.Context, *Payload, http.Header) (any, error) { return nil, nil }
	must(t, s.Add("/a/", fn))
	must(t, s.Add("b/c", fn))
	if err := s.Add("a", fn); err == nil || !strings.Contains(err.Error(), "/webhooks/a is already registered") {
		t.Errorf("duplicate route: err = %v", err)
	}
	for _, bad := range []string{"", "/", "a b", "a//b", "../x", "x/..", "é", "a?b", "a%20"} {
		if err := s.Add(bad, fn); err == nil {
			t.Errorf("Add(%q) succeeded, want an error", bad)
		}
	}
	if err := s.Add("nil", nil); err == nil {
		t.Error("Add with a nil handler succeeded")
	}
	got := s.Routes()
	if len(got) != 2 || got[0].Path != "/webhooks/a" || got[1].Path != "/webhooks/b/c" || got[1].Name != "b/c" {
		t.Errorf("Routes() = %+v", got)
	}
}

func sayHello(context.Context, *Payload, http.Header) (any, error) { return "hello", nil }

type bot struct{}

func (bot) OnDiscussion(context.Context, *Payload, http.Header) (any, error) { return nil, nil }

func TestAddFuncUsesTheFunctionName(t *testing.T) {
	s, ts, _ := newTestServer(t)
	must(t, s.AddFunc(sayHello))
	must(t, s.AddFunc(bot{}.OnDiscussion))
	if r := send(t, "POST", ts.URL+"/webhooks/sayHello", nil, minimalPayload); r.status != 200 || r.body["message"] != "hello" {
		t.Fatalf("POST /webhooks/sayHello = %d %s", r.status, r.raw)
	}
	if r := send(t, "POST", ts.URL+"/webhooks/OnDiscussion", nil, minimalPayload); r.status != 200 {
		t.Fatalf("POST /webhooks/OnDiscussion = %d %s", r.status, r.raw)
	}
	err := s.AddFunc(func(context.Context, *Payload, http.Header) (any, error) { return nil, nil })
	if err == nil || !strings.Contains(err.Error(), "anonymous function") || !strings.Contains(err.Error(), "Add(name, fn)") {
		t.Errorf("anonymous function: err = %v", err)
	}
	if err := s.AddFunc(sayHello); err == nil {
		t.Error("registering sayHello twice succeeded")
	}
}

// TestPanicDoesNotStopTheServer: after a handler panics, the server keeps answering.
func TestPanicDoesNotStopTheServer(t *testing.T) {
	s, ts, logs := newTestServer(t)
	must(t, s.Add("panics", func(context.Context, *Payload, http.Header) (any, error) { panic("kaboom") }))
	must(t, s.Add("fine", func(context.Context, *Payload, http.Header) (any, error) { return "fine", nil }))
	for i := 0; i < 3; i++ {
		if r := send(t, "POST", ts.URL+"/webhooks/panics", nil, minimalPayload); r.status != 500 {
			t.Fatalf("panic: status %d", r.status)
		}
		if r := send(t, "POST", ts.URL+"/webhooks/fine", nil, minimalPayload); r.status != 200 {
			t.Fatalf("after a panic: status %d", r.status)
		}
	}
	if !strings.Contains(logs.String(), "kaboom") || !strings.Contains(logs.String(), "server_test.go") {
		t.Errorf("panic not logged with its stack:\n%s", logs)
	}
}

// TestConcurrentDeliveries sends many deliveries at once (run it with -race) while routes are added.
func TestConcurrentDeliveries(t *testing.T) {
	s, ts, _ := newTestServer(t, WithSecret(testSecret))
	var count atomic.Int64
	must(t, s.Add("count", func(_ context.Context, p *Payload, _ http.Header) (any, error) {
		count.Add(1)
		return map[string]string{"repo": p.Repo.Name}, nil
	}))
	const workers, each = 16, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			_ = s.Add(fmt.Sprintf("late-%d", w), sayHello) // registrations race with requests
			for i := 0; i < each; i++ {
				body := strings.Replace(minimalPayload, "alice/bert", fmt.Sprintf("u%d/r%d", w, i), 1)
				req, _ := http.NewRequest("POST", ts.URL+"/webhooks/count", strings.NewReader(body))
				req.Header.Set(SecretHeader, testSecret)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					errs <- err
					continue
				}
				var out map[string]string
				_ = json.NewDecoder(resp.Body).Decode(&out)
				resp.Body.Close()
				if resp.StatusCode != 200 || out["repo"] != fmt.Sprintf("u%d/r%d", w, i) {
					errs <- fmt.Errorf("status %d, body %v", resp.StatusCode, out)
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if count.Load() != workers*each {
		t.Errorf("handler ran %d times, want %d", count.Load(), workers*each)
	}
	if n := len(s.Routes()); n != workers+1 {
		t.Errorf("%d routes, want %d", n, workers+1)
	}
}

func TestChunkedBodyOverCap(t *testing.T) {
	s, ts, _ := newTestServer(t, WithMaxBodyBytes(1000))
	must(t, s.Add("x", func(context.Context, *Payload, http.Header) (any, error) { return nil, nil }))
	// No Content-Length: the cap must hold while reading.
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(`{"pad":"` + strings.Repeat("y", 3000) + `"}`))
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", ts.URL+"/webhooks/x", pr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Fatalf("status %d, want 413", resp.StatusCode)
	}
	// Exactly at the cap is accepted.
	body := minimalPayload + strings.Repeat(" ", 1000-len(minimalPayload))
	if r := send(t, "POST", ts.URL+"/webhooks/x", nil, body); r.status != 200 {
		t.Fatalf("a body of exactly the cap: status %d %s", r.status, r.raw)
	}
}

func TestCustomUI(t *testing.T) {
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "my own page at "+r.URL.Path) })
	s, ts, _ := newTestServer(t, WithUI(ui))
	must(t, s.Add("x", func(context.Context, *Payload, http.Header) (any, error) { return nil, nil }))
	if r := send(t, "GET", ts.URL+"/", nil, ""); r.raw != "my own page at /" {
		t.Errorf("GET / = %q", r.raw)
	}
	if r := send(t, "GET", ts.URL+"/about", nil, ""); r.raw != "my own page at /about" {
		t.Errorf("GET /about = %q", r.raw)
	}
	if r := send(t, "POST", ts.URL+"/webhooks/x", nil, minimalPayload); r.status != 200 {
		t.Errorf("webhook route behind a custom UI: %d", r.status)
	}
	if r := send(t, "GET", ts.URL+"/healthz", nil, ""); r.status != 200 || r.body["status"] != "ok" {
		t.Errorf("healthz behind a custom UI: %d %s", r.status, r.raw)
	}
}

func TestLandingPage(t *testing.T) {
	s, ts, _ := newTestServer(t, WithSecret(testSecret))
	must(t, s.Add("say-hello", sayHello))
	must(t, s.Add("team/retrain", sayHello))
	r := send(t, "GET", ts.URL+"/", nil, "")
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	for _, want := range []string{ts.URL + "/webhooks/say-hello", ts.URL + "/webhooks/team/retrain", "A secret is set", "X-Webhook-Secret", "robothub webhooks create"} {
		if !strings.Contains(r.raw, want) {
			t.Errorf("landing page lacks %q", want)
		}
	}
	if strings.Contains(r.raw, testSecret) {
		t.Fatal("landing page shows the secret")
	}
	s.SetPublicURL("https://abc.ngrok.app/")
	r = send(t, "GET", ts.URL+"/", nil, "")
	if !strings.Contains(r.raw, "https://abc.ngrok.app/webhooks/say-hello") {
		t.Error("landing page does not use the public URL")
	}

	_, open, _ := newTestServer(t)
	r = send(t, "GET", open.URL+"/", nil, "")
	if !strings.Contains(r.raw, "No secret is set") || !strings.Contains(r.raw, "No handler is registered") {
		t.Errorf("open, empty server landing page:\n%s", r.raw)
	}
	if r := send(t, "POST", open.URL+"/", nil, ""); r.status != 405 {
		t.Errorf("POST / = %d, want 405", r.status)
	}
}

func TestDefaultServer(t *testing.T) {
	name := fmt.Sprintf("default-%d", time.Now().UnixNano())
	Handle(name, sayHello)
	found := false
	for _, r := range Default().Routes() {
		found = found || r.Name == name
	}
	if !found {
		t.Fatalf("Handle did not register %s on the default server", name)
	}
	defer func() {
		if recover() == nil {
			t.Error("Handle with a duplicate name did not panic")
		}
	}()
	Handle(name, sayHello)
}

func TestEventNormalized(t *testing.T) {
	cases := map[Event]Event{
		{Action: "update", Scope: "repo.content"}:                {Action: "update", Scope: "repo.content"},
		{Action: "create", Scope: "repo.config.dois"}:            {Action: "update", Scope: "repo.config"},
		{Action: "delete", Scope: "discussion.comment.reaction"}: {Action: "update", Scope: "discussion.comment"},
		{Action: "create", Scope: "discussion.label"}:            {Action: "update", Scope: "discussion"},
		{Action: "create", Scope: "repo.lfs"}:                    {Action: "update", Scope: "repo"},
		{Action: "create", Scope: "collection"}:                  {Action: "create", Scope: "collection"},
	}
	for in, want := range cases {
		if got := in.Normalized(); got != want {
			t.Errorf("%+v.Normalized() = %+v, want %+v", in, got, want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestClientLeavingCancelsHandler: a handler's context ends with context.Canceled when the hub hangs
// up, and the receiver logs why it gave up.
func TestClientLeavingCancelsHandler(t *testing.T) {
	s, ts, logs := newTestServer(t, WithHandlerTimeout(time.Hour))
	started, ended := make(chan struct{}), make(chan error, 1)
	must(t, s.Add("wait", func(ctx context.Context, _ *Payload, _ http.Header) (any, error) {
		close(started)
		<-ctx.Done()
		ended <- ctx.Err()
		return nil, nil
	}))
	ctx, hangUp := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "POST", ts.URL+"/webhooks/wait", strings.NewReader(minimalPayload))
	if err != nil {
		t.Fatal(err)
	}
	sent := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		sent <- err
	}()
	<-started
	hangUp()
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("handler context ended with %v, want context.Canceled", err)
	}
	if err := <-sent; !errors.Is(err, context.Canceled) {
		t.Fatalf("client: %v", err)
	}
	ts.Close() // waits for the request to finish, and so for its log
	if !strings.Contains(logs.String(), "client went away before handler wait finished") {
		t.Errorf("log does not say the client left:\n%s", logs)
	}
}

// TestStatusOfFaultKinds: the receiver's own errors, and a handler's error of each core/fault kind
// answered through a real server with the one table's status for the receiver.
func TestStatusOfFaultKinds(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
	}{
		{fmt.Errorf("wrapped: %w", fault.Refusedf("x")), 409}, {&FieldError{Field: "repo", Problem: "is missing"}, 422},
		{ErrNotJSON, 400}, {ErrSecretMissing, 401}, {ErrSecretInvalid, 403}, {errors.New("plain"), 500},
		{&fault.Error{Msg: "no kind"}, 500}, {rateLimitedAndUnavailable{}, 429},
	} {
		if got := statusOf(c.err); got != c.status {
			t.Errorf("statusOf(%v) = %d, want %d", c.err, got, c.status)
		}
	}
	s, ts, _ := newTestServer(t)
	for _, kind := range fault.Kinds() {
		name := strings.ReplaceAll(kind.String(), " ", "-")
		must(t, s.Add(name, func(context.Context, *Payload, http.Header) (any, error) {
			return nil, fmt.Errorf("handling: %w", fault.New(kind, "it went wrong"))
		}))
		r := send(t, "POST", ts.URL+"/webhooks/"+name, nil, minimalPayload)
		if want := httpstatus.Status(kind, httpstatus.Receiver); r.status != want || r.body["error"] != "handling: it went wrong" {
			t.Errorf("a handler's %v error: %d %s, want %d", kind, r.status, r.raw, want)
		}
	}
}

// rateLimitedAndUnavailable is an error of two kinds, as the hub client's answer to a 429 is.
type rateLimitedAndUnavailable struct{}

func (rateLimitedAndUnavailable) Error() string { return "slow down" }
func (rateLimitedAndUnavailable) Is(target error) bool {
	return target == fault.ErrRateLimited || target == fault.ErrUnavailable
}
