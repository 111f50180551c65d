package hubemu_test

import (
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// TestOthersCannotBurnAWebhooksQuota is issue 20's fifth item: anyone may open discussions on a
// public repo, and each one triggers the owner's webhook. mallory opens 1,005 discussions on
// alice's public repo; the 1,000 deliveries a webhook gets in 24 hours are counted per emitting
// user, so mallory's last five are rate-limited and alice's own push is still delivered.
func TestOthersCannotBurnAWebhooksQuota(t *testing.T) {
	h := newTestHub(t, localhub.Config{TriggerLimit: hubemu.DefaultTriggerLimit})
	rc := newReceiver(t, "")
	wh := h.createWebhook(h.token, map[string]any{"url": rc.url(), "watched": watch("user:alice")})
	mallory, _, err := h.emu.CreateToken(t.Context(), "mallory", hubemu.RoleWrite, "t")
	if err != nil {
		t.Fatal(err)
	}
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo", Action: "create"})

	limited := 0
	for range hubemu.DefaultTriggerLimit + 5 {
		res := h.emit(mallory, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "discussion", Action: "create"})
		if res.Deliveries[0].State == hubemu.StateRateLimited {
			limited++
		}
	}
	if limited != 5 {
		t.Errorf("%d of mallory's deliveries were rate-limited, want 5 (her own 1,000 a day are spent)", limited)
	}
	res := h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update"})
	if got := res.Deliveries[0].State; got != hubemu.StatePending {
		t.Fatalf("alice's own push: delivery %s, want pending (mallory's events must not spend alice's quota)", got)
	}
	wait.For(t, 10*time.Second, "alice's push to be delivered", func() bool {
		for _, p := range rc.received() {
			if p.Event.Scope == "repo.content" {
				return true
			}
		}
		return false
	})
	a := h.activity(h.token, wh.ID)
	if d := a.Deliveries[1]; d.State != hubemu.StateRateLimited || !strings.Contains(d.LastError, "mallory") {
		t.Errorf("mallory's last delivery: %s %q; want rate_limited naming the user whose events spent the triggers", d.State, d.LastError)
	}
}
