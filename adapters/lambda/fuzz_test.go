package lambda

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzInvoke feeds arbitrary events to the adapter: it must answer with a well-formed HTTP response
// or fail with an *EventError, never panic, and route only paths that start with "/".
func FuzzInvoke(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "events", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"version":"2.0","rawPath":"/prod/%zz","requestContext":{"stage":"prod","http":{"method":"POST"}}}`))
	f.Add([]byte(`{"version":"2.0","rawPath":"/webhooks/hello","body":"!!","isBase64Encoded":true,"requestContext":{"http":{"method":"POST"}}}`))
	h := NewHandler(fixtureReceiver(f))
	f.Fuzz(func(t *testing.T, event []byte) {
		out, err := h.Invoke(context.Background(), event)
		if err != nil {
			var ee *EventError
			if !errors.As(err, &ee) {
				t.Fatalf("error %T: %v", err, err)
			}
			return
		}
		var resp struct {
			StatusCode int    `json:"statusCode"`
			Body       string `json:"body"`
		}
		if err := json.Unmarshal(out, &resp); err != nil || resp.StatusCode < 200 || resp.StatusCode > 599 {
			t.Fatalf("response %s: %v", out, err)
		}
	})
}

// FuzzRoutedPath: whatever the path, stage and base path, the routed path starts with "/" and is
// the end of the path (or "/", when the whole path was a prefix).
func FuzzRoutedPath(f *testing.F) {
	f.Add("/prod/webhooks/a", "prod", "")
	f.Add("/hooks/healthz", "", "/hooks")
	f.Add("/webhooks/a", "$default", "")
	f.Fuzz(func(t *testing.T, p, stage, base string) {
		if !strings.HasPrefix(p, "/") {
			return // algnhsa's paths start with "/"
		}
		if base != "" {
			base = "/" + strings.Trim(base, "/")
		}
		got := routedPath(p, stage, base)
		if !strings.HasPrefix(got, "/") {
			t.Fatalf("routedPath(%q, %q, %q) = %q", p, stage, base, got)
		}
		if got != "/" && !strings.HasSuffix(p, got) { // "/" is what remains of a path that was all prefix
			t.Fatalf("routedPath(%q, %q, %q) = %q is not a suffix of the path", p, stage, base, got)
		}
	})
}
