package hubemu_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// TestJobsAreOffByDefault: without AllowJobs (hub serve without --allow-jobs) no source job and no
// job webhook can be made, and a job webhook stored by an earlier run with jobs on does not run:
// its delivery fails, saying why.
func TestJobsAreOffByDefault(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "hub.db")
	marker := filepath.Join(t.TempDir(), "ran")
	// An earlier run with jobs on stores a job webhook.
	on := newTestHub(t, localhub.Config{DSN: dsn, AllowJobs: true})
	var job struct{ ID string }
	on.mustCall("POST", "/api/emulator/jobs", on.token, map[string]any{"command": []string{"touch", marker}}, 200, &job)
	stored := on.createWebhook(on.token, map[string]any{"jobSourceId": job.ID, "watched": watch("user:alice")})
	if err := on.Close(); err != nil {
		t.Fatal(err)
	}

	h := serveTestHub(t, localhub.Config{DSN: dsn})
	h.token = on.token

	for _, c := range []struct {
		name, method, path string
		body               any
	}{
		{"a source job", "POST", "/api/emulator/jobs", map[string]any{"command": []string{"true"}}},
		{"a job webhook", "POST", "/api/settings/webhooks", map[string]any{"jobSourceId": job.ID, "watched": watch("user:alice")}},
		{"a URL webhook turned into a job", "POST", "/api/settings/webhooks/" + stored.ID, map[string]any{"jobSourceId": job.ID}},
	} {
		status, body, _ := h.call(c.method, c.path, h.token, c.body)
		if status != 403 || !strings.Contains(string(body), "jobs are off on this hub") || !strings.Contains(string(body), "--allow-jobs") {
			t.Errorf("%s: %d %s", c.name, status, body)
		}
	}
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update"})
	wait.For(t, 10*time.Second, "the stored job webhook's delivery to fail", func() bool {
		a := h.activity(h.token, stored.ID)
		return len(a.Deliveries) == 1 && a.Deliveries[0].State == hubemu.StateFailed
	})
	a := h.activity(h.token, stored.ID)
	if att := a.Deliveries[0].Attempts; len(att) != 1 || !strings.Contains(att[0].Error, "jobs are off") {
		t.Fatalf("attempts %+v", att)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the job ran on a hub without --allow-jobs")
	}
}
