//go:build linux

package hubemu_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
	"github.com/robothub/robothub/internal/testkit/faultfs"
	"github.com/robothub/robothub/internal/testkit/hubtest"
	"github.com/robothub/robothub/internal/testkit/wait"
)

// runningHub is one start of an emulator on a database file, as hub serve is: a restart is a new
// runningHub on the same file.
type runningHub struct {
	*testHub
	runDone chan error // Run's result: this test waits for Run to stop by itself
	cancel  context.CancelFunc
	once    sync.Once
	err     error
}

func startHubOn(t *testing.T, cfg localhub.Config) *runningHub {
	t.Helper()
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Delivery = fastDelivery
	cfg.AllowDeliveryTo = loopback
	served, err := hubtest.Serve(cfg) // closed by close, which expects the emulator's Close to fail
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &runningHub{testHub: &testHub{Hub: served, t: t, emu: served.Emulator}, runDone: make(chan error, 1), cancel: cancel}
	go func() { h.runDone <- served.Emulator.Run(ctx) }()
	t.Cleanup(func() { h.close() })
	return h
}

// close stops the hub (once) and returns Run's error.
func (h *runningHub) close() error {
	h.once.Do(func() {
		h.cancel()
		h.err = <-h.runDone
		_ = h.Hub.Close() // on a full disk, the last checkpoint may fail: the WAL keeps its pages
	})
	return h.err
}

// TestJobRunEndingOnAFullDisk: a job run that ends while the hub's disk is full stops Run with an
// error that names the database, what failed and the cause. Nothing is lost: once there is space,
// the restarted hub marks that run interrupted and runs the delivery again, which is recorded as
// delivered by the second run, with its log. The job has run twice: at least once allows that, and
// the first run's end was never recorded.
func TestJobRunEndingOnAFullDisk(t *testing.T) {
	dir := faultfs.Tmpfs(t, 4<<20)
	db := filepath.Join(dir, "hub.db")
	// The job reports its start and waits for its gate through files of its own run directory
	// (its HOME): a job has no network of this machine and sees no other file, but the test sees
	// its run directory, under the hub's temporary directory. The names are this test's own.
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	var runs atomic.Int32
	started, gate := make(chan struct{}, 2), make(chan struct{})
	stopWatching := make(chan struct{})
	t.Cleanup(func() { close(stopWatching) })
	go func() {
		seen := map[string]bool{}
		gateOpen, g := false, gate
		for {
			select {
			case <-stopWatching:
				return
			case <-g:
				gateOpen, g = true, nil
			case <-time.After(20 * time.Millisecond):
			}
			marks, _ := filepath.Glob(filepath.Join(os.TempDir(), "hubemu-run-*", "home", "started-"+tag))
			for _, m := range marks {
				if !seen[m] {
					seen[m] = true
					runs.Add(1)
					started <- struct{}{}
				}
				if gateOpen {
					_ = os.WriteFile(filepath.Join(filepath.Dir(m), "go-"+tag), nil, 0o644)
				}
			}
		}
	}()
	cfg := localhub.Config{AllowJobs: true, DSN: db}

	h := startHubOn(t, cfg)
	token, _, err := h.emu.CreateToken(context.Background(), "alice", hubemu.RoleWrite, "test")
	if err != nil {
		t.Fatal(err)
	}
	var job struct{ ID string }
	script := `touch "started-$TAG" && while [ ! -e "go-$TAG" ]; do sleep 0.05; done && echo finished`
	h.mustCall("POST", "/api/emulator/jobs", token, map[string]any{
		"command": []string{"sh", "-c", script}, "environment": map[string]string{"TAG": tag},
	}, 200, &job)
	wh := h.createWebhook(token, map[string]any{"jobSourceId": job.ID, "watched": watch("model:alice/bert")})
	h.emit(token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update"})
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the job did not start")
	}

	filler := faultfs.Fill(t, dir)
	close(gate)
	var runErr error
	select {
	case runErr = <-h.runDone:
		h.runDone <- runErr
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop when its job run could not be recorded on the full disk")
	}
	var se *hubemu.StoreError
	if !errors.As(runErr, &se) || !strings.Contains(runErr.Error(), db) || !strings.Contains(runErr.Error(), "recording deliveries") ||
		!strings.Contains(runErr.Error(), "disk is full") {
		t.Fatalf("Run stopped with %v, want a StoreError naming %s, what failed and the cause", runErr, db)
	}
	h.close()

	os.Remove(filler)
	h = startHubOn(t, cfg)
	var list []hubemu.JobRun
	wait.For(t, 10*time.Second, "the delivery to run again after the restart", func() bool {
		h.mustCall("GET", "/api/emulator/webhooks/"+wh.ID+"/runs", token, nil, 200, &list)
		return len(list) == 2 && list[0].State != hubemu.RunRunning && list[1].State != hubemu.RunRunning
	})
	byState := map[string]hubemu.JobRun{}
	for _, r := range list {
		byState[r.State] = r
	}
	interrupted, ok := byState[hubemu.RunError]
	if !ok || !strings.Contains(interrupted.Error, "interrupted") {
		t.Errorf("runs %+v, want the first one interrupted", list)
	}
	var run hubemu.JobRun
	h.mustCall("GET", "/api/emulator/runs/"+byState[hubemu.RunCompleted].ID, token, nil, 200, &run)
	if run.State != hubemu.RunCompleted || run.ExitCode == nil || *run.ExitCode != 0 || !strings.Contains(run.Log, "finished") {
		t.Errorf("run %+v, want completed with its log", run)
	}
	a := h.activity(token, wh.ID)
	if len(a.Deliveries) != 1 || a.Deliveries[0].State != hubemu.StateDelivered || len(a.Deliveries[0].Attempts) != 1 ||
		a.Deliveries[0].Attempts[0].JobRunID != run.ID {
		t.Errorf("activity %+v, want one delivery, delivered by run %s", a.Deliveries, run.ID)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("the job started %d times, want twice (once before the disk filled, once after the restart)", n)
	}
	if err := h.close(); err != nil {
		t.Errorf("Run after the restart: %v", err)
	}
}
