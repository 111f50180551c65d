package robotd_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/adapters/python"
	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/robotd"
	"github.com/robothub/robothub/robotd/pysdk"
)

// fuzzDaemon is the daemon's HTTP API on the simulated robot, without a listener and without an
// apps venv: nothing is installed, and an install job fails at once (its venv interpreter is
// "false"), so that a fuzzer can call every route quickly without running pip.
func fuzzDaemon(f *testing.F) http.Handler {
	f.Helper()
	dir := f.TempDir()
	discard := slog.New(slog.DiscardHandler)
	rb := robot.New(robot.NewSim(), discard)
	f.Cleanup(func() { rb.Close() })
	mgr, err := apps.NewManager(apps.Config{
		DataDir: filepath.Join(dir, "data"), Toolchain: &python.Venv{Dir: filepath.Join(dir, "apps_venv"), BasePython: "false"},
		SDK: pysdk.Files, Robot: rb, Log: discard,
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(mgr.Close)
	return robotd.NewServer(robotd.ServerConfig{Apps: robotd.ManagerApps(mgr), Robot: rb, Log: discard, Token: fuzzToken})
}

const fuzzToken = "fuzz-token"

// serveFuzz sends one request to h as a local, non-browser client and returns the status and body.
func serveFuzz(h http.Handler, method, target string, body string) (int, http.Header, []byte) {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Host = "127.0.0.1:8000"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+fuzzToken) // httptest's peer is not on loopback
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	data, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, data
}

// checkDaemonAnswer fails t unless the answer has one of the documented statuses, is JSON, and an
// error answer says what is wrong in {"detail": ...}.
func checkDaemonAnswer(t *testing.T, what string, status int, header http.Header, data []byte, allowed ...int) {
	t.Helper()
	ok := false
	for _, s := range allowed {
		ok = ok || status == s
	}
	if !ok {
		t.Fatalf("%s: status %d, want one of %v: %s", what, status, allowed, data)
	}
	if ct := header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s: Content-Type %q: %s", what, ct, data)
	}
	if status >= 400 {
		var d struct{ Detail string }
		if err := json.Unmarshal(data, &d); err != nil || d.Detail == "" {
			t.Fatalf("%s: %d without a detail: %s", what, status, data)
		}
	}
}

// FuzzDaemonRequestBodies sends arbitrary bodies to every daemon route that reads one: the answer
// is a documented status (200, 400 refused, 404 unknown, 422 malformed), never a 500 or a panic.
func FuzzDaemonRequestBodies(f *testing.F) {
	for _, seed := range []string{
		`{"url": "/does/not/exist"}`, `{"url": 42}`, `{"url": "https://h/spaces/u/app", "revision": "zz"}`,
		`{"target_head_pose": {"x": 0.01, "yaw": 0.3}, "target_antennas": [0.1, -0.1], "target_body_yaw": 0.2}`,
		`{"head_pose": {"pitch": 0.1}, "antennas": [1, 2], "duration": 0.5, "interpolation": "cartoon"}`,
		`{"duration": 1e999}`, `{"uuid": "nope"}`, `{"samples": [0.5, -0.5, 2]}`, `{"file": "/etc/passwd"}`,
		`{"file": "/proc/self/status"}`, `{"antenna": "left", "delta": -3}`, `{"pid": -1, "client": "x"}`,
		`{"startup_app": null}`, `{"startup_app": "../../etc/passwd"}`, `{"startup_app": ["a"]}`,
		`[1, 2]`, `null`, `"x"`, ``, `{`, `{"url": "` + strings.Repeat("a", 3000) + `"}`,
		strings.Repeat("[", 20000), `{"samples": [` + strings.Repeat("1e308,", 100) + `1]}`,
	} {
		f.Add(seed)
	}
	api := fuzzDaemon(f)
	routes := []struct{ method, path string }{
		{"POST", "/api/apps/install"}, {"POST", "/api/apps/update"}, {"PUT", "/api/apps/startup-app"},
		{"POST", "/api/move/set_target"}, {"POST", "/api/move/goto"}, {"POST", "/api/move/stop"},
		{"POST", "/api/audio/push_sample"}, {"POST", "/api/audio/play_sound"},
		{"POST", "/api/sim/antenna-touch"}, {"POST", "/api/sessions"},
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, r := range routes {
			status, header, data := serveFuzz(api, r.method, r.path, body)
			// 429: sessions hold no slot, so fuzzed bodies open them until the one client's cap.
			checkDaemonAnswer(t, r.method+" "+r.path+" "+truncateForLog(body), status, header, data, 200, 400, 404, 422, 429)
		}
	})
}

// FuzzDaemonNamesInPaths puts arbitrary text where the API takes an app name, job ID, session ID,
// motor mode or source kind, escaped as a client would: with nothing installed, the answer is 404
// (or 422 for a mode or kind that is not one, 200 for one that is), never a 500, and nothing runs.
func FuzzDaemonNamesInPaths(f *testing.F) {
	for _, seed := range []string{
		"coop_app", "../../etc/passwd", "..", "%2e%2e", "a\x00b", "a;rm -rf /", "$(touch /tmp/x)", "`id`",
		"соор_app", "app\u202e", strings.Repeat("a", 5000), "enabled", "installed", "hf_space", "",
	} {
		f.Add(seed)
	}
	api := fuzzDaemon(f)
	f.Fuzz(func(t *testing.T, name string) {
		escaped := url.PathEscape(name)
		for _, r := range []struct {
			method, path string
			allowed      []int
		}{
			{"POST", "/api/apps/start-app/" + escaped, []int{404, 405}},
			{"POST", "/api/apps/remove/" + escaped, []int{404, 405}},
			{"GET", "/api/apps/job-status/" + escaped, []int{404, 405}},
			{"GET", "/api/apps/job-log/" + escaped, []int{404, 405}},
			{"POST", "/api/sessions/" + escaped + "/heartbeat", []int{404, 405}},
			{"DELETE", "/api/sessions/" + escaped, []int{404, 405}},
			{"POST", "/api/motors/set_mode/" + escaped, []int{200, 404, 405, 422}},
			{"GET", "/api/apps/list-available/" + escaped, []int{200, 404, 405, 422}},
		} {
			status, header, data := serveFuzz(api, r.method, r.path, "")
			if status == http.StatusTemporaryRedirect && path.Clean(unescaped(r.path)) != unescaped(r.path) {
				// ServeMux sends a path with "." or ".." segments (as the unescaped path has them)
				// to its cleaned form, on this server.
				if loc := header.Get("Location"); !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") {
					t.Fatalf("%s %s redirects off the daemon: %q", r.method, r.path, loc)
				}
				continue
			}
			checkDaemonAnswer(t, r.method+" "+truncateForLog(r.path), status, header, data, r.allowed...)
		}
		body, _ := json.Marshal(map[string]string{"startup_app": name})
		status, header, data := serveFuzz(api, "PUT", "/api/apps/startup-app", string(body))
		allowed := []int{400, 422} // 400: not installed, as the anchor answers
		if strings.TrimSpace(name) == "" {
			allowed = []int{200} // an empty name clears the startup app
		}
		checkDaemonAnswer(t, "PUT /api/apps/startup-app "+truncateForLog(string(body)), status, header, data, allowed...)
		if status, _, data := serveFuzz(api, "GET", "/api/apps/current-app-status", ""); status != 200 || strings.TrimSpace(string(data)) != "null" {
			t.Fatalf("an app runs after requests naming %q: %d %s", name, status, data)
		}
	})
}

func unescaped(p string) string {
	u, err := url.PathUnescape(p)
	if err != nil {
		return p
	}
	return u
}

func truncateForLog(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
