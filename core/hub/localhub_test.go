package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/robothub/robothub/internal/testkit/hubtest"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// localHub serves an in-memory emulator and records the bodies of the requests it gets.
type localHub struct {
	*hubtest.Hub
	mu     sync.Mutex
	bodies []string
}

func newLocalHub(t testing.TB) *localHub {
	t.Helper()
	// Jobs on: the client's job webhook calls are tested against this hub.
	lh := &localHub{}
	lh.Hub = hubtest.Start(t, localhub.Config{AllowJobs: true}, hubtest.WithHandler(func(api http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			lh.mu.Lock()
			lh.bodies = append(lh.bodies, r.Method+" "+r.URL.Path+" "+string(body))
			lh.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
			api.ServeHTTP(w, r)
		})
	}))
	return lh
}

func (lh *localHub) lastBody() string {
	lh.mu.Lock()
	defer lh.mu.Unlock()
	return lh.bodies[len(lh.bodies)-1]
}

func TestClientAgainstTheEmulator(t *testing.T) {
	ctx := context.Background()
	lh := newLocalHub(t)
	c := lh.Client(t, "alice", hubemu.RoleWrite)

	wh, err := c.Create(ctx, hub.CreateRequest{
		URL: "https://example.com/hook", Watched: []hub.WatchedItem{{"model", "alice/bert"}, {"org", "acme"}},
		Domains: []string{"repo", "discussions"}, Secret: "s3cret",
	})
	if err != nil {
		t.Fatal(err)
	}
	if wh.URL != "https://example.com/hook" || wh.Disabled || wh.Secret != "s3cret" || len(wh.Watched) != 2 || strings.Join(wh.Domains, ",") != "repo,discussion" {
		t.Fatalf("created %+v", wh)
	}

	// Update sends only what changes: no "watched": [] behind the caller's back.
	up, err := c.Update(ctx, wh.ID, hub.UpdateRequest{URL: new("https://example.org/new")})
	if err != nil {
		t.Fatal(err)
	}
	if body := lh.lastBody(); body != "POST /api/settings/webhooks/"+wh.ID+` {"url":"https://example.org/new"}` {
		t.Fatalf("update sent %s", body)
	}
	if up.URL != "https://example.org/new" || len(up.Watched) != 2 || up.Secret != "s3cret" {
		t.Fatalf("updated %+v", up)
	}
	up, err = c.Update(ctx, wh.ID, hub.UpdateRequest{Secret: new("")})
	if err != nil || up.Secret != "" {
		t.Fatalf("removing the secret: %+v %v", up, err)
	}

	// enabled -> disabled -> enabled -> deleted
	got, err := c.Disable(ctx, wh.ID)
	if err != nil || !got.Disabled {
		t.Fatalf("disable: %+v %v", got, err)
	}
	got, err = c.Get(ctx, wh.ID)
	if err != nil || !got.Disabled {
		t.Fatalf("get after disable: %+v %v", got, err)
	}
	got, err = c.Enable(ctx, wh.ID)
	if err != nil || got.Disabled {
		t.Fatalf("enable: %+v %v", got, err)
	}
	list, err := c.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := c.Delete(ctx, wh.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, wh.ID); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	if err := c.Delete(ctx, wh.ID); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if list, err = c.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("list after delete: %+v %v", list, err)
	}
}

func TestClientErrorsFromTheEmulator(t *testing.T) {
	ctx := context.Background()
	lh := newLocalHub(t)
	alice := lh.Client(t, "alice", hubemu.RoleWrite)
	bob := lh.Client(t, "bob", hubemu.RoleWrite)
	reader := lh.Client(t, "alice", hubemu.RoleRead)
	wh, err := alice.Create(ctx, hub.CreateRequest{URL: "https://e.com", Watched: []hub.WatchedItem{{"user", "alice"}}})
	if err != nil {
		t.Fatal(err)
	}

	_, err = bob.Get(ctx, wh.ID)
	var he *hub.Error
	if !errors.Is(err, fault.ErrNotFound) || !errors.As(err, &he) || he.RequestID == "" || !strings.Contains(he.Message, "not found") {
		t.Fatalf("another user's webhook: %v", err)
	}
	if _, err := reader.Disable(ctx, wh.ID); !errors.Is(err, fault.ErrForbidden) || !strings.Contains(err.Error(), "write role") {
		t.Fatalf("read token: %v", err)
	}
	wrong, _ := hub.New(lh.URL, hub.WithToken("hf_wrong"))
	if _, err := wrong.List(ctx); !errors.Is(err, fault.ErrUnauthenticated) || !strings.Contains(err.Error(), "Invalid credentials") || strings.Contains(err.Error(), "hf_wrong") {
		t.Fatalf("wrong token: %v", err)
	}
	if _, err := alice.Create(ctx, hub.CreateRequest{JobID: "0123456789abcdef01234567", Watched: []hub.WatchedItem{{"user", "a"}}}); !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), "no job") {
		t.Fatalf("unknown job: %v", err)
	}
}

func TestClientJobWebhookSecrets(t *testing.T) {
	ctx := context.Background()
	lh := newLocalHub(t)
	c := lh.Client(t, "alice", hubemu.RoleWrite)
	job, err := hubemu.Client{Client: c}.CreateSourceJob(ctx, hubemu.JobInput{Command: []string{"true"}, Secrets: map[string]string{"OWN": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	wh, err := c.Create(ctx, hub.CreateRequest{JobID: job.ID, Watched: []hub.WatchedItem{{"user", "alice"}}, Secrets: map[string]string{"A": "1", "B": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	if wh.Job == nil || wh.Job.SourceID != job.ID || strings.Join(wh.Job.SecretNames, ",") != "A,B" {
		t.Fatalf("job webhook %+v", wh.Job)
	}
	wh, err = c.Update(ctx, wh.ID, hub.UpdateRequest{JobID: job.ID, Secrets: map[string]string{"B": "", "C": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(wh.Job.SecretNames, ","); got != "A,C" {
		t.Fatalf("secrets %s, want A,C", got)
	}
	var sent map[string]any
	body := lh.lastBody()
	if err := json.Unmarshal([]byte(body[strings.IndexByte(body, '{'):]), &sent); err != nil || len(sent) != 2 || sent["jobSourceId"] != job.ID {
		t.Fatalf("update sent %s", body)
	}
}
