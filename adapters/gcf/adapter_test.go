package gcf

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/robothub/robothub/internal/testkit/receivertest"
)

// runTable sends the receiver table to base and requires the net/http server's answers.
func runTable(t *testing.T, base string, want func(receivertest.Case) receivertest.Result) {
	t.Helper()
	for _, c := range receivertest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			receivertest.Check(t, c, receivertest.Send(t, base, c), want(c))
		})
	}
}

func TestTable(t *testing.T) {
	srv := receivertest.NewReceiver(t, true, nil)
	ts := httptest.NewServer(Handler(srv, "RobothubWebhooks"))
	defer ts.Close()
	runTable(t, ts.URL, receivertest.Reference(t, srv))
}

// tableFunction is registered with the Functions Framework once per process (the framework
// refuses a name twice, and go test -count=N runs a test N times in one process); each run points
// it at its own receiver.
var tableFunction = &swappableFunction{}

type swappableFunction struct {
	once sync.Once
	mu   sync.Mutex
	h    http.Handler
}

func (f *swappableFunction) register(h http.Handler) {
	f.mu.Lock()
	f.h = h
	f.mu.Unlock()
	f.once.Do(func() { Register("TableFunction", f) })
}

func (f *swappableFunction) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	h := f.h
	f.mu.Unlock()
	h.ServeHTTP(w, r)
}

// TestTableThroughFuncframework registers the receiver as a function, serves it the way Google's
// runtime does (funcframework with FUNCTION_TARGET) and sends it the table.
func TestTableThroughFuncframework(t *testing.T) {
	logs := &bytes.Buffer{}
	srv := receivertest.NewReceiver(t, true, logs)
	tableFunction.register(srv)
	t.Setenv("FUNCTION_TARGET", "TableFunction")
	base := receivertest.StartFuncframework(t)

	runTable(t, base, receivertest.Reference(t, srv))

	// Under a /<entry point> prefix, as through funcframework without FUNCTION_TARGET or an
	// address that keeps the function's name, the routes are the same.
	for path, want := range map[string]int{
		"/TableFunction/webhooks/hello":        200,
		"/TableFunction/webhooks/nope":         404,
		"/anything/else/webhooks/team/retrain": 200,
	} {
		c := receivertest.Cases()[0]
		c.Path = path
		if got := receivertest.Send(t, base, c); got.Status != want {
			t.Errorf("POST %s: %d %s, want %d", path, got.Status, got.Body, want)
		}
	}
	for path, want := range map[string]string{"/TableFunction": "<html", "/TableFunction/healthz": `"status":"ok"`} {
		got := receivertest.Send(t, base, receivertest.Case{Method: "GET", Path: path})
		if got.Status != 200 || !bytes.Contains(got.Body, []byte(want)) {
			t.Errorf("GET %s: %d %.200s", path, got.Status, got.Body)
		}
	}
	if strings.Contains(logs.String(), receivertest.Secret) {
		t.Error("the secret leaked into the logs")
	}
}

func TestRoutedPath(t *testing.T) {
	prefixes := []string{"/Webhooks", "/robothub-webhooks"}
	for in, want := range map[string]string{
		"/webhooks/a":                         "/webhooks/a",
		"/":                                   "/",
		"/healthz":                            "/healthz",
		"/Webhooks":                           "/",
		"/Webhooks/healthz":                   "/healthz",
		"/Webhooks/webhooks/a":                "/webhooks/a",
		"/robothub-webhooks/webhooks/team/a":  "/webhooks/team/a",
		"/WebhooksX/healthz":                  "/WebhooksX/healthz",
		"/v1/webhooks/a":                      "/webhooks/a",
		"/webhooks/Webhooks/x":                "/webhooks/Webhooks/x",
		"/robothub-webhooks/favicon.ico":      "/favicon.ico",
		"/other/favicon.ico":                  "/other/favicon.ico",
		"/webhooks":                           "/webhooks",
		"/robothub-webhooks/webhooks/nope/..": "/webhooks/nope/..",
	} {
		if got := routedPath(in, prefixes); got != want {
			t.Errorf("routedPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLoggerSeverity(t *testing.T) {
	var buf bytes.Buffer
	log := NewLogger(&buf, slog.LevelDebug)
	log.Debug("d", "k", 1)
	log.Info("i")
	log.Warn("webhook refused", "route", "/webhooks/a", "status", 403)
	log.Error("e")
	log.Log(context.Background(), slog.LevelError+4, "c")
	want := []string{"DEBUG d", "INFO i", "WARNING webhook refused", "ERROR e", "CRITICAL c"}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines:\n%s", len(lines), &buf)
	}
	for i, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if got := fmt.Sprint(rec["severity"], " ", rec["message"]); got != want[i] {
			t.Errorf("line %d: %q, want %q (%s)", i, got, want[i], line)
		}
		if _, ok := rec["time"]; !ok {
			t.Errorf("line %d has no time", i)
		}
		if _, ok := rec["level"]; ok {
			t.Errorf("line %d still has level: %s", i, line)
		}
	}
	if !strings.Contains(lines[2], `"route":"/webhooks/a","status":403`) {
		t.Errorf("attributes lost: %s", lines[2])
	}

	buf.Reset()
	NewLogger(&buf, slog.LevelWarn).Info("dropped")
	if buf.Len() != 0 {
		t.Errorf("an INFO record passed a WARN logger: %s", &buf)
	}
}
