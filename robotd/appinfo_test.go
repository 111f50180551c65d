package robotd_test

import (
	"testing"
	"time"
)

// The public daemon's install body, its app info {name, source_kind, url?}: a space by its name
// installs from the daemon's hub, a local app by its path; an unknown or installed kind is 400
// naming it. The stop answers null, as the public daemon's does.
func TestInstallTakesThePublicAppInfo(t *testing.T) {
	parallel(t)
	h := hub(t, map[string]string{"pollen/catalog_app": testdataApp("catalog_app")})
	d := startDaemon(t, daemonOptions{args: []string{"--hub-url", h.URL}})
	var created struct {
		JobID string `json:"job_id"`
	}
	t.Cleanup(func() {
		for _, name := range []string{"catalog_app", "coop_app"} {
			if d.call("POST", "/api/apps/remove/"+name, nil, &created) == 200 {
				d.waitJob(created.JobID)
			}
		}
	})

	if code := d.call("POST", "/api/apps/install", map[string]any{"name": "pollen/catalog_app", "source_kind": "hf_space",
		"description": "from the public dashboard", "extra": map[string]any{}}, &created); code != 200 {
		t.Fatalf("install hf_space by name: %d", code)
	}
	if j := d.waitJob(created.JobID); j.Status != "done" {
		t.Fatalf("install hf_space by name: %+v", j)
	}
	if app := d.list()["catalog_app"]; app.URL != h.URL+"/spaces/pollen/catalog_app" {
		t.Fatalf("catalog_app installed from %q, want the hub's space", app.URL)
	}

	if code := d.call("POST", "/api/apps/install", map[string]any{"name": "coop_app", "source_kind": "local", "url": testdataApp("coop_app")}, &created); code != 200 {
		t.Fatalf("install local: %d", code)
	}
	if j := d.waitJob(created.JobID); j.Status != "done" {
		t.Fatalf("install local: %+v", j)
	}
	if _, ok := d.list()["coop_app"]; !ok {
		t.Fatal("coop_app is not installed after a local install")
	}

	d.expectError("POST", "/api/apps/install", map[string]any{"name": "x", "source_kind": "pypi"}, 400, `source_kind "pypi" is not one of hf_space, dashboard_selection, local, installed`)
	d.expectError("POST", "/api/apps/install", map[string]any{"name": "coop_app", "source_kind": "installed"}, 400, "app coop_app is installed already")
	d.expectError("POST", "/api/apps/install", map[string]any{"source_kind": "hf_space"}, 422, "field name is required")
	d.expectError("POST", "/api/apps/install", map[string]any{"name": "../../etc", "source_kind": "hf_space"}, 422, "is not a space ID")
	d.expectError("POST", "/api/apps/install", map[string]any{}, 422, "field url is required")

	// Stopping answers null, as the public daemon does; how the app ended is in the daemon's log.
	if code := d.call("POST", "/api/apps/start-app/coop_app", nil, nil); code != 200 {
		t.Fatalf("start coop_app: %d", code)
	}
	d.waitState(10*time.Second, "running")
	if state, errText := d.stopApp(); state != "done" || errText != "" {
		t.Fatalf("coop_app ended %s %q", state, errText)
	}
	if st := d.status(); st != nil {
		t.Fatalf("current-app-status after the stop: %+v, want null", st)
	}
}
