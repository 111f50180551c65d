package hubemu_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/delivery"
	"github.com/robothub/robothub/internal/hubemu/localhub"
	"github.com/robothub/robothub/internal/testkit/hubtest"
)

// loopback lets deliveries reach the tests' receivers, which listen on loopback: a hub refuses
// such targets unless told (delivery/egress.go).
var loopback = []string{"127.0.0.0/8", "::1/128"}

// fastDelivery keeps retries quick in tests.
var fastDelivery = delivery.Policy{Timeout: 2 * time.Second, MaxAttempts: 5, BaseDelay: 20 * time.Millisecond, MaxDelay: 100 * time.Millisecond, Workers: 4, JobWorkers: 2}

type testHub struct {
	*hubtest.Hub
	t     *testing.T
	emu   *localhub.Emulator // the Hub's
	token string             // a write token of user alice
}

// newTestHub serves a local hub on cfg (in memory unless cfg.DSN is set) with the tests' delivery
// settings, starts Run, and makes user alice with a write token.
func newTestHub(t *testing.T, cfg localhub.Config) *testHub {
	t.Helper()
	h := serveTestHub(t, cfg)
	h.token, _ = h.Token(t, "alice", hubemu.RoleWrite)
	return h
}

// serveTestHub is newTestHub without the token: for a hub opened again on the database of another.
func serveTestHub(t *testing.T, cfg localhub.Config) *testHub {
	t.Helper()
	if cfg.AllowDeliveryTo == nil {
		cfg.AllowDeliveryTo = loopback
	}
	if cfg.Delivery == (delivery.Policy{}) {
		cfg.Delivery = fastDelivery
	}
	h := &testHub{Hub: hubtest.Start(t, cfg), t: t}
	h.emu = h.Emulator
	h.start()
	return h
}

// start starts Run (again, after stop).
func (h *testHub) start() { h.Run() }

// stop stops Run and waits for it.
func (h *testHub) stop() {
	if err := h.Stop(); err != nil {
		h.t.Errorf("Run: %v", err)
	}
}

// call sends a JSON request with the token and returns the status and the body.
func (h *testHub) call(method, path, token string, body any) (int, []byte, http.Header) {
	h.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		buf, _ := json.Marshal(b)
		r = bytes.NewReader(buf)
	}
	req, _ := http.NewRequest(method, h.URL+path, r)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data, resp.Header
}

// mustCall is call that expects status want and decodes the body into out (if not nil).
func (h *testHub) mustCall(method, path, token string, body any, want int, out any) {
	h.t.Helper()
	status, data, _ := h.call(method, path, token, body)
	if status != want {
		h.t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			h.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
}

type record struct {
	ID  string `json:"id"`
	URL string `json:"url"`
	Job *struct {
		ID          string            `json:"id"`
		Command     []string          `json:"command"`
		Environment map[string]string `json:"environment"`
		Secrets     []string          `json:"secrets"`
	} `json:"job"`
	Watched  []hub.WatchedItem `json:"watched"`
	Domains  []string          `json:"domains"`
	Secret   string            `json:"secret"`
	Disabled bool              `json:"disabled"`
}

func (h *testHub) createWebhook(token string, body map[string]any) record {
	h.t.Helper()
	var env struct{ Webhook record }
	h.mustCall("POST", "/api/settings/webhooks", token, body, 200, &env)
	return env.Webhook
}

func (h *testHub) emit(token string, in hubemu.EmitInput) hubemu.EmitResult {
	h.t.Helper()
	var res hubemu.EmitResult
	h.mustCall("POST", "/api/emulator/events", token, in, 200, &res)
	return res
}

func (h *testHub) activity(token, id string) hubemu.Activity {
	h.t.Helper()
	var a hubemu.Activity
	h.mustCall("GET", "/api/emulator/webhooks/"+id+"/activity", token, nil, 200, &a)
	return a
}

// receiver is a real webhook receiver (core/webhook) that records what its handler got.
type receiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	payloads []*webhook.Payload
	headers  []http.Header
	failures int  // answer 500 to this many deliveries first
	stall    bool // hold the first delivery until the hub gives up on it
}

func newReceiver(t *testing.T, secret string) *receiver {
	t.Helper()
	rc := &receiver{}
	s := webhook.NewServer(webhook.WithSecret(secret), webhook.WithLogger(slog.New(slog.DiscardHandler)))
	if err := s.Add("hook", func(ctx context.Context, p *webhook.Payload, h http.Header) (any, error) {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if rc.failures > 0 {
			rc.failures--
			return nil, errors.New("not ready yet")
		}
		if rc.stall {
			rc.stall = false
			rc.mu.Unlock()
			<-ctx.Done() // the hub's timeout closes the connection
			rc.mu.Lock()
			return nil, ctx.Err()
		}
		rc.payloads = append(rc.payloads, p)
		rc.headers = append(rc.headers, h.Clone())
		return "got it", nil
	}); err != nil {
		t.Fatal(err)
	}
	rc.srv = httptest.NewServer(s)
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) url() string { return rc.srv.URL + "/webhooks/hook" }

func (rc *receiver) received() []*webhook.Payload {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*webhook.Payload(nil), rc.payloads...)
}
