package actions

import (
	"context"
	"errors"

	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/mqtt"
	"github.com/robothub/robothub/core/fleet"
	"github.com/robothub/robothub/internal/testkit/mosquittotest"
)

func TestFleetRouteSettings(t *testing.T) {
	for spec, want := range map[string]string{
		"fleet:mqtt://127.0.0.1:1?canary=10&speed=fast": `unknown setting "speed"`,
		"fleet:mqtt://127.0.0.1:1?canary=100":           "canary=100: want a percentage from 0 to 99",
		"fleet:mqtt://127.0.0.1:1?wait=0s":              "wait=0s: want a positive duration",
		"fleet:http://127.0.0.1:1":                      "want mqtt://, mqtts://, ws:// or wss://",
	} {
		b := NewBuilder(Config{FleetDialers: mqtt.FleetDialers(), Logger: slog.New(slog.DiscardHandler)})
		if _, err := b.Handler("f", strings.TrimPrefix(spec, "")); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", spec, err, want)
		}
		b.Close(context.Background())
	}
	b := NewBuilder(Config{FleetDialers: mqtt.FleetDialers(), Ephemeral: true, Logger: slog.New(slog.DiscardHandler)})
	defer b.Close(context.Background())
	if _, err := b.Handler("f", "fleet:mqtt://127.0.0.1:1?canary=10"); err == nil || !strings.Contains(err.Error(), "stays up") {
		t.Errorf("a canary on a Lambda: err = %v", err)
	}
}

// waveApps is a robot's app of local/app: updates to a revision in fail fail.
type waveApps struct {
	mu   sync.Mutex
	rev  string
	fail map[string]bool
	asks []string
}

const waveSource = "http://hub.test/spaces/local/app"

func (w *waveApps) Installed() []fleet.InstalledApp {
	w.mu.Lock()
	defer w.mu.Unlock()
	return []fleet.InstalledApp{{Name: "app", Source: waveSource, Revision: w.rev}}
}
func (w *waveApps) Running() string { return "" }
func (w *waveApps) Update(_ context.Context, _, rev string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.asks = append(w.asks, rev)
	if w.fail[rev] {
		return errors.New("pip: no matching distribution")
	}
	w.rev = rev
	return nil
}
func (w *waveApps) asked() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.asks)
}

// trustingHub has every revision as the head: this test is about waves, not trust.
type trustingHub struct{}

func (trustingHub) Check(context.Context, string, string, string) error { return nil }

// TestFleetCanaryWaves: with canary=50 the robots of the first half of the buckets update first,
// the rest once they all run it; when a canary robot fails, the rollout halts and the rest keep
// what they run. The push comes as soon as the receiver is up, while the broker may still be
// replaying the robots' retained statuses to it: the record must still plan both canary robots
// (core/fleet's TestPublisherJudgesASettledView holds that race still).
func TestFleetCanaryWaves(t *testing.T) {
	broker := mosquittotest.Start(t, mosquittotest.Options{NoTLS: true, Anonymous: true})
	quiet := slog.New(slog.DiscardHandler)
	revA, revB, revC := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)

	var canary, rest []string
	for i := 0; len(canary) < 2 || len(rest) < 2; i++ {
		id := "robot-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		if fleet.Bucket(id) < fleet.Buckets/2 {
			if len(canary) < 2 {
				canary = append(canary, id)
			}
		} else if len(rest) < 2 {
			rest = append(rest, id)
		}
	}
	apps := map[string]*waveApps{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, id := range append(slices.Clone(canary), rest...) {
		apps[id] = &waveApps{rev: revA, fail: map[string]bool{}}
		agent, err := fleet.NewAgent(fleet.AgentConfig{Robot: id, Apps: apps[id], Hub: trustingHub{}, Log: quiet, Resync: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		c, err := mqtt.ConnectAgent(ctx, mqtt.Config{URL: broker.URL, ClientID: id, Logger: quiet}, agent, id, fleet.Topics{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(context.Background())
		go agent.Run(ctx)
	}
	apps[canary[1]].fail[revC] = true

	// What the operator sees.
	var mu sync.Mutex
	statuses, rollouts := map[string]fleet.Status{}, map[string]fleet.Rollout{}
	changed := make(chan struct{}, 1)
	op, err := mqtt.Connect(ctx, mqtt.Config{URL: broker.URL, ClientID: "operator", Logger: quiet, OnMessage: func(topic string, p []byte) {
		mu.Lock()
		if _, kind, ok := (fleet.Topics{}).ParseRobot(topic); ok {
			if s, err := fleet.ParseStatus(p); err == nil && kind == "status" {
				statuses[s.Robot] = s
			}
		} else if r, err := fleet.ParseRollout(p); err == nil {
			rollouts[r.Revision] = r
		}
		mu.Unlock()
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close(context.Background())
	if err := op.Subscribe(ctx, fleet.Topics{}.AllRobots(), fleet.Topics{}.AllRollouts()); err != nil {
		t.Fatal(err)
	}
	waitUntil := func(what string, ok func() bool) {
		t.Helper()
		timeout := time.After(20 * time.Second)
		for {
			mu.Lock()
			done := ok()
			mu.Unlock()
			if done {
				return
			}
			select {
			case <-changed:
			case <-timeout:
				t.Fatalf("timed out waiting for %s; statuses %+v rollouts %+v", what, statuses, rollouts)
			}
		}
	}
	at := func(rev string, ids ...string) func() bool {
		return func() bool {
			for _, id := range ids {
				if app, _ := statuses[id].App("local/app"); app.Revision != rev {
					return false
				}
			}
			return true
		}
	}
	waitUntil("every robot's status", at(revA, append(slices.Clone(canary), rest...)...))

	url := receiver(t, NewBuilder(Config{FleetDialers: mqtt.FleetDialers(), Logger: quiet}), "fleet=fleet:"+broker.URL+"?canary=50&halt=0&wait=1m")
	push := func(rev string) map[string]any {
		status, body := deliver(t, url+"/webhooks/fleet", `{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"space","name":"local/app","headSha":"`+rev+`"}}`)
		if status != 202 || body["state"] != fleet.RolloutCanary {
			t.Fatalf("push: %d %v", status, body)
		}
		return body
	}

	push(revB)
	waitUntil("every robot at revB", at(revB, append(slices.Clone(canary), rest...)...))
	waitUntil("the rollout complete", func() bool { return rollouts[revB].State == fleet.RolloutComplete })
	mu.Lock()
	r := rollouts[revB]
	mu.Unlock()
	sorted := slices.Sorted(slices.Values(canary))
	if !slices.Equal(r.Planned, sorted) || r.Heard != 2 || !slices.Equal(r.Done, sorted) || r.Reason != "2 of 2 canary robots run the revision" {
		t.Fatalf("rollout record: want both canary robots planned and done, got %+v", r)
	}

	push(revC)
	waitUntil("the rollout halted", func() bool { return rollouts[revC].State == fleet.RolloutHalted })
	mu.Lock()
	r = rollouts[revC]
	mu.Unlock()
	if !slices.Equal(r.Failed, []string{canary[1]}) || !strings.Contains(r.Reason, "1 of 2 canary robots failed") {
		t.Fatalf("halted rollout: %+v", r)
	}
	for _, id := range rest {
		if got := apps[id].asked(); slices.Contains(got, revC) {
			t.Fatalf("%s was asked to update to the halted revision: %v", id, got)
		}
		mu.Lock()
		app, _ := statuses[id].App("local/app")
		mu.Unlock()
		if app.Revision != revB {
			t.Fatalf("%s runs %s after the halt", id, app.Revision)
		}
	}
}
