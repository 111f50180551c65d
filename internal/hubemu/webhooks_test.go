package hubemu_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

func TestWebhookLifecycle(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	created := h.createWebhook(h.token, map[string]any{
		"url":     "https://example.com/hook",
		"watched": []map[string]string{{"type": "model", "name": "alice/bert"}, {"type": "org", "name": "acme"}},
		"domains": []string{"discussions"},
		"secret":  "s3cret",
	})
	if len(created.ID) != 24 || created.URL != "https://example.com/hook" || created.Disabled || created.Secret != "s3cret" {
		t.Fatalf("created %+v", created)
	}
	if strings.Join(created.Domains, ",") != "discussion" {
		t.Errorf("domains %v: \"discussions\" is the same as \"discussion\"", created.Domains)
	}

	var list []record
	h.mustCall("GET", "/api/settings/webhooks", h.token, nil, 200, &list)
	if len(list) != 1 || list[0].ID != created.ID {
		t.Fatalf("list %+v", list)
	}

	// Update changes only what is given.
	var env struct{ Webhook record }
	h.mustCall("POST", "/api/settings/webhooks/"+created.ID, h.token, map[string]any{"url": "https://example.org/new"}, 200, &env)
	if got := env.Webhook; got.URL != "https://example.org/new" || len(got.Watched) != 2 || got.Secret != "s3cret" || got.Domains[0] != "discussion" {
		t.Fatalf("after update %+v", got)
	}

	h.mustCall("POST", "/api/settings/webhooks/"+created.ID+"/disable", h.token, nil, 200, &env)
	if !env.Webhook.Disabled {
		t.Fatal("disable left it enabled")
	}
	h.mustCall("GET", "/api/settings/webhooks/"+created.ID, h.token, nil, 200, &env)
	if !env.Webhook.Disabled {
		t.Fatal("disabled state not stored")
	}
	h.mustCall("POST", "/api/settings/webhooks/"+created.ID+"/enable", h.token, nil, 200, &env)
	if env.Webhook.Disabled {
		t.Fatal("enable left it disabled")
	}
	h.mustCall("DELETE", "/api/settings/webhooks/"+created.ID, h.token, nil, 204, nil)
	h.mustCall("GET", "/api/settings/webhooks/"+created.ID, h.token, nil, 404, nil)
	h.mustCall("GET", "/api/settings/webhooks", h.token, nil, 200, &list)
	if len(list) != 0 {
		t.Fatalf("list after delete %+v", list)
	}
}

func TestUsersSeeOnlyTheirOwnWebhooks(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	bob, _, err := h.emu.CreateToken(context.Background(), "bob", hubemu.RoleWrite, "")
	if err != nil {
		t.Fatal(err)
	}
	mine := h.createWebhook(h.token, map[string]any{"url": "https://example.com/a", "watched": []map[string]string{{"type": "user", "name": "alice"}}})
	var list []record
	h.mustCall("GET", "/api/settings/webhooks", bob, nil, 200, &list)
	if len(list) != 0 {
		t.Fatalf("bob sees %+v", list)
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/settings/webhooks/" + mine.ID},
		{"POST", "/api/settings/webhooks/" + mine.ID + "/disable"},
		{"DELETE", "/api/settings/webhooks/" + mine.ID},
		{"GET", "/api/emulator/webhooks/" + mine.ID + "/activity"},
	} {
		status, body, _ := h.call(c.method, c.path, bob, nil)
		if status != 404 || !strings.Contains(string(body), "webhook "+mine.ID+" not found") {
			t.Errorf("bob %s %s: %d %s, want 404", c.method, c.path, status, body)
		}
	}
	// Bob's attempts changed nothing.
	var env struct{ Webhook record }
	h.mustCall("GET", "/api/settings/webhooks/"+mine.ID, h.token, nil, 200, &env)
	if env.Webhook.Disabled {
		t.Fatal("bob disabled alice's webhook")
	}
}

func TestAuthErrors(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	reader, _, err := h.emu.CreateToken(context.Background(), "alice", hubemu.RoleRead, "ro")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, method, path, token string
		body                      any
		status                    int
		msg                       string
	}{
		{"no token", "GET", "/api/settings/webhooks", "", nil, 401, "Authorization header is missing"},
		{"unknown token", "GET", "/api/settings/webhooks", "hf_nope", nil, 401, "Invalid credentials in Authorization header"},
		{"read token may list", "GET", "/api/settings/webhooks", reader, nil, 200, "[]"},
		{"read token may not create", "POST", "/api/settings/webhooks", reader,
			map[string]any{"url": "https://x.org", "watched": []map[string]string{{"type": "user", "name": "a"}}}, 403, "read role"},
		{"unknown route", "GET", "/api/nothing", h.token, nil, 404, "no such route"},
		{"wrong method", "PUT", "/api/settings/webhooks", h.token, nil, 405, "not allowed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body, hdr := h.call(c.method, c.path, c.token, c.body)
			if status != c.status || !strings.Contains(string(body), c.msg) {
				t.Fatalf("%d %s, want %d with %q", status, body, c.status, c.msg)
			}
			if status >= 400 {
				var e struct{ Error string }
				if json.Unmarshal(body, &e) != nil || e.Error == "" {
					t.Errorf("error body is not {\"error\": ...}: %s", body)
				}
				if hdr.Get("X-Request-Id") == "" {
					t.Error("no X-Request-Id")
				}
			}
			if c.token != "" && strings.Contains(string(body), c.token) {
				t.Error("the token is in the answer")
			}
		})
	}
}

func TestInvalidWebhooksAreRefused(t *testing.T) {
	h := newTestHub(t, localhub.Config{AllowJobs: true})
	watch := []map[string]string{{"type": "user", "name": "alice"}}
	cases := []struct {
		name string
		body any
		msg  string
	}{
		{"not json", "{", "not valid JSON"},
		{"empty body", "", "body is empty"},
		{"unknown field", map[string]any{"url": "https://x.org", "watched": watch, "colour": "red"}, `unknown field "colour"`},
		{"wrong type", map[string]any{"url": 12, "watched": watch}, "url: must be a string"},
		{"no target", map[string]any{"watched": watch}, "url or jobSourceId is required"},
		{"both targets", map[string]any{"url": "https://x.org", "jobSourceId": "abc", "watched": watch}, "not both"},
		{"relative url", map[string]any{"url": "/hook", "watched": watch}, "not an absolute http(s) URL"},
		{"ftp url", map[string]any{"url": "ftp://x.org/", "watched": watch}, "not an absolute http(s) URL"},
		{"no watched", map[string]any{"url": "https://x.org"}, "watched: at least one item"},
		{"empty watched", map[string]any{"url": "https://x.org", "watched": []any{}}, "watched: at least one item"},
		{"bad type", map[string]any{"url": "https://x.org", "watched": []map[string]string{{"type": "team", "name": "a"}}}, `watched[0].type: unknown watched type "team"`},
		{"user with slash", map[string]any{"url": "https://x.org", "watched": []map[string]string{{"type": "user", "name": "a/b"}}}, "watched[0].name"},
		{"bad domain", map[string]any{"url": "https://x.org", "watched": watch, "domains": []string{"code"}}, `domains[0]: unknown domain "code"`},
		// Where the local hub and the client disagreed, the client's rule (core/hub) now holds for both.
		{"bucket without owner", map[string]any{"url": "https://x.org", "watched": []map[string]string{{"type": "bucket", "name": "foo"}}}, `watched[0].name: a bucket is named owner/name, not "foo"`},
		{"repo name with a leading slash", map[string]any{"url": "https://x.org", "watched": []map[string]string{{"type": "model", "name": "/bert"}}}, `watched[0].name: "/bert" is not a repo name`},
		{"repo name with a trailing slash", map[string]any{"url": "https://x.org", "watched": []map[string]string{{"type": "model", "name": "alice/"}}}, `watched[0].name: "alice/" is not a repo name`},
		{"secrets without job", map[string]any{"url": "https://x.org", "watched": watch, "secrets": map[string]string{"A": "b"}}, "only a job webhook"},
		{"unknown job", map[string]any{"jobSourceId": "0123456789abcdef01234567", "watched": watch}, "you have no job"},
		{"non-ascii secret", map[string]any{"url": "https://x.org", "watched": watch, "secret": "naïve"}, "printable ASCII"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body, hdr := h.call("POST", "/api/settings/webhooks", h.token, c.body)
			var e struct{ Error string }
			_ = json.Unmarshal(body, &e)
			if status != 400 || !strings.Contains(e.Error, c.msg) {
				t.Fatalf("%d %s, want 400 with %q", status, body, c.msg)
			}
			if hdr.Get("X-Error-Message") == "" {
				t.Error("no X-Error-Message header")
			}
		})
	}
	var list []record
	h.mustCall("GET", "/api/settings/webhooks", h.token, nil, 200, &list)
	if len(list) != 0 {
		t.Fatalf("a refused create stored %+v", list)
	}

	// A refused update leaves the webhook as it was.
	wh := h.createWebhook(h.token, map[string]any{"url": "https://x.org/a", "watched": watch})
	for _, body := range []map[string]any{
		{"url": "nope"},
		{"domains": []string{}},
		{"secrets": map[string]string{"A": "b"}},
		{"url": "https://x.org/b", "jobSourceId": "abc"},
	} {
		status, resp, _ := h.call("POST", "/api/settings/webhooks/"+wh.ID, h.token, body)
		if status != 400 {
			t.Errorf("update %v: %d %s, want 400", body, status, resp)
		}
	}
	var env struct{ Webhook record }
	h.mustCall("GET", "/api/settings/webhooks/"+wh.ID, h.token, nil, 200, &env)
	if env.Webhook.URL != "https://x.org/a" || len(env.Webhook.Watched) != 1 || len(env.Webhook.Domains) != 2 {
		t.Fatalf("refused updates changed the webhook: %+v", env.Webhook)
	}
}

func TestJobWebhookSecrets(t *testing.T) {
	h := newTestHub(t, localhub.Config{AllowJobs: true})
	var job struct {
		ID      string
		Secrets []string
	}
	h.mustCall("POST", "/api/emulator/jobs", h.token, map[string]any{
		"command": []string{"true"}, "secrets": map[string]string{"JOB_OWN": "job-only"},
	}, 200, &job)
	if len(job.Secrets) != 1 || job.Secrets[0] != "JOB_OWN" {
		t.Fatalf("job %+v", job)
	}
	wh := h.createWebhook(h.token, map[string]any{
		"jobSourceId": job.ID, "watched": []map[string]string{{"type": "user", "name": "alice"}},
		"secrets": map[string]string{"A": "1", "B": "2"},
	})
	if wh.URL != "" || wh.Job == nil || wh.Job.ID != job.ID || strings.Join(wh.Job.Secrets, ",") != "A,B" {
		t.Fatalf("job webhook %+v (job %+v)", wh, wh.Job)
	}
	// Rule 3: listed secrets replace, an empty value removes, the others are kept.
	var env struct{ Webhook record }
	h.mustCall("POST", "/api/settings/webhooks/"+wh.ID, h.token, map[string]any{
		"jobSourceId": job.ID, "secrets": map[string]string{"A": "", "C": "3"},
	}, 200, &env)
	if got := strings.Join(env.Webhook.Job.Secrets, ","); got != "B,C" {
		t.Fatalf("secrets after update: %s, want B,C", got)
	}
	// Rule 2: the source job's own secrets are not the webhook's.
	for _, s := range env.Webhook.Job.Secrets {
		if s == "JOB_OWN" {
			t.Fatal("the source job's secret was copied to the webhook")
		}
	}
	// Secret values never appear in the record.
	_, body, _ := h.call("GET", "/api/settings/webhooks/"+wh.ID, h.token, nil)
	if strings.Contains(string(body), `"3"`) || strings.Contains(string(body), "job-only") {
		t.Fatalf("a secret value is in the record: %s", body)
	}
}

func TestWhoami(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	reader, _, err := h.emu.CreateToken(context.Background(), "alice", hubemu.RoleRead, "ci")
	if err != nil {
		t.Fatal(err)
	}
	var who struct {
		Type, Name string
		Auth       struct {
			AccessToken struct{ DisplayName, Role string }
		}
	}
	h.mustCall("GET", "/api/whoami-v2", reader, nil, 200, &who)
	if who.Type != "user" || who.Name != "alice" || who.Auth.AccessToken.Role != "read" || who.Auth.AccessToken.DisplayName != "ci" {
		t.Fatalf("whoami %+v", who)
	}
}

// TestWebhookDomainsAsTheClientSpellsThem: the client trims and lowercases domains, so the local hub
// accepts what the client sends (it refused "Repo" before the two shared one validation).
func TestWebhookDomainsAsTheClientSpellsThem(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	created := h.createWebhook(h.token, map[string]any{
		"url": "https://x.org/hook", "watched": []map[string]string{{"type": "model", "name": "alice/bert"}},
		"domains": []string{"Repo", " discussions "}})
	if got := strings.Join(created.Domains, ","); got != "repo,discussion" {
		t.Fatalf("domains %s, want repo,discussion", got)
	}
}
