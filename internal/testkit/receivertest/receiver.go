package receivertest

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/robothub/robothub/adapters/mqtt"
	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/actions"
)

// NewReceiver returns the table's receiver, built the way deployments build it (from Env), plus
// the Go routes when withGoRoutes. Its log lines go to logs (io.Discard if nil).
func NewReceiver(t testing.TB, withGoRoutes bool, logs io.Writer) *webhook.Server {
	t.Helper()
	if logs == nil {
		logs = io.Discard
	}
	env := Env()
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	srv, err := actions.NewServerFromEnv(func(k string) string { return env[k] },
		actions.Config{Logger: logger, Output: io.Discard, FleetDialers: mqtt.FleetDialers(), SplitCommand: actions.SplitCommand}, webhook.WithHandlerTimeout(HandlerTimeout))
	if err != nil {
		t.Fatal(err)
	}
	if withGoRoutes {
		if err := AddGoRoutes(srv); err != nil {
			t.Fatal(err)
		}
	}
	return srv
}

// Result is what a client sees of a response.
type Result struct {
	Status int
	Header http.Header
	Body   []byte
}

// Reference serves h with the standard library's HTTP server and returns a function that sends a
// case to it: the answers every other transport must reproduce.
func Reference(t testing.TB, h http.Handler) func(Case) Result {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return func(c Case) Result { return Send(t, ts.URL, c) }
}

// Send sends c to the server at base (http://host:port) and returns what came back.
func Send(t testing.TB, base string, c Case) Result {
	t.Helper()
	req, err := http.NewRequest(c.Method, base+c.Path, bytes.NewReader(c.Body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range c.Header {
		req.Header[k] = []string{v} // as spelled: net/http sends it as is
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: reading the body: %v", c.Name, err)
	}
	return Result{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

// Check fails t unless got is what the net/http server answered (want) and what the table pins.
func Check(t testing.TB, c Case, got, want Result) {
	t.Helper()
	if want.Status != c.Status {
		t.Fatalf("the net/http reference answered %d, the table says %d: %s", want.Status, c.Status, want.Body)
	}
	if got.Status != want.Status {
		t.Errorf("status %d, net/http answers %d; body %s", got.Status, want.Status, got.Body)
	}
	for _, h := range []string{"Content-Type", "Allow"} {
		if g, w := got.Header.Get(h), want.Header.Get(h); g != w {
			t.Errorf("%s %q, net/http answers %q", h, g, w)
		}
	}
	if c.HTML != "" {
		// The landing page shows addresses built from the Host header, which differs by transport.
		if !bytes.Contains(got.Body, []byte(c.HTML)) || !bytes.Contains(want.Body, []byte(c.HTML)) {
			t.Errorf("landing page lacks %q:\n%s", c.HTML, got.Body)
		}
	} else if !bytes.Equal(got.Body, want.Body) {
		t.Errorf("body %q, net/http answers %q", clip(got.Body), clip(want.Body))
	}
	if len(c.Want) > 0 {
		var fields map[string]any
		if err := json.Unmarshal(got.Body, &fields); err != nil {
			t.Fatalf("body is not a JSON object: %v: %q", err, clip(got.Body))
		}
		for k, v := range c.Want {
			if fields[k] != v {
				t.Errorf("body[%q] = %v, want %v (body %s)", k, fields[k], v, clip(got.Body))
			}
		}
	}
	if c.Status >= 400 && !strings.Contains(string(got.Body), `"error":`) {
		t.Errorf("error response without an error message: %q", clip(got.Body))
	}
	if bytes.Contains(got.Body, []byte(Secret)) {
		t.Errorf("the secret leaked into the response")
	}
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}
