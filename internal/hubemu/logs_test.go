package hubemu_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
	"github.com/robothub/robothub/internal/testkit/syncbuf"
)

// TestLogsHoldNoTokensOrSecrets drives every kind of request and delivery, failures included, with
// debug logging on, and looks for tokens and secrets in the log.
func TestLogsHoldNoTokensOrSecrets(t *testing.T) {
	var logs syncbuf.Buffer
	h := newTestHub(t, localhub.Config{AllowJobs: true, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	rc := newReceiver(t, "the-right-secret")
	rc.failures = 2
	h.call("GET", "/api/settings/webhooks", "hf_wrong_token_value", nil)
	wh := h.createWebhook(h.token, map[string]any{"url": rc.url(), "watched": watch("user:alice"), "secret": "the-right-secret"})
	bad := h.createWebhook(h.token, map[string]any{"url": rc.url() + "?secret=query-secret-value", "watched": watch("user:alice"), "secret": "wrong-secret-value"})
	var job struct{ ID string }
	h.mustCall("POST", "/api/emulator/jobs", h.token, map[string]any{"command": []string{"false"}, "secrets": map[string]string{"J": "job-secret-value"}}, 200, &job)
	h.createWebhook(h.token, map[string]any{"jobSourceId": job.ID, "watched": watch("user:alice"), "secrets": map[string]string{"W": "webhook-secret-value"}})
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update"})
	wait.For(t, 10*time.Second, "the delivery", func() bool { return len(rc.received()) == 1 })
	wait.For(t, 10*time.Second, "the failing deliveries", func() bool {
		a := h.activity(h.token, bad.ID)
		return len(a.Deliveries) == 1 && a.Deliveries[0].AttemptCount >= 2
	})
	h.mustCall("DELETE", "/api/settings/webhooks/"+wh.ID, h.token, nil, 204, nil)
	h.stop()

	out := logs.String()
	if !strings.Contains(out, "delivery attempt") || !strings.Contains(out, "request") {
		t.Fatalf("the log is missing the expected records:\n%s", out)
	}
	for _, secret := range []string{h.token, "hf_wrong_token_value", "the-right-secret", "query-secret-value", "wrong-secret-value", "job-secret-value", "webhook-secret-value"} {
		if strings.Contains(out, secret) {
			t.Errorf("%q is in the log", secret)
		}
	}
}
