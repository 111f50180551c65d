package hubtest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
	"github.com/robothub/robothub/internal/testkit/hubtest"
)

// A test's hub answers its users' clients over HTTP, through the handler a test wraps around it,
// and runs its deliveries until it is stopped.
func TestHubServesItsUsers(t *testing.T) {
	var seen atomic.Int32
	h := hubtest.Start(t, localhub.Config{}, hubtest.WithPublicURL(), hubtest.WithHandler(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen.Add(1); next.ServeHTTP(w, r) })
	}))
	if !strings.HasPrefix(h.URL, "http://127.0.0.1:") {
		t.Fatalf("served at %s, want loopback", h.URL)
	}
	ctx := context.Background()
	alice := h.Client(t, "alice", hubemu.RoleWrite)
	if _, err := alice.Create(ctx, hub.CreateRequest{URL: "https://example.com/hook", Watched: []hub.WatchedItem{{Type: "user", Name: "alice"}}}); err != nil {
		t.Fatal(err)
	}
	list, err := alice.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("alice's webhooks: %+v (%v)", list, err)
	}
	if list, err := h.Client(t, "bob", hubemu.RoleRead).List(ctx); err != nil || len(list) != 0 {
		t.Errorf("bob sees %+v (%v), want none of alice's", list, err)
	}
	if seen.Load() < 3 {
		t.Errorf("the wrapping handler saw %d requests", seen.Load())
	}
	env := h.Env(t)
	req := httptest.NewRequest("GET", "/api/settings/webhooks", nil)
	req.Header.Set("Authorization", "Bearer "+env["HF_TOKEN"])
	rec := httptest.NewRecorder()
	h.Handler().ServeHTTP(rec, req)
	if env["HF_ENDPOINT"] != h.URL || rec.Code != 200 {
		t.Errorf("Env %v: the token answers %d", env, rec.Code)
	}
	h.Run()
	if err := h.Stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
	h.Run() // again, and Close (the test's end) stops it
}
