package hubemu_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

func watch(items ...string) []map[string]string {
	var out []map[string]string
	for _, it := range items {
		typ, name, _ := strings.Cut(it, ":")
		out = append(out, map[string]string{"type": typ, "name": name})
	}
	return out
}

func TestEmitDeliversToWatchingWebhooks(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	rc := newReceiver(t, "right-secret")
	byRepo := h.createWebhook(h.token, map[string]any{"url": rc.url(), "watched": watch("model:alice/bert"), "secret": "right-secret"})
	byOwner := h.createWebhook(h.token, map[string]any{"url": rc.url(), "watched": watch("user:alice"), "secret": "right-secret"})
	other := h.createWebhook(h.token, map[string]any{"url": rc.url(), "watched": watch("model:alice/gpt"), "secret": "right-secret"})
	discOnly := h.createWebhook(h.token, map[string]any{"url": rc.url(), "watched": watch("user:alice"), "domains": []string{"discussion"}, "secret": "right-secret"})
	disabled := h.createWebhook(h.token, map[string]any{"url": rc.url(), "watched": watch("user:alice"), "secret": "right-secret"})
	h.mustCall("POST", "/api/settings/webhooks/"+disabled.ID+"/disable", h.token, nil, 200, nil)

	res := h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update"})
	targets := map[string]bool{}
	for _, d := range res.Deliveries {
		targets[d.WebhookID] = true
	}
	if len(targets) != 2 || !targets[byRepo.ID] || !targets[byOwner.ID] {
		t.Fatalf("deliveries to %v; want exactly %s (repo) and %s (owner); not %s (other repo), %s (discussion only), %s (disabled)",
			targets, byRepo.ID, byOwner.ID, other.ID, discOnly.ID, disabled.ID)
	}
	wait.For(t, 10*time.Second, "two deliveries", func() bool { return len(rc.received()) == 2 })
	got := map[string]bool{}
	for _, p := range rc.received() {
		got[p.Webhook.ID] = true
		if p.Event.Scope != "repo.content" || p.Event.Action != "update" || p.Repo.Type != "model" || p.Repo.Name != "alice/bert" {
			t.Errorf("payload %+v", p)
		}
		if p.Webhook.Version != 3 || p.Repo.HeadSha == "" || len(p.UpdatedRefs) != 1 || p.UpdatedRefs[0].Ref != "refs/heads/main" {
			t.Errorf("payload lacks v3 fields: %s", p.Raw)
		}
		if p.Repo.URL.Web != hubemu.DefaultPublicURL+"/alice/bert" || p.Repo.URL.API != hubemu.DefaultPublicURL+"/api/models/alice/bert" {
			t.Errorf("repo URLs %+v", p.Repo.URL)
		}
	}
	if !got[byRepo.ID] || !got[byOwner.ID] {
		t.Fatalf("receiver got payloads for %v", got)
	}
	// Nothing more may arrive: the hub sends only the deliveries the emit recorded (two), and once
	// both are recorded as delivered, neither is sent again.
	for _, id := range []string{byRepo.ID, byOwner.ID} {
		wait.For(t, 10*time.Second, "delivery to "+id+" recorded", func() bool {
			a := h.activity(h.token, id)
			return len(a.Deliveries) == 1 && a.Deliveries[0].State == "delivered"
		})
	}
	if n := len(rc.received()); n != 2 {
		t.Fatalf("receiver got %d payloads, want 2", n)
	}
	a := h.activity(h.token, disabled.ID)
	if len(a.Deliveries) != 0 {
		t.Fatalf("a disabled webhook has deliveries: %+v", a.Deliveries)
	}
}

func TestPayloadsOfEveryScopeParse(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	f := false
	cases := []hubemu.EmitInput{
		{Repo: "space:alice/app", Scope: "repo", Action: "create"},
		{Repo: "space:alice/app", Scope: "repo.content", Action: "update"},
		{Repo: "space:alice/app", Scope: "repo.config", Action: "update", Private: &f},
		{Repo: "space:alice/app", Scope: "discussion", Action: "create", Discussion: &hubemu.DiscussionInput{Title: "Fix", IsPullRequest: true}, Comment: &hubemu.CommentInput{Content: "please"}},
		{Repo: "space:alice/app", Scope: "discussion.comment", Action: "create", Comment: &hubemu.CommentInput{Content: "thanks"}},
		{Repo: "space:alice/app", Scope: "discussion", Action: "update", Discussion: &hubemu.DiscussionInput{IsPullRequest: true, Status: "merged"}},
		{Repo: "space:alice/app", Scope: "repo.config.dois", Action: "update"},
		{Repo: "space:alice/app", Scope: "repo", Action: "move", MovedTo: "alice/app2"},
		{Repo: "dataset:alice/data", Scope: "repo", Action: "delete"},
	}
	var prevHead string
	for _, in := range cases {
		res := h.emit(h.token, in)
		raw, _ := json.Marshal(res.Payload)
		p, err := webhook.Parse(withRef(raw))
		if err != nil {
			t.Fatalf("%s %s: payload does not parse: %v\n%s", in.Scope, in.Action, err, raw)
		}
		switch in.Scope {
		case "repo.content":
			if p.UpdatedRefs[0].OldSha == nil || *p.UpdatedRefs[0].OldSha != prevHead || *p.UpdatedRefs[0].NewSha != p.Repo.HeadSha {
				t.Errorf("push refs %s: old should be the head after create (%s)", raw, prevHead)
			}
		case "repo.config":
			if string(p.UpdatedConfig) != `{"private":false}` {
				t.Errorf("updatedConfig %s", p.UpdatedConfig)
			}
		case "discussion":
			if p.Discussion == nil || p.Discussion.Num != 1 || !p.Discussion.IsPullRequest || p.Repo.HeadSha != "" {
				t.Errorf("discussion payload %s", raw)
			}
			if in.Action == "create" && (p.Comment == nil || p.Comment.Content != "please" || p.Discussion.Title != "Fix") {
				t.Errorf("a new discussion carries its first comment: %s", raw)
			}
			if in.Action == "update" && (p.Discussion.Status != "merged" || p.Discussion.Changes.MergeCommitID == "") {
				t.Errorf("merged PR: %s", raw)
			}
		case "discussion.comment":
			if p.Comment == nil || p.Comment.Content != "thanks" || p.Discussion.Num != 1 {
				t.Errorf("comment payload %s", raw)
			}
		}
		if in.Action == "move" && (p.MovedTo == nil || p.MovedTo.Name != "alice/app2") {
			t.Errorf("move payload %s", raw)
		}
		if p.Repo.Subdomain == "" && p.Repo.Type == "space" {
			t.Errorf("space without subdomain: %s", raw)
		}
		prevHead = p.Repo.HeadSha
	}
}

// withRef adds the webhook reference the way a delivery does, so that Parse sees a whole payload.
func withRef(raw []byte) []byte {
	return append(raw[:len(raw)-1], []byte(`,"webhook":{"id":"0123456789abcdef01234567","version":3}}`)...)
}

func TestEmitRefusesBadEvents(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	for _, c := range []struct {
		in  hubemu.EmitInput
		msg string
	}{
		{hubemu.EmitInput{Repo: "alice/bert", Scope: "repo", Action: "update"}, "not type:owner/name"},
		{hubemu.EmitInput{Repo: "car:alice/bert", Scope: "repo", Action: "update"}, "not type:owner/name"},
		{hubemu.EmitInput{Repo: "model:bert", Scope: "repo", Action: "update"}, "not owner/name"},
		{hubemu.EmitInput{Repo: "model:alice/bert", Scope: "code", Action: "update"}, `scope: "code"`},
		{hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "create"}, `action: "create" is not an action of scope repo.content`},
		{hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo", Action: "move"}, "movedTo"},
		{hubemu.EmitInput{Repo: "model:alice/new", Scope: "discussion.comment", Action: "create"}, "has no discussion #1"},
	} {
		status, body, _ := h.call("POST", "/api/emulator/events", h.token, c.in)
		var e struct{ Error string }
		_ = json.Unmarshal(body, &e)
		if status != 400 || !strings.Contains(e.Error, c.msg) {
			t.Errorf("%+v: %d %s, want 400 with %q", c.in, status, body, c.msg)
		}
	}
}

func TestReceiverThatFailsFirstGetsTheEventOnceItRecovers(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	rc := newReceiver(t, "")
	rc.failures = 3
	wh := h.createWebhook(h.token, map[string]any{"url": rc.url(), "watched": watch("user:alice")})
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update"})
	wait.For(t, 10*time.Second, "the delivery after three failures", func() bool { return len(rc.received()) == 1 })
	var a hubemu.Activity
	wait.For(t, 10*time.Second, "the activity to record the success", func() bool {
		a = h.activity(h.token, wh.ID)
		return len(a.Deliveries) == 1 && a.Deliveries[0].State == hubemu.StateDelivered
	})
	d := a.Deliveries[0]
	if d.AttemptCount != 4 || len(d.Attempts) != 4 {
		t.Fatalf("attempts %d (%d listed), want 4: %+v", d.AttemptCount, len(d.Attempts), d.Attempts)
	}
	for i, at := range d.Attempts[:3] {
		if at.Status != 500 || !strings.Contains(at.Error, "500") || !strings.Contains(at.Response, "not ready yet") {
			t.Errorf("attempt %d: %+v", i, at)
		}
	}
	if last := d.Attempts[3]; last.Status != 200 || last.Error != "" || last.LatencyMS <= 0 || last.At.IsZero() {
		t.Errorf("last attempt %+v", last)
	}
	if a.Triggers24h != 1 || a.TriggerLimit != hubemu.DefaultTriggerLimit {
		t.Errorf("triggers %d of %d", a.Triggers24h, a.TriggerLimit)
	}
}

func TestDeliveryGivesUpAfterMaxAttempts(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	var hits atomic.Int32
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer dead.Close()
	wh := h.createWebhook(h.token, map[string]any{"url": dead.URL, "watched": watch("user:alice")})
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update"})
	wait.For(t, 10*time.Second, "the delivery to fail", func() bool {
		a := h.activity(h.token, wh.ID)
		return len(a.Deliveries) == 1 && a.Deliveries[0].State == hubemu.StateFailed
	})
	if n := hits.Load(); n != int32(fastDelivery.MaxAttempts) {
		t.Fatalf("%d attempts, want %d", n, fastDelivery.MaxAttempts)
	}
}

func TestSlowReceiverTimesOutAndIsRetried(t *testing.T) {
	cfg := localhub.Config{Delivery: fastDelivery}
	cfg.Delivery.Timeout = 100 * time.Millisecond
	h := newTestHub(t, cfg)
	rc := newReceiver(t, "")
	rc.stall = true // the first delivery only
	wh := h.createWebhook(h.token, map[string]any{"url": rc.url(), "watched": watch("user:alice")})
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update"})
	var a hubemu.Activity
	wait.For(t, 10*time.Second, "delivery after a timeout", func() bool {
		a = h.activity(h.token, wh.ID)
		return len(a.Deliveries) == 1 && a.Deliveries[0].State == hubemu.StateDelivered
	})
	if first := a.Deliveries[0].Attempts[0]; first.Status != 0 || !strings.Contains(first.Error, "timeout") {
		t.Fatalf("first attempt %+v, want a timeout", first)
	}
}

func TestDisablingSkipsPendingDeliveries(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	h.stop() // deliveries stay pending
	rc := newReceiver(t, "")
	wh := h.createWebhook(h.token, map[string]any{"url": rc.url(), "watched": watch("user:alice")})
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update"})
	h.mustCall("POST", "/api/settings/webhooks/"+wh.ID+"/disable", h.token, nil, 200, nil)
	h.start()
	wait.For(t, 10*time.Second, "the delivery to be skipped", func() bool {
		a := h.activity(h.token, wh.ID)
		return a.Deliveries[0].State == hubemu.StateSkipped
	})
	if n := len(rc.received()); n != 0 {
		t.Fatalf("a disabled webhook received %d payloads", n)
	}
}

func TestRestartLosesNoPendingDelivery(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "hub.db")
	rc := newReceiver(t, "s")
	var down atomic.Bool
	down.Store(true)
	gate := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "restarting", http.StatusServiceUnavailable)
			return
		}
		rc.srv.Config.Handler.ServeHTTP(w, r)
	})
	front := httptest.NewServer(gate)
	defer front.Close()

	ctx := context.Background()
	cfg := localhub.Config{DSN: dsn, Logger: slog.New(slog.DiscardHandler), Delivery: fastDelivery, AllowDeliveryTo: loopback}
	cfg.Delivery.BaseDelay, cfg.Delivery.MaxDelay = 50*time.Millisecond, 50*time.Millisecond
	cfg.Delivery.MaxAttempts = 1000
	emu, err := localhub.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	token, user, err := emu.CreateToken(ctx, "alice", hubemu.RoleWrite, "")
	if err != nil {
		t.Fatal(err)
	}
	url, secret := front.URL+"/webhooks/hook", "s"
	items := []hub.WatchedItem{{Type: "user", Name: "alice"}}
	wh, err := emu.CreateWebhook(ctx, user.ID, hubemu.WebhookInput{URL: &url, Watched: &items, Secret: &secret})
	if err != nil {
		t.Fatal(err)
	}
	p, err := emu.Authenticate(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- emu.Run(runCtx) }()
	for i := range 5 {
		if _, err := emu.Emit(ctx, p, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update", HeadSha: strings.Repeat(string(rune('a'+i)), 40)}); err != nil {
			t.Fatal(err)
		}
	}
	wait.For(t, 10*time.Second, "failed attempts", func() bool {
		a, _ := emu.Activity(ctx, user.ID, wh.ID, 0)
		return a.Deliveries[0].AttemptCount >= 2
	})
	stop()
	<-done
	if err := emu.Close(); err != nil {
		t.Fatal(err)
	}

	// The receiver comes back; a new emulator process opens the same file.
	down.Store(false)
	emu2, err := localhub.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer emu2.Close()
	runCtx2, stop2 := context.WithCancel(ctx)
	done2 := make(chan error)
	go func() { done2 <- emu2.Run(runCtx2) }()
	defer func() { stop2(); <-done2 }()
	wait.For(t, 10*time.Second, "all five events after the restart", func() bool { return len(rc.received()) >= 5 })
	heads := map[string]bool{}
	for _, p := range rc.received() {
		heads[p.Repo.HeadSha] = true
	}
	if len(heads) != 5 {
		t.Fatalf("got %d distinct events, want 5", len(heads))
	}
	if _, err := emu2.Authenticate(ctx, token); err != nil {
		t.Fatalf("the token did not survive the restart: %v", err)
	}
}

func TestTriggerLimit(t *testing.T) {
	h := newTestHub(t, localhub.Config{TriggerLimit: 3})
	rc := newReceiver(t, "")
	wh := h.createWebhook(h.token, map[string]any{"url": rc.url(), "watched": watch("user:alice")})
	var states []string
	for range 5 {
		res := h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update"})
		states = append(states, res.Deliveries[0].State)
	}
	if got := strings.Join(states, ","); got != "pending,pending,pending,rate_limited,rate_limited" {
		t.Fatalf("states %s", got)
	}
	wait.For(t, 10*time.Second, "three deliveries", func() bool { return len(rc.received()) == 3 })
	a := h.activity(h.token, wh.ID)
	if a.Triggers24h != 3 || a.TriggerLimit != 3 || !strings.Contains(a.Deliveries[0].LastError, "rate limit") {
		t.Fatalf("activity %+v", a)
	}
	// A replay counts as a trigger too.
	status, body, hdr := h.call("POST", "/api/emulator/webhooks/"+wh.ID+"/deliveries/"+a.Deliveries[4].ID+"/replay", h.token, nil)
	if status != 429 || !strings.Contains(string(body), "triggers") {
		t.Fatalf("replay over the limit: %d %s", status, body)
	}
	if ra, err := strconv.Atoi(hdr.Get("Retry-After")); err != nil || ra < 86000 || ra > 86400 {
		t.Fatalf("Retry-After %q, want about 24 hours", hdr.Get("Retry-After"))
	}
	// The refused replay recorded no delivery, so nothing more can be sent: the activity still holds
	// the five deliveries of the emits, three of them delivered.
	wait.For(t, 10*time.Second, "three deliveries recorded as delivered", func() bool {
		a := h.activity(h.token, wh.ID)
		delivered := 0
		for _, d := range a.Deliveries {
			if d.State == "delivered" {
				delivered++
			}
		}
		return len(a.Deliveries) == 5 && delivered == 3
	})
	if n := len(rc.received()); n != 3 {
		t.Fatalf("receiver got %d, want 3", n)
	}
}

func TestReplayGoesToTheCurrentURLAndSecret(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	first := newReceiver(t, "old")
	wh := h.createWebhook(h.token, map[string]any{"url": first.url(), "watched": watch("user:alice"), "secret": "old"})
	h.emit(h.token, hubemu.EmitInput{Repo: "dataset:alice/data", Scope: "repo.content", Action: "update"})
	wait.For(t, 10*time.Second, "the first delivery", func() bool { return len(first.received()) == 1 })

	second := newReceiver(t, "new")
	h.mustCall("POST", "/api/settings/webhooks/"+wh.ID, h.token, map[string]any{"url": second.url(), "secret": "new"}, 200, nil)
	a := h.activity(h.token, wh.ID)
	var ref hubemu.DeliveryRef
	h.mustCall("POST", "/api/emulator/webhooks/"+wh.ID+"/deliveries/"+a.Deliveries[0].ID+"/replay", h.token, nil, 200, &ref)
	wait.For(t, 10*time.Second, "the replay", func() bool { return len(second.received()) == 1 })
	if got, want := second.received()[0].Repo.HeadSha, first.received()[0].Repo.HeadSha; got != want {
		t.Fatalf("replayed a different event: %s, want %s", got, want)
	}
	var d hubemu.Delivery
	h.mustCall("GET", "/api/emulator/webhooks/"+wh.ID+"/deliveries/"+ref.ID, h.token, nil, 200, &d)
	if d.ReplayOf != a.Deliveries[0].ID || len(d.Payload) == 0 {
		t.Fatalf("replay delivery %+v", d)
	}
	if _, err := webhook.Parse(d.Payload); err != nil {
		t.Fatalf("delivery payload: %v", err)
	}

	h.mustCall("POST", "/api/emulator/webhooks/"+wh.ID+"/deliveries/0123456789abcdef01234567/replay", h.token, nil, 404, nil)

	h.mustCall("POST", "/api/settings/webhooks/"+wh.ID+"/disable", h.token, nil, 200, nil)
	status, body, _ := h.call("POST", "/api/emulator/webhooks/"+wh.ID+"/deliveries/"+a.Deliveries[0].ID+"/replay", h.token, nil)
	if status != 409 || !strings.Contains(string(body), "disabled") {
		t.Fatalf("replay on a disabled webhook: %d %s", status, body)
	}
}

func TestSecretInTargetURLIsNotInTheActivity(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	rc := newReceiver(t, "q-secret")
	wh := h.createWebhook(h.token, map[string]any{"url": rc.url() + "?secret=q-secret", "watched": watch("user:alice")})
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update"})
	wait.For(t, 10*time.Second, "the delivery", func() bool { return len(rc.received()) == 1 })
	_, body, _ := h.call("GET", "/api/emulator/webhooks/"+wh.ID+"/activity", h.token, nil)
	if strings.Contains(string(body), "q-secret") {
		t.Fatalf("the secret is in the activity: %s", body)
	}
}
