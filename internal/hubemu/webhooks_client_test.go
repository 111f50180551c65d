package hubemu_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// The public Python client's update_webhook sends "watched": [] whenever the caller gives no
// watched items (its 0.x line also sends "url", "domains" and "secret" as null). Such an update
// changes only what it names, as `hf webhooks update ID --url URL` promises.
func TestUpdateWithEmptyWatchedKeepsTheList(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	watch := []map[string]string{{"type": "model", "name": "alice/bert"}, {"type": "user", "name": "alice"}}
	wh := h.createWebhook(h.token, map[string]any{"url": "https://x.org/a", "watched": watch, "domains": []string{"repo"}, "secret": "s1"})

	updates := []struct {
		name string
		body map[string]any
		want func(record) bool
	}{
		{"1.x --url", map[string]any{"watched": []any{}, "url": "https://x.org/b"},
			func(r record) bool { return r.URL == "https://x.org/b" && r.Secret == "s1" }},
		{"1.x --secret", map[string]any{"watched": []any{}, "secret": "s2"},
			func(r record) bool { return r.URL == "https://x.org/b" && r.Secret == "s2" }},
		{"1.x --domain", map[string]any{"watched": []any{}, "domains": []string{"discussions"}},
			func(r record) bool { return len(r.Domains) == 1 && r.Domains[0] == "discussion" && r.Secret == "s2" }},
		{"0.x with nulls", map[string]any{"watched": []any{}, "url": "https://x.org/c", "domains": nil, "secret": nil},
			func(r record) bool {
				return r.URL == "https://x.org/c" && r.Secret == "s2" && r.Domains[0] == "discussion"
			}},
	}
	for _, u := range updates {
		var env struct{ Webhook record }
		h.mustCall("POST", "/api/settings/webhooks/"+wh.ID, h.token, u.body, 200, &env)
		got := env.Webhook
		if len(got.Watched) != 2 || got.Watched[0].Name != "alice/bert" || got.Watched[1].Type != "user" || !u.want(got) {
			t.Fatalf("%s: after update %+v", u.name, got)
		}
	}
	// A non-empty list still replaces the stored one.
	var env struct{ Webhook record }
	h.mustCall("POST", "/api/settings/webhooks/"+wh.ID, h.token, map[string]any{"watched": []map[string]string{{"type": "org", "name": "acme"}}}, 200, &env)
	if len(env.Webhook.Watched) != 1 || env.Webhook.Watched[0].Name != "acme" {
		t.Fatalf("watched not replaced: %+v", env.Webhook.Watched)
	}
}

// Webhooks created within one second (IDs start with the second) list in creation order.
func TestWebhooksListInCreationOrder(t *testing.T) {
	second := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h := newTestHub(t, localhub.Config{Now: func() time.Time { return second }})
	var ids []string
	for i := range 12 {
		wh := h.createWebhook(h.token, map[string]any{"url": fmt.Sprintf("https://x.org/%d", i), "watched": []map[string]string{{"type": "user", "name": "alice"}}})
		ids = append(ids, wh.ID)
	}
	var list []record
	h.mustCall("GET", "/api/settings/webhooks", h.token, nil, 200, &list)
	if len(list) != len(ids) {
		t.Fatalf("%d webhooks listed, want %d", len(list), len(ids))
	}
	for i, r := range list {
		if r.ID != ids[i] || r.URL != fmt.Sprintf("https://x.org/%d", i) {
			t.Fatalf("position %d: %s (%s), want %s: the list is not in creation order", i, r.ID, r.URL, ids[i])
		}
	}
	// The Go API agrees with the HTTP list.
	users, _ := h.emu.Users(t.Context())
	hooks, err := h.emu.Webhooks(t.Context(), users[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range hooks {
		if w.ID != ids[i] {
			t.Fatalf("Webhooks()[%d] = %s, want %s", i, w.ID, ids[i])
		}
	}
}
