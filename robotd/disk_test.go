//go:build linux

package robotd_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/faultfs"
)

// TestDaemonDataDirReadOnlyOrFull runs the daemon on a data dir (a small tmpfs) that becomes
// read-only, or full: changing the startup app, installing and removing an app each fail with an
// error that names the data dir and the cause, nothing is half written (not even a temporary
// file), the previous state is intact and still served, and everything works again once the disk
// can be written.
func TestDaemonDataDirReadOnlyOrFull(t *testing.T) {
	// Its own apps venv, so that it runs in parallel with the tests of the shared one.
	t.Parallel()
	venv := ownVenv(t)
	for _, fault := range []struct {
		name   string
		cause  string // in the error
		break_ func(t *testing.T, dir string) (repair func())
	}{
		{"read-only", "read-only file system", func(t *testing.T, dir string) func() {
			faultfs.ReadOnly(t, dir, true)
			return func() { faultfs.ReadOnly(t, dir, false) }
		}},
		{"full", "no space left on device", func(t *testing.T, dir string) func() {
			filler := faultfs.Fill(t, dir)
			return func() { os.Remove(filler) }
		}},
	} {
		t.Run(fault.name, func(t *testing.T) {
			dataDir := faultfs.Tmpfs(t, 1<<20)
			d := startDaemon(t, daemonOptions{dataDir: dataDir, venv: venv})
			// A startup app set while the robot is still waking up starts when the wake-up ends
			// (the daemon's rule); this test wants the slot free, so it lets the wake-up finish.
			d.waitRobot(10*time.Second, "awake and still", func(s robotState) bool { return s.Awake && s.Move == nil })
			d.reinstall("coop_app") // its record and wheel go into this data dir
			var startup struct {
				StartupApp *string `json:"startup_app"`
			}
			if code := d.call("PUT", "/api/apps/startup-app", map[string]any{"startup_app": "coop_app"}, &startup); code != 200 {
				t.Fatalf("PUT startup-app: %d", code)
			}
			before := snapshot(t, dataDir)
			version := d.list()["coop_app"].Extra.Version

			repair := fault.break_(t, dataDir)
			wantDetail := func(what string, code int, got detail) {
				t.Helper()
				if code != 507 || !strings.Contains(got.Detail, dataDir) || !strings.Contains(got.Detail, fault.cause) {
					t.Errorf("%s: %d %q, want 507 naming %s and %q", what, code, got.Detail, dataDir, fault.cause)
				}
			}
			var got detail
			code := d.call("PUT", "/api/apps/startup-app", map[string]any{"startup_app": nil}, &got)
			wantDetail("PUT startup-app", code, got)
			d.call("GET", "/api/apps/startup-app", nil, &startup)
			if startup.StartupApp == nil || *startup.StartupApp != "coop_app" {
				t.Errorf("the startup app after a failed change: %v, want coop_app", startup.StartupApp)
			}

			for _, job := range []struct{ what, method, path string }{
				{"install", "POST", "/api/apps/install"},
				{"remove", "POST", "/api/apps/remove/coop_app"},
			} {
				var created struct {
					JobID string `json:"job_id"`
				}
				var body any
				if job.what == "install" {
					body = map[string]string{"url": testdataApp("coop_app")}
				}
				if code := d.call(job.method, job.path, body, &created); code != 200 {
					t.Fatalf("%s: %d", job.what, code)
				}
				j := d.waitJob(created.JobID)
				if j.Status != "failed" || j.Error == nil || !strings.Contains(*j.Error, dataDir) || !strings.Contains(*j.Error, fault.cause) {
					t.Errorf("%s job on a broken data dir: %s %v, want an error naming %s and %q", job.what, j.Status, j.Error, dataDir, fault.cause)
				}
				if v := d.list()["coop_app"].Extra.Version; v != version {
					t.Fatalf("after a failed %s coop_app is at %q, was %q", job.what, v, version)
				}
			}
			d.call("POST", "/api/apps/start-app/coop_app", nil, nil)
			if st := d.waitState(10*time.Second, "running", "error"); st.State != "running" {
				t.Errorf("coop_app does not start on a broken data dir: %+v", st)
			}
			d.call("POST", "/api/apps/stop-current-app", nil, nil)

			repair()
			if after := snapshot(t, dataDir); after != before {
				t.Errorf("the data dir changed while it was broken:\nbefore %s\nafter  %s", before, after)
			}
			if code := d.call("PUT", "/api/apps/startup-app", map[string]any{"startup_app": nil}, &startup); code != 200 || startup.StartupApp != nil {
				t.Errorf("PUT startup-app once the disk is writable: %d %v", code, startup.StartupApp)
			}
			d.reinstall("coop_app")
		})
	}
}

// snapshot describes every file of dir: name, size and content hash.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() || e.Name() == "filler" {
			return err // the media socket, a directory: no contents to compare
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		lines = append(lines, fmt.Sprintf("%s:%d:%x", rel, len(data), sha256.Sum256(data)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, " ")
}
