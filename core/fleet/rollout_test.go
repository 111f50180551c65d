package fleet

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// recordLink is a Link that keeps what is published on it.
type recordLink struct {
	mu        sync.Mutex
	published map[string][]byte
}

func (l *recordLink) Subscribe(context.Context, ...string) error   { return nil }
func (l *recordLink) Unsubscribe(context.Context, ...string) error { return nil }
func (l *recordLink) Publish(_ context.Context, topic string, payload []byte, _ bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.published == nil {
		l.published = map[string][]byte{}
	}
	l.published[topic] = payload
	return nil
}

func (l *recordLink) rollout(t *testing.T, space string) Rollout {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.published[Topics{}.Rollout(space)]
	if !ok {
		return Rollout{}
	}
	r, err := ParseRollout(b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (l *recordLink) has(topic string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.published[topic]
	return ok
}

// canaryIDs returns n robot ids in the first half of the buckets (a canary of 50 %).
func canaryIDs(n int) []string {
	var ids []string
	for i := 0; len(ids) < n; i++ {
		if id := "robot-" + itoa(i); Bucket(id) < Buckets/2 {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestPublisherJudgesASettledView is the race of a publisher that announces before the broker has
// replayed every retained status: one canary robot's status arrives (already at the new revision),
// the second a little later. Judged on the first alone, the wave would complete "1 of 1"; judged
// from the settled view, it waits for both and says so in the record.
func TestPublisherJudgesASettledView(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const space = "local/app"
		revA, revB := "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
		link := &recordLink{}
		p := &Publisher{Link: link, Plan: Plan{Canary: 50, Wait: time.Minute}, Log: slog.New(slog.DiscardHandler)}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() { _ = p.Run(ctx) }()

		status := func(id, rev string) []byte {
			b, err := Marshal(Status{V: Version, Robot: id, Time: time.Now(), Apps: []AppStatus{{Name: "app", Space: space, Revision: rev}}})
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		canary := canaryIDs(2)
		if _, err := p.Announce(ctx, space, revB); err != nil {
			t.Fatal(err)
		}
		p.Subscribed()
		p.Handle(Topics{}.Status(canary[0]), status(canary[0], revB))
		time.Sleep(DefaultSettle / 2) // the replay goes on: a second canary robot, not yet updated
		p.Handle(Topics{}.Status(canary[1]), status(canary[1], revA))
		synctest.Wait()
		if r := link.rollout(t, space); r.State != RolloutCanary || r.Planned != nil {
			t.Fatalf("judged before the view settled: %+v", r)
		}

		time.Sleep(DefaultSettle)
		synctest.Wait()
		r := link.rollout(t, space)
		if r.State != RolloutCanary || !slices.Equal(r.Planned, canary) {
			t.Fatalf("the settled view: want the canary still out with both robots planned, got %+v", r)
		}
		if link.has(Topics{}.Wave(space, 1)) {
			t.Fatal("the rest of the fleet was told before the second canary robot reported")
		}

		p.Handle(Topics{}.Status(canary[1]), status(canary[1], revB))
		synctest.Wait()
		r = link.rollout(t, space)
		if r.State != RolloutComplete || r.Heard != 2 || !slices.Equal(r.Done, canary) || r.Reason != "2 of 2 canary robots run the revision" {
			t.Fatalf("after both reported: %+v", r)
		}
		if !link.has(Topics{}.Wave(space, 1)) {
			t.Fatal("the rest of the fleet was never told")
		}
	})
}

// TestPublisherKeepsItsPlannedRobots: a planned canary robot whose status is gone (cleared on the
// broker) still counts as not heard from; the wave does not complete without it.
func TestPublisherKeepsItsPlannedRobots(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	plan := Plan{Canary: 50, Wait: time.Minute}
	ids := canaryIDs(2)
	u := Update{Space: "local/app", Revision: revB, From: 0, To: Buckets / 2}
	st := map[string]Status{ids[0]: {Apps: []AppStatus{{Name: "app", Space: "local/app", Revision: revB}}}}
	d := plan.Evaluate(u, start, ids, st, start.Add(time.Second))
	if d.Advance || d.Halt || !slices.Equal(d.Pending, ids[1:]) {
		t.Fatalf("a planned robot without a status: %+v", d)
	}
	d = plan.Evaluate(u, start, ids, st, start.Add(2*time.Minute))
	if !d.Advance || d.Reason != "1 of 2 canary robots run the revision; "+ids[1]+" did not report within 1m0s" {
		t.Fatalf("after Wait: %+v", d)
	}
}

// TestPublisherHaltsWithoutStatuses: a publisher whose subscription never came up halts the
// rollout after Wait, saying why, instead of leaving it in its canary forever.
func TestPublisherHaltsWithoutStatuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		link := &recordLink{}
		p := &Publisher{Link: link, Plan: Plan{Canary: 10, Wait: time.Minute}, Log: slog.New(slog.DiscardHandler)}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() { _ = p.Run(ctx) }()
		if _, err := p.Announce(ctx, "local/app", revB); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute + 2*time.Second)
		synctest.Wait()
		r := link.rollout(t, "local/app")
		if r.State != RolloutHalted || r.Reason != "the robots' statuses did not arrive within 1m0s (is the publisher subscribed to robothub/v1/robots/+/+?)" {
			t.Fatalf("%+v", r)
		}
	})
}
