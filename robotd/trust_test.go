package robotd_test

// Identity proven by the kernel, not inferred (issue 30), through the built robot-daemon: another
// local user's closed connections get no trust, the owner's unix socket is the owner's alone, and
// an app's token drives the robot and its media only.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// nobodyExecutable copies this test binary where the user nobody can run it.
func nobodyExecutable(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "robotd-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "robotd.test")
	if err := os.WriteFile(exe, self, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(dir, 0o755)
	return exe
}

// nobodyRun is exe (nobodyExecutable) run as the user nobody, told spec as JSON in the environment
// variable env: TestMain runs the other user's side that env names (runRace, runFlood).
func nobodyRun(t *testing.T, exe, env string, spec any) *exec.Cmd {
	t.Helper()
	data, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", exe)
	cmd.Env = append(os.Environ(), env+"="+string(data))
	return cmd
}

// runSpec is the other user's side that nobodyRun started: run, with the spec it was told (2, said
// on stderr, when the spec is no JSON of its type).
func runSpec[T any](raw string, run func(T) int) int {
	var spec T
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return run(spec)
}

// raceSpec is what the race process is told: whom to send what, how often, from how many
// goroutines, and by when to be done.
type raceSpec struct {
	Addr     string    `json:"addr"`
	Request  string    `json:"request"`
	Conns    int       `json:"conns"`
	Workers  int       `json:"workers"`
	Deadline time.Time `json:"deadline"`
}

// runRace is the other user's side of TestClosedConnectionsOfAnotherUserGetNoTrust: spec.Conns
// connections from spec.Workers goroutines, each sending the request and closing at once, without
// reading: the client's socket becomes an orphaned FIN_WAIT2, then TIME_WAIT, mini-socket while
// the connection waits in the daemon's accept queue. It prints how many it sent.
func runRace(spec raceSpec) int {
	var sent, failed atomic.Int64
	var wg sync.WaitGroup
	for w := range spec.Workers {
		wg.Go(func() {
			for i := w; i < spec.Conns && time.Now().Before(spec.Deadline); i += spec.Workers {
				c, err := net.DialTimeout("tcp", spec.Addr, 2*time.Second)
				if err != nil {
					failed.Add(1)
					continue
				}
				if _, err := io.WriteString(c, spec.Request); err != nil {
					failed.Add(1)
				} else {
					sent.Add(1)
				}
				c.Close()
			}
		})
	}
	wg.Wait()
	fmt.Printf(`{"sent": %d, "failed": %d}`+"\n", sent.Load(), failed.Load())
	return 0
}

// Issue 30, item 1 (critical): another local user connects, sends a request and closes at once,
// 2,000 times from 4 goroutines. The daemon took some of those connections from its queue after
// the client's socket had become a TIME_WAIT mini-socket, which sock_diag reports as uid 0, and
// trusted root: the robot was renamed (and an app installed and started) in 3 of 3 tries. No
// identity comes from a TCP connection now: every one of them needs the token, and nothing changes.
func TestClosedConnectionsOfAnotherUserGetNoTrust(t *testing.T) {
	needOtherUser(t)
	d := startDaemonBinary(t)
	exe := nobodyExecutable(t)
	body := `{"name": "renamed-by-nobody"}`
	addr := strings.TrimPrefix(d.url, "http://")
	request := fmt.Sprintf("POST /api/daemon/robot-name HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		addr, len(body), body)
	deadline := time.Now().Add(90 * time.Second)
	for try := 1; try <= 3; try++ {
		race := nobodyRun(t, exe, "ROBOTD_TEST_RACE", raceSpec{Addr: addr, Request: request, Conns: 2000, Workers: 4, Deadline: deadline})
		out, err := race.CombinedOutput()
		if err != nil {
			t.Fatalf("the race as nobody: %v\n%s", err, out)
		}
		var got struct{ Sent, Failed int }
		if err := json.Unmarshal(out, &got); err != nil || got.Sent == 0 {
			t.Fatalf("the race printed %q (%v): it sent nothing", out, err)
		}
		// The daemon serves what is in its queue: ask it for the name once it has.
		time.Sleep(time.Second)
		var name struct {
			Name string `json:"name"`
		}
		if code := d.call("GET", "/api/daemon/robot-name", nil, &name); code != 200 {
			t.Fatalf("robot-name: %d", code)
		}
		data, _ := os.ReadFile(filepath.Join(d.dataDir, "robot-name"))
		t.Logf("try %d: nobody sent %d requests on connections it closed at once (%d failed); the robot's name: %q", try, got.Sent, got.Failed, name.Name)
		if name.Name == "renamed-by-nobody" || strings.Contains(string(data), "renamed-by-nobody") {
			t.Fatalf("try %d: another user's closed connections renamed the robot: a connection was trusted without the token", try)
		}
		if time.Now().After(deadline) {
			t.Fatal("the race did not finish within 90 s")
		}
	}
	if n := strings.Count(d.log.String(), "refused an unauthenticated request"); n == 0 {
		t.Error("the daemon refused none of the race's requests: did any reach it?")
	}
}

// ownerSocketClient is an HTTP client of the daemon's owner socket.
func ownerSocketClient(path string) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dialer net.Dialer
			return dialer.DialContext(ctx, "unix", path)
		},
	}}
}

// The owner's socket serves the owner with no token; over TCP the same user needs the token (no
// identity from a loopback connection); another user is closed at once by the socket even when the
// modes would let it connect (the kernel names the peer: SO_PEERCRED).
func TestOwnerSocketIsTheOwnersAlone(t *testing.T) {
	needOtherUser(t)
	d := startDaemonBinary(t)
	sock := filepath.Join(d.dataDir, "daemon.sock")
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatalf("no owner socket: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(d.dataDir); di.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode %v, want 0700", di.Mode().Perm())
	}

	// The README's form: curl --unix-socket, no token.
	out, err := exec.Command("curl", "-sS", "--fail-with-body", "--unix-socket", sock, "-X", "POST", "-H", "Content-Type: application/json",
		"-d", `{"name": "owner-renamed"}`, "http://localhost/api/daemon/robot-name").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"owner-renamed"`) {
		t.Fatalf("the owner through the socket: %v %s", err, out)
	}
	// The same user over TCP without the token: refused, saying how to authenticate.
	d.expectError("GET", "/api/apps/list", nil, 401, "Authorization: Bearer", "Authorization", "")
	d.expectError("GET", "/api/apps/list", nil, 401, "daemon.sock", "Authorization", "")

	// Another user, with the modes opened: connected by the kernel, closed by the daemon unanswered.
	for _, dir := range []string{filepath.Dir(d.dataDir), d.dataDir} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "curl", "-sS", "--max-time", "10",
		"--unix-socket", sock, "-X", "POST", "-H", "Content-Type: application/json", "-d", `{"name": "nobody-renamed"}`,
		"http://localhost/api/daemon/robot-name").CombinedOutput()
	if err == nil || strings.Contains(string(out), "nobody-renamed") {
		t.Fatalf("nobody on the owner socket: %v %s, want the connection closed unanswered", err, out)
	}
	var name struct {
		Name string `json:"name"`
	}
	d.call("GET", "/api/daemon/robot-name", nil, &name)
	if name.Name != "owner-renamed" {
		t.Fatalf("the robot's name is %q after nobody's try", name.Name)
	}
	// The refusal is logged once the connection is closed: curl may have ended a moment before.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(d.log.String(), "refused a connection to the owner socket"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the daemon did not log the refused peer")
		}
	}
	if !strings.Contains(d.log.String(), "the peer runs as uid 65534") {
		t.Errorf("the refusal does not name the peer's user:\n%s", d.log.String())
	}
}

// scopeProbe is an app that calls the daemon with the token it was given, as hostile code in an
// app would: what it may not do, and what it may. It writes what it got to RESULTS (a JSON object:
// its token, each call's status and detail, and whether the SDK moved the robot).
const scopeProbe = `"""Probes the daemon with the app's token."""

import json
import os
import threading
import urllib.error
import urllib.request

from robot_sdk import Robot, RobotApp

RESULTS = %q
CALLS = [
    ("POST", "/api/apps/install", {"url": "/tmp/anything"}),
    ("POST", "/api/apps/remove/coop_app", None),
    ("POST", "/api/apps/start-app/coop_app", None),
    ("POST", "/api/apps/stop-current-app", None),
    ("PUT", "/api/apps/startup-app", {"startup_app": "coop_app"}),
    ("GET", "/api/apps/list", None),
    ("POST", "/api/daemon/robot-name", {"name": "renamed-by-an-app"}),
    ("POST", "/api/daemon/stop", None),
    ("POST", "/api/hf-auth/save-token", {"token": "hf_planted"}),
    ("GET", "/api/hf-auth/status", None),
    ("DELETE", "/api/hf-auth/token", None),
    ("GET", "/api/state/full", None),
    ("POST", "/api/move/goto", {"antennas": [0.3, -0.3], "duration": 0.2}),
    ("GET", "/api/kinematics/info", None),
    ("GET", "/api/daemon/status", None),
    ("POST", "/api/media/wobbling/enable", None),
    ("GET", "/api/media/status", None),
]


class ScopeProbe(RobotApp):
    custom_app_url = None

    def run(self, robot: Robot, stop_event: threading.Event) -> None:
        url, token = os.environ["ROBOT_DAEMON_URL"], os.environ.get("ROBOT_DAEMON_TOKEN", "")
        out = {"token": token, "calls": {}}
        for method, path, body in CALLS:
            data = json.dumps(body).encode() if body is not None else None
            req = urllib.request.Request(url + path, data=data, method=method,
                                         headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    status, detail = r.status, ""
            except urllib.error.HTTPError as e:
                status, detail = e.code, json.loads(e.read() or b"{}").get("detail", "")
            out["calls"][method + " " + path] = [status, detail]
        # The SDK itself, as the app's code uses it.
        robot.set_target(antennas=[0.2, -0.2])
        out["sdk"] = "ok"
        with open(RESULTS + ".tmp", "w") as f:
            json.dump(out, f)
        os.rename(RESULTS + ".tmp", RESULTS)
        stop_event.wait()


if __name__ == "__main__":
    app = ScopeProbe()
    try:
        app.wrapped_run()
    except KeyboardInterrupt:
        app.stop()
`

// writeScopeProbe writes the scope_probe app package into a temporary directory; it writes its
// findings to results.
func writeScopeProbe(t *testing.T, results string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "scope_probe")
	files := map[string]string{
		"pyproject.toml": `[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "scope-probe"
version = "1.0.0"
requires-python = ">=3.9"

[project.entry-points.robot_apps]
scope_probe = "scope_probe.main:ScopeProbe"

[tool.setuptools]
packages = ["scope_probe"]
`,
		"README.md":               "---\ntitle: scope probe\ntags: [robot_python_app]\n---\n",
		"scope_probe/__init__.py": "",
		"scope_probe/main.py":     fmt.Sprintf(scopeProbe, results),
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A running app gets a token of its own, minted at its start, never the owner's: it drives the
// robot and its media, and gets 403 naming the scope for what installs, starts or removes apps,
// changes the daemon or its hub login. The token ends with the app.
func TestAppTokenDrivesTheRobotOnly(t *testing.T) {
	d := startDaemonBinary(t)
	d.install("coop_app")
	results := filepath.Join(t.TempDir(), "probe.json")
	probe := writeScopeProbe(t, results)
	var created struct {
		JobID string `json:"job_id"`
	}
	if code := d.call("POST", "/api/apps/install", map[string]string{"url": probe}, &created); code != 200 {
		t.Fatalf("install: %d", code)
	}
	if j := d.waitJob(created.JobID); j.Status != "done" {
		t.Fatalf("install: %s %v\n%s", j.Status, j.Error, strings.Join(j.Logs, "\n"))
	}
	if code := d.call("POST", "/api/apps/start-app/scope_probe", nil, nil); code != 200 {
		t.Fatalf("start: %d", code)
	}
	var found struct {
		Token string            `json:"token"`
		Calls map[string][2]any `json:"calls"`
		SDK   string            `json:"sdk"`
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if data, err := os.ReadFile(results); err == nil {
			if err := json.Unmarshal(data, &found); err != nil {
				t.Fatalf("the probe wrote %q: %v", data, err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the probe did not finish:\n%s", d.log.String())
		}
	}
	probes := map[string]string{} // "METHOD path" -> "status detail"
	for call, got := range found.Calls {
		status, _ := got[0].(float64)
		detail, _ := got[1].(string)
		probes[call] = fmt.Sprintf("%d %s", int(status), detail)
	}
	appToken := found.Token
	if appToken == "" || appToken == d.token {
		t.Fatalf("the app's token %q: want one of its own, not the owner's", appToken)
	}
	if found.SDK != "ok" {
		t.Errorf("the SDK in the app: %q", found.SDK)
	}
	scopes := map[string]string{
		"POST /api/apps/install": "apps", "POST /api/apps/remove/coop_app": "apps", "POST /api/apps/start-app/coop_app": "apps",
		"POST /api/apps/stop-current-app": "apps", "PUT /api/apps/startup-app": "apps", "GET /api/apps/list": "apps",
		"POST /api/daemon/robot-name": "daemon", "POST /api/daemon/stop": "daemon", "POST /api/hf-auth/save-token": "daemon",
		"GET /api/hf-auth/status": "daemon", "DELETE /api/hf-auth/token": "daemon",
	}
	for call, scope := range scopes {
		got := probes[call]
		if !strings.HasPrefix(got, "403 ") || !strings.Contains(got, `lacks the scope "`+scope+`"`) {
			t.Errorf("the app's %s: %q, want 403 naming the scope %q", call, got, scope)
		}
	}
	for _, call := range []string{"GET /api/state/full", "POST /api/move/goto", "GET /api/kinematics/info", "GET /api/daemon/status",
		"POST /api/media/wobbling/enable", "GET /api/media/status"} {
		if got := probes[call]; !strings.HasPrefix(got, "200") {
			t.Errorf("the app's %s: %q, want 200 (robot and media are its scopes)", call, got)
		}
	}
	if _, ok := d.list()["coop_app"]; !ok {
		t.Error("the app removed coop_app")
	}
	var name struct {
		Name string `json:"name"`
	}
	if d.call("GET", "/api/daemon/robot-name", nil, &name); name.Name == "renamed-by-an-app" {
		t.Error("the app renamed the robot")
	}
	if st := d.status(); st == nil || st.Info.Name != "scope_probe" || st.State != "running" {
		t.Errorf("the probe stopped or replaced itself: %+v", st)
	}
	// The token ends with the run.
	d.stopApp()
	d.expectError("GET", "/api/state/full", nil, 401, "not this daemon's", "Authorization", "Bearer "+appToken)
	if strings.Contains(d.log.String(), d.token) {
		t.Error("the owner's token appears in the daemon's log")
	}
}
