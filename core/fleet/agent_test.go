package fleet

import (
	"context"
	"fmt"

	"github.com/robothub/robothub/internal/testkit/wait"

	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeLink stands in for the broker connection: it records what the agent sends.
type fakeLink struct {
	mu        sync.Mutex
	subs      []string
	retained  map[string][]byte
	published int
}

func (l *fakeLink) Subscribe(_ context.Context, f ...string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.subs = append(l.subs, f...)
	return nil
}

func (l *fakeLink) Unsubscribe(_ context.Context, f ...string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.subs = slices.DeleteFunc(l.subs, func(s string) bool { return slices.Contains(f, s) })
	return nil
}

func (l *fakeLink) Publish(_ context.Context, topic string, p []byte, _ bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.retained == nil {
		l.retained = map[string][]byte{}
	}
	l.retained[topic] = p
	l.published++
	return nil
}

func (l *fakeLink) subscriptions() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(slices.Values(l.subs))
}

func (l *fakeLink) status(t *testing.T, robot string) Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, err := ParseStatus(l.retained[Topics{}.Status(robot)])
	if err != nil {
		return Status{}
	}
	return s
}

// fakeApps is a robot's installed apps; Update moves the apps of a source to the revision.
type fakeApps struct {
	mu      sync.Mutex
	apps    []InstalledApp
	updates []string
}

func (f *fakeApps) Installed() []InstalledApp {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.apps)
}

func (f *fakeApps) Running() string { return "" }

func (f *fakeApps) Update(_ context.Context, source, revision string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates = append(f.updates, source+"@"+revision)
	for i := range f.apps {
		if f.apps[i].Source == source {
			f.apps[i].Revision = revision
		}
	}
	return nil
}

func (f *fakeApps) set(apps ...InstalledApp) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.apps = apps
}

func (f *fakeApps) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.updates)
}

// fakeHub has the heads of spaces and every revision it ever had.
type fakeHub struct {
	mu    sync.Mutex
	head  map[string]string
	known map[string]bool
	calls int
}

func (h *fakeHub) Check(_ context.Context, _, space, rev string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls++
	switch {
	case h.head[space] == rev:
		return nil
	case !h.known[rev]:
		return fmt.Errorf("%w: no %s", ErrNotOnHub, rev)
	default:
		return ErrSuperseded
	}
}

const src = "http://127.0.0.1:7861/spaces/local/my_app"

func startAgent(t *testing.T, robot string, apps *fakeApps, h *fakeHub) (*Agent, *fakeLink) {
	t.Helper()
	a, err := NewAgent(AgentConfig{Robot: robot, Daemon: "test", Apps: apps, Hub: h, Resync: 10 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = a.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	link := &fakeLink{}
	a.Connected(link, time.Now())
	return a, link
}

func update(space, rev string, from, to int) []byte {
	wave := 0
	if from > 0 {
		wave = 1
	}
	b, _ := Marshal(Update{V: Version, Space: space, Revision: rev, Time: time.Now(), Rollout: "r-" + rev[:8], Wave: wave, From: from, To: to})
	return b
}

func TestAgentSubscribesToItsAppsSpacesOnly(t *testing.T) {
	apps := &fakeApps{apps: []InstalledApp{
		{Name: "my_app", Source: src, Revision: revA},
		{Name: "local_app", Source: "/home/me/local_app"}, // not from a hub: nothing to hear
	}}
	_, link := startAgent(t, "robot-1", apps, &fakeHub{})
	wait.For(t, 5*time.Second, "the subscription", func() bool { return len(link.subscriptions()) == 1 })
	if got := link.subscriptions(); got[0] != "robothub/v1/spaces/local/my_app/wave/+" {
		t.Fatalf("subscriptions = %v", got)
	}
	wait.For(t, 5*time.Second, "the status", func() bool { return len(link.status(t, "robot-1").Apps) == 2 })

	apps.set(InstalledApp{Name: "other", Source: "https://hub.example.com/spaces/bob/other", Revision: revA})
	wait.For(t, 5*time.Second, "the new subscription", func() bool {
		s := link.subscriptions()
		return len(s) == 1 && s[0] == "robothub/v1/spaces/bob/other/wave/+"
	})
}

func TestAgentUpdatesToTheAnnouncedRevision(t *testing.T) {
	apps := &fakeApps{apps: []InstalledApp{{Name: "my_app", Source: src, Revision: revA}}}
	h := &fakeHub{head: map[string]string{"local/my_app": revB}, known: map[string]bool{revA: true, revB: true}}
	a, link := startAgent(t, "robot-1", apps, h)
	wait.For(t, 5*time.Second, "the subscription", func() bool { return len(link.subscriptions()) == 1 })

	a.Handle(Topics{}.Wave("local/my_app", 0), update("local/my_app", revB, 0, Buckets))
	wait.For(t, 5*time.Second, "the status after the update", func() bool {
		s := link.status(t, "robot-1")
		return s.LastUpdate != nil && s.LastUpdate.Result == ResultDone && s.Apps[0].Revision == revB
	})
	if got := apps.calls(); len(got) != 1 || got[0] != src+"@"+revB {
		t.Fatalf("updates = %v", got)
	}
	// The same message again (a reconnect brings the retained one): nothing to do, no hub call.
	calls := h.calls
	a.Handle(Topics{}.Wave("local/my_app", 0), update("local/my_app", revB, 0, Buckets))
	a.Connected(link, time.Now())
	wait.For(t, 5*time.Second, "a resync", func() bool { return link.status(t, "robot-1").Robot == "robot-1" })
	if got := apps.calls(); len(got) != 1 || h.calls != calls {
		t.Fatalf("a repeated announcement: updates %v, hub calls %d -> %d", got, calls, h.calls)
	}
}

func TestAgentInstallsNothingTheHubDoesNotHave(t *testing.T) {
	apps := &fakeApps{apps: []InstalledApp{{Name: "my_app", Source: src, Revision: revA}}}
	h := &fakeHub{head: map[string]string{"local/my_app": revA}, known: map[string]bool{revA: true}}
	a, link := startAgent(t, "robot-1", apps, h)
	wait.For(t, 5*time.Second, "the subscription", func() bool { return len(link.subscriptions()) == 1 })

	forged := "deadbeefdeadbeefdeadbeefdeadbeefdeadbeef"
	a.Handle(Topics{}.Wave("local/my_app", 0), update("local/my_app", forged, 0, Buckets))
	wait.For(t, 5*time.Second, "the refusal in the status", func() bool {
		s := link.status(t, "robot-1")
		return s.LastUpdate != nil && s.LastUpdate.Result == ResultRefused
	})
	if got := apps.calls(); len(got) != 0 {
		t.Fatalf("a revision the hub does not have started updates: %v", got)
	}
	// A message whose body names another space than its topic is dropped before anything.
	a.Handle(Topics{}.Wave("local/my_app", 0), update("local/other", revB, 0, Buckets))
	if got := apps.calls(); len(got) != 0 {
		t.Fatalf("updates = %v", got)
	}
}

func TestAgentWaitsForItsWave(t *testing.T) {
	// A robot outside the canary's buckets keeps its revision until the rest's wave names the new one.
	robot := ""
	for i := 0; robot == ""; i++ {
		if id := "robot-" + itoa(i); Bucket(id) >= 1000 {
			robot = id
		}
	}
	apps := &fakeApps{apps: []InstalledApp{{Name: "my_app", Source: src, Revision: revA}}}
	h := &fakeHub{head: map[string]string{"local/my_app": revB}, known: map[string]bool{revA: true, revB: true}}
	a, link := startAgent(t, robot, apps, h)
	wait.For(t, 5*time.Second, "the subscription", func() bool { return len(link.subscriptions()) == 1 })

	a.Handle(Topics{}.Wave("local/my_app", 0), update("local/my_app", revB, 0, 1000))
	a.Handle(Topics{}.Wave("local/my_app", 1), update("local/my_app", revA, 1000, Buckets))
	wait.For(t, 5*time.Second, "the status", func() bool { return link.status(t, robot).Robot == robot })
	if got := apps.calls(); len(got) != 0 {
		t.Fatalf("a robot outside the canary updated: %v", got)
	}
	a.Handle(Topics{}.Wave("local/my_app", 1), update("local/my_app", revB, 1000, Buckets))
	wait.For(t, 5*time.Second, "the update of the rest", func() bool { return len(apps.calls()) == 1 })
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
