package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/syncbuf"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestDevPushUpdatesTheRobot is the whole system on one machine, each step real: robothub dev runs
// the local hub, the embedded MQTT broker, the receiver and the simulated robot robot-1; a second
// robot joins the fleet as the README's quick start has it (robot-daemon --sim --fleet ... --port);
// an app is pushed to a space with git, installed on both robots and started on the first; a second
// push reaches both robots through the hub's webhook, the receiver's fleet route and the broker, and
// robothub fleet wait and fleet ls say so.
func TestDevPushUpdatesTheRobot(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole system")
	}
	dir := t.TempDir()
	hubAddr, recvAddr, brokerAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	_, daemonPort, _ := net.SplitHostPort(freeAddr(t))
	t.Setenv("ROBOT_DAEMON_URL", "http://127.0.0.1:"+daemonPort) // apps find the daemon through it
	p := start(t, map[string]string{"HOME": dir},
		"dev", "--data-dir", filepath.Join(dir, "dev"), "--hub-addr", hubAddr, "--receiver-addr", recvAddr, "--daemon-port", daemonPort,
		"--broker-addr", brokerAddr)
	p.waitForWithin(t, 3*time.Minute, `robothub dev is running`)
	p.waitFor(t, `MQTT broker\s+mqtt://`+brokerAddr)
	hubURL, daemonURL, brokerURL := "http://"+hubAddr, "http://127.0.0.1:"+daemonPort, "mqtt://"+brokerAddr

	// The quick start's second robot: robot-daemon --sim --fleet mqtt://127.0.0.1:1883 --fleet-id robot-2 --port 8001.
	_, port2, _ := net.SplitHostPort(freeAddr(t))
	robot2URL := "http://127.0.0.1:" + port2
	ctx2, stop2 := context.WithCancel(context.Background())
	robot2Done := make(chan error, 1)
	robot2Log := &syncbuf.Buffer{}
	go func() {
		robot2Done <- runRobotDaemon(ctx2, []string{"robot-daemon", "--sim", "--fleet", brokerURL, "--fleet-id", "robot-2", "--port", port2,
			"--data-dir", filepath.Join(dir, "robot-2"), "--hub-url", hubURL}, os.Getenv, io.Discard, robot2Log)
	}()
	t.Cleanup(func() {
		stop2()
		if err := <-robot2Done; err != nil {
			t.Errorf("robot-2: %v", err)
		}
		if t.Failed() {
			t.Logf("robot-2's log:\n%s", robot2Log)
		}
	})
	token, err := os.ReadFile(filepath.Join(dir, "dev", "hub", "token"))
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSpace(string(token))

	// Publish an app to a space: create it through the API, push it with git.
	ctx := context.Background()
	client, err := hub.New(hubURL, hub.WithToken(tok))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateRepo(ctx, hub.CreateRepoRequest{Type: "space", ID: "local/catalog_app", SDK: "static"}); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "catalog_app")
	if err := os.CopyFS(work, os.DirFS("../../core/apps/testdata/apps/catalog_app")); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "http.extraHeader=Authorization: Bearer " + tok}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args[0], err, out)
		}
		return strings.TrimSpace(string(out))
	}
	space := hubURL + "/spaces/local/catalog_app"
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "first version")
	git("push", "-q", space, "main")

	// Install it on both robots and start it on robot-1.
	daemon := &http.Client{Timeout: 30 * time.Second}
	callOn := func(base, method, path string, body, out any) int {
		t.Helper()
		var rd *strings.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = strings.NewReader(string(b))
		} else {
			rd = strings.NewReader("")
		}
		req, _ := http.NewRequest(method, base+path, rd)
		req.Header.Set("Content-Type", "application/json")
		resp, err := daemon.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			_ = json.NewDecoder(resp.Body).Decode(out)
		}
		return resp.StatusCode
	}
	call := func(method, path string, body, out any) int {
		t.Helper()
		return callOn(daemonURL, method, path, body, out)
	}
	waitUntil(t, 3*time.Minute, "robot-2 serving", func() bool {
		resp, err := daemon.Get(robot2URL + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})
	var job struct {
		JobID string `json:"job_id"`
	}
	for _, base := range []string{daemonURL, robot2URL} {
		if code := callOn(base, "POST", "/api/apps/install", map[string]string{"url": space}, &job); code != 200 {
			t.Fatalf("install on %s: %d", base, code)
		}
	}
	type appInfo struct {
		Name  string
		Extra struct{ Version, Revision string }
	}
	installedOn := func(base string) *appInfo {
		var list []appInfo
		callOn(base, "GET", "/api/apps/list", nil, &list)
		for i := range list {
			if list[i].Name == "catalog_app" {
				return &list[i]
			}
		}
		return nil
	}
	installedApp := func() *appInfo { return installedOn(daemonURL) }
	first := git("rev-parse", "HEAD")
	waitUntil(t, 3*time.Minute, "catalog_app installed at the first commit", func() bool {
		a := installedApp()
		return a != nil && a.Extra.Revision == first
	})
	if code := call("POST", "/api/apps/start-app/catalog_app", nil, nil); code != 200 {
		t.Fatalf("start-app: %d", code)
	}
	type status struct {
		State string
		Info  struct {
			Name  string
			Extra struct{ Version string }
		}
	}
	current := func() status {
		var st status
		call("GET", "/api/apps/current-app-status", nil, &st)
		return st
	}
	waitUntil(t, 30*time.Second, "catalog_app running", func() bool { return current().State == "running" })

	// A plain git push of a new version: the robot installs and restarts it by itself.
	pyproject := filepath.Join(work, "pyproject.toml")
	b, _ := os.ReadFile(pyproject)
	if err := os.WriteFile(pyproject, []byte(strings.Replace(string(b), `version = "1.0.0"`, `version = "1.1.0"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	git("commit", "-q", "-am", "second version")
	pushed := time.Now()
	git("push", "-q", space, "main")
	second := git("rev-parse", "HEAD")
	waitUntil(t, 2*time.Minute, "the robot running the pushed version", func() bool {
		a, st := installedApp(), current()
		return a != nil && a.Extra.Revision == second && st.State == "running" && st.Info.Extra.Version == "1.1.0"
	})
	t.Logf("push to the robot running the new version: %s", time.Since(pushed).Round(time.Millisecond))
	waitUntil(t, 2*time.Minute, "robot-2 at the pushed version", func() bool {
		a := installedOn(robot2URL)
		return a != nil && a.Extra.Revision == second && a.Extra.Version == "1.1.0"
	})

	// The operator's view through the broker.
	fleetEnv := map[string]string{"ROBOTHUB_FLEET_URL": brokerURL}
	code, out, errOut := runCLI(t, fleetEnv, "", "fleet", "wait", "--space", "local/catalog_app", "--revision", second[:12], "--timeout", "1m")
	if code != 0 || !strings.Contains(out, "2 robot(s) run local/catalog_app at "+second[:7]+": robot-1, robot-2") {
		t.Fatalf("fleet wait: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, fleetEnv, "", "fleet", "ls")
	for _, want := range []string{"ROBOT", "robot-1", "robot-2", "catalog_app@" + second[:7], "done local/catalog_app@" + second[:7]} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("fleet ls: exit %d, no %q in\n%s%s", code, want, out, errOut)
		}
	}
	var robots []struct {
		Robot   string `json:"robot"`
		Online  bool   `json:"online"`
		Running string `json:"running"`
	}
	code, out, _ = runCLI(t, fleetEnv, "", "fleet", "ls", "--format", "json")
	if err := json.Unmarshal([]byte(out), &robots); code != 0 || err != nil || len(robots) != 2 || !robots[0].Online || robots[0].Running != "catalog_app" || robots[1].Running != "" {
		t.Fatalf("fleet ls --format json: exit %d, %v: %s", code, err, out)
	}
	// A revision nobody runs: exit 1 naming the late robots.
	code, _, errOut = runCLI(t, fleetEnv, "", "fleet", "wait", "--space", "local/catalog_app", "--revision", first, "--timeout", "1s")
	if code != 1 || !strings.Contains(errOut, "late: robot-1, robot-2") {
		t.Fatalf("fleet wait for the old revision: exit %d: %s", code, errOut)
	}

	if code := p.stop(t); code != 0 {
		t.Errorf("robothub dev exited with %d after Ctrl-C\n%s", code, p.stderr)
	}
	if !strings.Contains(p.stdout.String(), "robothub dev stopped.") {
		t.Errorf("no clean stop:\n%s", p.stdout)
	}
}

func waitUntil(t *testing.T, timeout time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
