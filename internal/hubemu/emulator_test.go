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
)

// loopback lets deliveries reach the tests' receivers, which listen on loopback: a hub refuses
// such targets unless told (delivery/egress.go).
var loopback = []string{"127.0.0.0/8", "::1/128"}

// fastDelivery keeps retries quick in tests.
var fastDelivery = delivery.Policy{Timeout: 2 * time.Second, MaxAttempts: 5, BaseDelay: 20 * time.Millisecond, MaxDelay: 100 * time.Millisecond, Workers: 4, JobWorkers: 2}

type testHub struct {
	t     *testing.T
	emu   *localhub.Emulator
	srv   *httptest.Server
	token string // a write token of user alice
	stop  func() // stops Run and waits for it
}

// newTestHub opens an emulator on cfg (in memory unless cfg.DSN is set), serves it, starts Run,
// and makes user alice with a write token.
func newTestHub(t *testing.T, cfg localhub.Config) *testHub {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.AllowDeliveryTo == nil {
		cfg.AllowDeliveryTo = loopback
	}
	if cfg.Delivery == (delivery.Policy{}) {
		cfg.Delivery = fastDelivery
	}
	emu, err := localhub.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &testHub{t: t, emu: emu, srv: httptest.NewServer(emu.Handler())}
	h.start()
	h.token, _, err = emu.CreateToken(context.Background(), "alice", hubemu.RoleWrite, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.stop()
		h.srv.Close()
		emu.Close()
	})
	return h
}

func (h *testHub) start() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.emu.Run(ctx) }()
	var once sync.Once
	h.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				h.t.Errorf("Run: %v", err)
			}
		})
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
	req, _ := http.NewRequest(method, h.srv.URL+path, r)
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

// waitFor polls cond until it holds or 10 seconds pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
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
