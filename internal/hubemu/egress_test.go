package hubemu_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// TestDeliveriesNeverReachThisMachineUnlessAllowed is issue 20's first item on the hub's side: a
// hub user's webhook to a loopback address (here by name, as localhost resolves) is refused when
// the connection is made, shows why in the activity, and is not retried; an allowed receiver that
// redirects to another loopback port does not take the delivery there either.
func TestDeliveriesNeverReachThisMachineUnlessAllowed(t *testing.T) {
	refused := newReceiver(t, "")
	allowed := newReceiver(t, "")
	redirect := httptest.NewServer(http.RedirectHandler(refused.url(), http.StatusTemporaryRedirect))
	t.Cleanup(redirect.Close)
	h := newTestHub(t, localhub.Config{AllowDeliveryTo: []string{strings.TrimPrefix(allowed.srv.URL, "http://"), strings.TrimPrefix(redirect.URL, "http://")}})

	byName := strings.Replace(refused.url(), "127.0.0.1", "localhost", 1)
	toDaemon := h.createWebhook(h.token, map[string]any{"url": byName, "watched": watch("user:alice")})
	toReceiver := h.createWebhook(h.token, map[string]any{"url": allowed.url(), "watched": watch("user:alice")})
	toRedirect := h.createWebhook(h.token, map[string]any{"url": redirect.URL + "/webhooks/hook", "watched": watch("user:alice")})
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update"})

	wait.For(t, 10*time.Second, "the allowed receiver's delivery", func() bool { return len(allowed.received()) == 1 })
	var a hubemu.Activity
	wait.For(t, 10*time.Second, "the refused delivery to fail", func() bool {
		a = h.activity(h.token, toDaemon.ID)
		return len(a.Deliveries) == 1 && a.Deliveries[0].State == hubemu.StateFailed
	})
	d := a.Deliveries[0]
	if len(d.Attempts) != 1 || !strings.Contains(d.LastError, "refused: ") || !strings.Contains(d.LastError, "is a loopback address") ||
		!strings.Contains(d.LastError, "--allow-delivery-to") {
		t.Errorf("refused delivery: %d attempts, error %q; want one attempt that says why and how to allow it", len(d.Attempts), d.LastError)
	}
	wait.For(t, 10*time.Second, "the redirect to be answered", func() bool {
		a := h.activity(h.token, toRedirect.ID)
		return len(a.Deliveries) == 1 && len(a.Deliveries[0].Attempts) > 0
	})
	if got := refused.received(); len(got) != 0 {
		t.Errorf("the refused receiver got %d deliveries (by name or by redirect)", len(got))
	}
	if a := h.activity(h.token, toReceiver.ID); a.Deliveries[0].State != hubemu.StateDelivered {
		t.Errorf("the allowed receiver's delivery is %s", a.Deliveries[0].State)
	}
}
