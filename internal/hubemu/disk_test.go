//go:build linux

package hubemu_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/faultfs"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/syncbuf"
)

// TestJobRunEndingOnAFullDisk: a job run that ends while the hub's disk is full pauses delivery
// instead of stopping Run; once there is space, the run is recorded as completed with its log, the
// delivery as delivered by that run, and the job has run once.
func TestJobRunEndingOnAFullDisk(t *testing.T) {
	dir := faultfs.Tmpfs(t, 4<<20)
	work := t.TempDir() // off the tmpfs: the job writes here while the hub's disk is full
	gate, runs := filepath.Join(work, "go"), filepath.Join(work, "runs")
	logs := &syncbuf.Buffer{}
	h := newTestHub(t, hubemu.Config{AllowJobs: true, DSN: filepath.Join(dir, "hub.db"), Logger: slog.New(slog.NewTextHandler(logs, nil))})

	var job struct{ ID string }
	script := `echo run >> "$RUNS"; while [ ! -e "$GATE" ]; do sleep 0.01; done; echo finished`
	h.mustCall("POST", "/api/emulator/jobs", h.token, map[string]any{
		"command": []string{"sh", "-c", script}, "environment": map[string]string{"RUNS": runs, "GATE": gate},
	}, 200, &job)
	wh := h.createWebhook(h.token, map[string]any{"jobSourceId": job.ID, "watched": watch("model:alice/bert")})
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update"})
	waitFor(t, "the job to start", func() bool { _, err := os.Stat(runs); return err == nil })

	filler := faultfs.Fill(t, dir)
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "delivery to pause", func() bool { return strings.Contains(logs.String(), "delivery paused") })
	os.Remove(filler)

	var list []hubemu.JobRun
	waitFor(t, "the run to be recorded", func() bool {
		h.mustCall("GET", "/api/emulator/webhooks/"+wh.ID+"/runs", h.token, nil, 200, &list)
		return len(list) == 1 && list[0].State != hubemu.RunRunning
	})
	var run hubemu.JobRun
	h.mustCall("GET", "/api/emulator/runs/"+list[0].ID, h.token, nil, 200, &run)
	if run.State != hubemu.RunCompleted || run.ExitCode == nil || *run.ExitCode != 0 || !strings.Contains(run.Log, "finished") {
		t.Errorf("run %+v, want completed with its log", run)
	}
	a := h.activity(h.token, wh.ID)
	if len(a.Deliveries) != 1 || a.Deliveries[0].State != hubemu.StateDelivered || len(a.Deliveries[0].Attempts) != 1 ||
		a.Deliveries[0].Attempts[0].JobRunID != run.ID {
		t.Errorf("activity %+v, want one delivery, delivered by run %s", a.Deliveries, run.ID)
	}
	time.Sleep(200 * time.Millisecond) // a second run would start within a few retry delays
	if b, _ := os.ReadFile(runs); string(b) != "run\n" {
		t.Errorf("the job ran %d times, want once", strings.Count(string(b), "run"))
	}
	if !strings.Contains(logs.String(), "delivery resumed") {
		t.Errorf("no line says that delivery resumed:\n%s", logs)
	}
}
