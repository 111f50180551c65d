package actions

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/robothub/robothub/core/fleet"
	"github.com/robothub/robothub/core/webhook"
)

// recordingLink is a fleet link that keeps what is published.
type recordingLink struct {
	mu   sync.Mutex
	sent map[string][]byte
}

func (l *recordingLink) Subscribe(context.Context, ...string) error   { return nil }
func (l *recordingLink) Unsubscribe(context.Context, ...string) error { return nil }
func (l *recordingLink) Publish(_ context.Context, topic string, payload []byte, _ bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent[topic] = payload
	return nil
}

// A fleet: route with daemon=REPO announces the daemon release a push to that release repository
// made the newest of its channel, read from channels.json at the pushed commit; other pushes are
// announced as before.
func TestFleetRouteAnnouncesADaemonRelease(t *testing.T) {
	head := strings.Repeat("c", 40)
	hubSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/spaces/robothub/releases/resolve/"+head+"/channels.json" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"v":1,"channels":{"stable":"1.2.0","pre-release":"1.3.0-rc.1"}}`))
	}))
	defer hubSrv.Close()
	link := &recordingLink{sent: map[string][]byte{}}
	b := NewBuilder(Config{Logger: slog.New(slog.DiscardHandler), FleetDialers: map[string]FleetLinkDialer{
		"fake": func(context.Context, *url.URL) (fleet.Link, error) { return link, nil }}})
	defer b.Close(context.Background())
	if _, err := b.Handler("bad", "fleet:fake://x?channel=stable"); err == nil || !strings.Contains(err.Error(), "channel= goes with daemon=REPO") {
		t.Errorf("channel without daemon: %v", err)
	}
	if _, err := b.Handler("bad", "fleet:fake://x?daemon=a/b/c/d"); err == nil || !strings.Contains(err.Error(), "daemon=a/b/c/d") {
		t.Errorf("a bad release repo: %v", err)
	}
	h, err := b.Handler("rel", "fleet:fake://x?daemon=spaces/robothub/releases")
	if err != nil {
		t.Fatal(err)
	}
	push := func(name string) *webhook.Payload {
		return &webhook.Payload{Event: webhook.Event{Action: webhook.ActionUpdate, Scope: webhook.ScopeRepoContent},
			Repo: webhook.Repo{Type: "space", Name: name, HeadSha: head, URL: webhook.URL{API: hubSrv.URL + "/api/spaces/" + name}}}
	}
	out, err := h(context.Background(), push("robothub/releases"), nil)
	if err != nil {
		t.Fatal(err)
	}
	res := out.(webhook.Response).Body.(FleetResult)
	if res.Daemon != "1.2.0" || res.Repo != "spaces/robothub/releases" || res.Topic != "robothub/v1/daemon/wave/0" {
		t.Fatalf("result %+v", res)
	}
	u, err := fleet.ParseUpdate(link.sent["robothub/v1/daemon/wave/0"])
	if err != nil || u.Daemon != "1.2.0" || u.Repo != "spaces/robothub/releases" || u.From != 0 || u.To != fleet.Buckets {
		t.Fatalf("wave 0: %+v %v", u, err)
	}
	// An app's space still gets its own announcement.
	if _, err := h(context.Background(), push("alice/app"), nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := link.sent["robothub/v1/spaces/alice/app/wave/0"]; !ok {
		t.Errorf("the app's push was not announced: %v", link.sent)
	}
}
