package hubemu_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/delivery"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// TestBootstrapRepointsAnEarlierRunsWebhook is issue 24's port change: a run of robothub dev made
// its webhook to its receiver's port; the next run's receiver listens on another. Bootstrap points
// the same webhook at the new receiver instead of making a second one, and the delivery that was
// retrying against the old port, where nothing listens, arrives at the new receiver.
func TestBootstrapRepointsAnEarlierRunsWebhook(t *testing.T) {
	h := newTestHub(t, localhub.Config{Delivery: delivery.Policy{Timeout: time.Second, MaxAttempts: 100,
		BaseDelay: 20 * time.Millisecond, MaxDelay: 50 * time.Millisecond, Workers: 2, JobWorkers: 1}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	old := "http://" + ln.Addr().String() + "/webhooks/hook"
	ln.Close() // the earlier run's receiver is gone
	boot := func(url string) *hubemu.BootstrapResult {
		t.Helper()
		res, err := h.emu.Bootstrap(t.Context(), hubemu.BootstrapConfig{User: "alice", WebhookURL: url,
			Replaces: func(u string) bool { return strings.HasSuffix(u, "/webhooks/hook") }})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := boot(old)
	if !first.CreatedWH {
		t.Fatalf("first run: %+v, want the webhook made", first)
	}
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update"})
	wait.For(t, 10*time.Second, "a refused attempt at the old port", func() bool {
		a := h.activity(h.token, first.Webhook.ID)
		return len(a.Deliveries) == 1 && len(a.Deliveries[0].Attempts) > 0
	})

	rc := newReceiver(t, "")
	second := boot(rc.url())
	if second.CreatedWH || second.Webhook.ID != first.Webhook.ID || second.MovedFrom != old || second.Webhook.URL != rc.url() {
		t.Fatalf("second run: %+v (moved from %q), want webhook %s pointed from %s to %s", second.Webhook, second.MovedFrom, first.Webhook.ID, old, rc.url())
	}
	wait.For(t, 10*time.Second, "the pending delivery at the new receiver", func() bool { return len(rc.received()) == 1 })
	list, err := h.emu.Webhooks(t.Context(), first.User.ID)
	if err != nil || len(list) != 1 {
		t.Fatalf("webhooks %v %v, want one", list, err)
	}
	if third := boot(rc.url()); third.CreatedWH || third.MovedFrom != "" || third.Webhook.ID != first.Webhook.ID {
		t.Errorf("a restart on the same port: %+v, want the webhook found as it is", third)
	}

	// A database from before, with one webhook per port an earlier robothub made: one is kept.
	for _, port := range []string{"1", "2"} {
		h.createWebhook(h.token, map[string]any{"url": "http://127.0.0.1:" + port + "/webhooks/hook", "watched": watch("user:alice")})
	}
	if fourth := boot(rc.url()); fourth.Webhook.ID != first.Webhook.ID || fourth.Removed != 2 {
		t.Errorf("with two duplicates: %+v removed %d, want webhook %s kept and 2 removed", fourth.Webhook, fourth.Removed, first.Webhook.ID)
	}
	if list, err := h.emu.Webhooks(t.Context(), first.User.ID); err != nil || len(list) != 1 {
		t.Fatalf("webhooks %v %v, want one", list, err)
	}
}
