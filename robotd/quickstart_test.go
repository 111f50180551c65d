package robotd_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The README's quick start pastes start-app right after install, and install runs in the
// background. The daemon says what is going on at each step instead of "not installed": the app
// is being installed (and how to wait for it); ?wait=true answers when the job is done, or failed
// with why; and a start while another app runs names that app and how to stop it.
func TestQuickStartMessages(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("creates an apps venv and runs Python apps")
	}
	d := startDaemon(t, daemonOptions{venv: ownVenv(t)}) // its own venv: no app installed yet

	var created struct {
		JobID string `json:"job_id"`
	}
	if code := d.call("POST", "/api/apps/install", map[string]string{"url": testdataApp("coop_app")}, &created); code != 200 {
		t.Fatalf("install: %d", code)
	}
	var refused detail
	code := d.call("POST", "/api/apps/start-app/coop_app", nil, &refused)
	want := fmt.Sprintf("App 'coop_app' is being installed (job %s: ", created.JobID)
	if code != 400 || !strings.HasPrefix(refused.Detail, want) || !strings.Contains(refused.Detail, "GET /api/apps/job-status/"+created.JobID) ||
		!strings.Contains(refused.Detail, "POST /api/apps/install?wait=true") {
		t.Fatalf("start-app during the install: %d %q, want 400 starting %q", code, refused.Detail, want)
	}

	// ?wait=true: the answer comes when the job is done (after the first install: jobs run in turn).
	var waited struct {
		JobID  string   `json:"job_id"`
		Status string   `json:"status"`
		Apps   []string `json:"apps"`
		Detail string   `json:"detail"`
	}
	if code := d.call("POST", "/api/apps/install?wait=true", map[string]string{"url": testdataApp("crash_app")}, &waited); code != 200 ||
		waited.Status != "done" || len(waited.Apps) != 1 || waited.Apps[0] != "crash_app" || waited.JobID == "" {
		t.Fatalf("install?wait=true: %d %+v", code, waited)
	}
	if j := d.waitJob(created.JobID); j.Status != "done" {
		t.Fatalf("the first install: %s %v", j.Status, j.Error)
	}
	if code := d.call("POST", "/api/apps/start-app/coop_app", nil, nil); code != 200 {
		t.Fatalf("start-app after the install: %d", code)
	}
	d.waitState(30*time.Second, "running")

	// Another app while coop_app runs: which one runs, and how to stop it.
	d.expectError("POST", "/api/apps/start-app/crash_app", nil, 400,
		"An app is already running: 'coop_app' (running); stop it first: POST /api/apps/stop-current-app, or Stop on the dashboard")

	// A failed install waited for: 500 with the job, its error as the detail.
	waited = struct {
		JobID  string   `json:"job_id"`
		Status string   `json:"status"`
		Apps   []string `json:"apps"`
		Detail string   `json:"detail"`
	}{}
	if code := d.call("POST", "/api/apps/install?wait=true", map[string]string{"url": testdataApp("not_an_app")}, &waited); code != 500 ||
		waited.Status != "failed" || !strings.HasPrefix(waited.Detail, "Job "+waited.JobID+" failed: ") || !strings.Contains(waited.Detail, "declares no entry point in group robot_apps") {
		t.Fatalf("install?wait=true of a package that is no app: %d %+v", code, waited)
	}
	d.expectError("POST", "/api/apps/install?wait=soon", map[string]string{"url": testdataApp("coop_app")}, 422, `wait: must be true or false`)
}
