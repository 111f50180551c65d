// Package hubtest is a test kit: a local hub (internal/hubemu's emulator) served on loopback, in
// memory unless told otherwise, with its users and their tokens.
package hubtest

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// Hub is a local hub served on loopback; its Emulator's services (CreateToken, CreateWebhook, ...)
// are at hand.
type Hub struct {
	*localhub.Emulator
	URL string // where it is served: http://127.0.0.1:PORT

	srv    *httptest.Server
	stop   func() error // ends the Run going and waits for it; nil when none is
	closed sync.Once
	err    error // Close's
}

// Option changes how a hub is served.
type Option func(*options)

type options struct {
	wrap      func(http.Handler) http.Handler
	publicURL bool
}

// WithHandler serves wrap(the hub's handler), for a test that watches or changes requests.
func WithHandler(wrap func(http.Handler) http.Handler) Option {
	return func(o *options) { o.wrap = wrap }
}

// WithPublicURL makes the hub's own address its public URL (the URLs it writes into its answers),
// as a hub that serves where its clients reach it.
func WithPublicURL() Option { return func(o *options) { o.publicURL = true } }

// Start serves a local hub on cfg (its logger discards by default) until the test ends. Deliveries
// and jobs wait for Run.
func Start(t testing.TB, cfg localhub.Config, opts ...Option) *Hub {
	t.Helper()
	h, err := Serve(cfg, opts...)
	if err != nil {
		t.Fatalf("opening the local hub: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("closing the local hub: %v", err)
		}
	})
	return h
}

// Serve is Start for a caller that has no testing.TB (a testscript setup): it closes the hub
// with Close.
func Serve(cfg localhub.Config, opts ...Option) (*Hub, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	var served http.Handler // set before the server starts
	h := &Hub{srv: httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.ServeHTTP(w, r)
	}))}
	h.URL = "http://" + h.srv.Listener.Addr().String()
	if o.publicURL {
		cfg.PublicURL = h.URL
	}
	emu, err := localhub.Open(context.Background(), cfg)
	if err != nil {
		h.srv.Close()
		return nil, err
	}
	h.Emulator = emu
	if served = emu.Handler(); o.wrap != nil {
		served = o.wrap(served)
	}
	h.srv.Start()
	return h, nil
}

// Run starts the hub's deliveries and jobs, until Stop or Close. A test may stop and run again.
func (h *Hub) Run() {
	if h.stop != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Emulator.Run(ctx) }()
	h.stop = func() error { cancel(); return <-done }
}

// Stop ends the Run going, if one is, waits for it, and returns its error.
func (h *Hub) Stop() error {
	if h.stop == nil {
		return nil
	}
	err := h.stop()
	h.stop = nil
	return err
}

// Close stops Run, the server and the hub (a test that takes its hub away calls it early; Start's
// cleanup then finds it closed).
func (h *Hub) Close() error {
	h.closed.Do(func() {
		runErr := h.Stop()
		h.srv.Close()
		h.err = errors.Join(runErr, h.Emulator.Close())
	})
	return h.err
}

// Token makes user (created if new) a token of role (hubemu.RoleWrite, RoleRead, ...) and returns
// it with the user.
func (h *Hub) Token(t testing.TB, user, role string) (string, hubemu.User) {
	t.Helper()
	token, u, err := h.CreateToken(context.Background(), user, role, "test")
	if err != nil {
		t.Fatalf("a %s token for %s: %v", role, user, err)
	}
	return token, u
}

// Client is a client of the hub with a new token of user and role.
func (h *Hub) Client(t testing.TB, user, role string, opts ...hub.Option) *hub.Client {
	t.Helper()
	token, _ := h.Token(t, user, role)
	c, err := hub.New(h.URL, append([]hub.Option{hub.WithToken(token)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Env is the environment of a CLI run against the hub as alice, a writer: HF_ENDPOINT, HF_TOKEN.
func (h *Hub) Env(t testing.TB) map[string]string {
	t.Helper()
	token, _ := h.Token(t, "alice", hubemu.RoleWrite)
	return map[string]string{"HF_ENDPOINT": h.URL, "HF_TOKEN": token}
}
