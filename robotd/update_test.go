package robotd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// push commits a change to a space of the test hub, as `git push` to the space would, and returns
// the new head commit.
func (h *testHub) push(t *testing.T, id string, change func(dir string)) string {
	t.Helper()
	work := filepath.Join(t.TempDir(), "work")
	bare := filepath.Join(h.root, "spaces", id)
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	git := func(dir string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git(h.root, "clone", "-q", bare, work)
	change(work)
	git(work, "commit", "-q", "-am", "update")
	git(work, "push", "-q", "origin", "HEAD:main")
	return git(bare, "rev-parse", "main")
}

// TestUpdateFromSpace: a push to an installed app's space, then POST /api/apps/update with the new
// revision, installs the new version and restarts the running app; the same update again does nothing.
func TestUpdateFromSpace(t *testing.T) {
	parallel(t)
	h := hub(t, map[string]string{"pollen/catalog_app": testdataApp("catalog_app")})
	d := startDaemon(t, daemonOptions{})
	space := h.URL + "/spaces/pollen/catalog_app"
	t.Cleanup(func() {
		d.call("POST", "/api/apps/stop-current-app", nil, nil)
		var created struct {
			JobID string `json:"job_id"`
		}
		if d.call("POST", "/api/apps/remove/catalog_app", nil, &created) == 200 {
			d.waitJob(created.JobID)
		}
	})
	var created struct {
		JobID string `json:"job_id"`
	}
	d.call("POST", "/api/apps/install", map[string]string{"url": space}, &created)
	if j := d.waitJob(created.JobID); j.Status != "done" {
		t.Fatalf("install: %v\n%s", j.Error, strings.Join(j.Logs, "\n"))
	}
	first := d.list()["catalog_app"]
	if first.Extra.Revision == "" || first.Extra.Version != "1.0.0" {
		t.Fatalf("installed app: %+v", first)
	}
	if code := d.call("POST", "/api/apps/start-app/catalog_app", nil, nil); code != 200 {
		t.Fatalf("start: %d", code)
	}
	d.waitState(10*time.Second, "running")

	rev := h.push(t, "pollen/catalog_app", func(dir string) {
		p := filepath.Join(dir, "pyproject.toml")
		b, _ := os.ReadFile(p)
		if err := os.WriteFile(p, []byte(strings.Replace(string(b), `version = "1.0.0"`, `version = "1.0.1"`, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	d.call("POST", "/api/apps/update", map[string]string{"url": space, "revision": rev}, &created)
	j := d.waitJob(created.JobID)
	logs := strings.Join(j.Logs, "\n")
	if j.Status != "done" || !strings.Contains(logs, "Restarting catalog_app to run the new version") {
		t.Fatalf("update: %s %v\n%s", j.Status, j.Error, logs)
	}
	if got := d.list()["catalog_app"]; got.Extra.Revision != rev || got.Extra.Version != "1.0.1" {
		t.Fatalf("after the update: revision %s version %s, want %s 1.0.1", got.Extra.Revision, got.Extra.Version, rev)
	}
	st := d.waitState(10*time.Second, "running")
	if st.Info.Name != "catalog_app" || st.Info.Extra.Version != "1.0.1" {
		t.Fatalf("running after the update: %+v", st)
	}
	if u := d.list()["catalog_app"].Extra.LastUpdate; u == nil || u.Status != "done" || u.Revision != rev || u.Finished == "" {
		t.Fatalf("the last update in /api/apps/list: %+v", u)
	}

	// An update that fails in the background (here: a push that breaks pyproject.toml) is not
	// silent: /api/apps/list shows it failed, with why, and the app keeps its version.
	broken := h.push(t, "pollen/catalog_app", func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "pyproject.toml"), []byte("[project\nname = \"catalog_app\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	d.call("POST", "/api/apps/update", map[string]string{"url": space, "revision": broken}, &created)
	if j := d.waitJob(created.JobID); j.Status != "failed" {
		t.Fatalf("update to a broken package: %s", j.Status)
	}
	if u := d.list()["catalog_app"].Extra.LastUpdate; u == nil || u.Status != "failed" || u.Revision != broken || u.Error == "" {
		t.Fatalf("a failed update in /api/apps/list: %+v", u)
	} else {
		t.Logf("a failed update shows: %s", u.Error)
	}
	if got := d.list()["catalog_app"]; got.Extra.Revision != rev || got.Extra.Version != "1.0.1" {
		t.Fatalf("after a failed update: revision %s version %s, want %s 1.0.1", got.Extra.Revision, got.Extra.Version, rev)
	}

	// The same event delivered again: nothing installed, nothing restarted.
	d.call("POST", "/api/apps/update", map[string]string{"url": space, "revision": rev[:12]}, &created)
	j = d.waitJob(created.JobID)
	logs = strings.Join(j.Logs, "\n")
	if j.Status != "done" || !strings.Contains(logs, "already at revision") || strings.Contains(logs, "Cloning") || strings.Contains(logs, "Restarting") {
		t.Fatalf("repeated update: %s\n%s", j.Status, logs)
	}

	d.expectError("POST", "/api/apps/update", map[string]string{"url": h.URL + "/spaces/pollen/other_app"}, 404, "No installed app comes from")
	d.expectError("POST", "/api/apps/update", map[string]string{"url": space, "revision": "main; rm -rf /"}, 422, "is not a git commit")
	d.expectError("POST", "/api/apps/update", map[string]string{}, 422, "field url is required")
}
