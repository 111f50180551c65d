// Package apitest calls a robotd route room's handlers over HTTP as the daemon's clients do, for
// the rooms' tests: a request's status and body, an answer that must be a JSON object, a refusal
// with its status and detail. It also holds the access guard as a room's routes see it (Clients).
package apitest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Server is a room's routes served on loopback for one test, with the calls a test makes of them
// as the room's client. (Named Server so that its embedded httptest.Server's Client stays reachable
// from a test's type that embeds it.)
type Server struct {
	*httptest.Server
}

// Serve serves h on loopback until the test ends.
func Serve(t testing.TB, h http.Handler) *Server {
	t.Helper()
	c := &Server{Server: httptest.NewServer(h)}
	t.Cleanup(c.Close)
	return c
}

// Send sends req and returns the status, the headers and the raw body of the answer.
func (c *Server) Send(t testing.TB, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	resp, err := c.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", req.Method, req.URL.Path, err)
	}
	return resp.StatusCode, resp.Header, data
}

// Call sends one request (no body when body is "") and returns the status and the raw body.
func (c *Server) Call(t testing.TB, method, path, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	code, _, data := c.Send(t, req)
	return code, data
}

// Object calls and decodes the answer, which must be a JSON object.
func (c *Server) Object(t testing.TB, method, path, body string) (int, map[string]any) {
	t.Helper()
	code, data := c.Call(t, method, path, body)
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s %s: %d %q is no JSON object", method, path, code, data)
	}
	return code, out
}

// Refused checks that a request is answered with status and a detail containing text.
func (c *Server) Refused(t testing.TB, method, path, body string, status int, text string) {
	t.Helper()
	code, out := c.Object(t, method, path, body)
	if !hasDetail(code, out, status, text) {
		t.Fatalf("%s %s %s: got %d %v, want %d with a detail containing %q", method, path, body, code, out, status, text)
	}
}

// WantDetail checks an error answer already decoded: its status and its detail's text.
func WantDetail(t testing.TB, code int, body map[string]any, status int, text string) {
	t.Helper()
	if !hasDetail(code, body, status, text) {
		t.Fatalf("got %d %v, want %d with a detail containing %q", code, body, status, text)
	}
}

func hasDetail(code int, body map[string]any, status int, text string) bool {
	detail, _ := body["detail"].(string)
	return code == status && strings.Contains(detail, text)
}

// Clients is the access guard as a room's routes see it (robotd/httpapi.Clients): every client is
// "peer", and every stream gets a slot unless Full is set (then 429, as the guard answers).
type Clients struct {
	mu   sync.Mutex
	full bool
}

// SetFull makes every stream from now on refused (full) or served.
func (c *Clients) SetFull(full bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.full = full
}

func (c *Clients) ClientKey(*http.Request) string { return "peer" }

func (c *Clients) AcquireStream(w http.ResponseWriter, _ *http.Request) (func(), bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.full {
		http.Error(w, `{"detail": "Too many streams"}`, http.StatusTooManyRequests)
		return nil, false
	}
	return func() {}, true
}
