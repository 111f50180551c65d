package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/hubtest"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/internal/hubemu/localhub"
	"github.com/robothub/robothub/internal/testkit/syncbuf"

	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/robotd/cmd/robotdaemon"
)

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// testDaemon is a robot-daemon --sim run in-process, its apps venv shared by the package's tests.
type testDaemon struct {
	t   testing.TB
	url string
	log *syncbuf.Buffer
}

// startDaemon runs the daemon on a free port with hubURL as its hub and waits for /healthz. Apps
// reach it through ROBOT_DAEMON_URL, which they inherit from the test process.
func startDaemon(t testing.TB, hubURL string, extraArgs ...string) *testDaemon {
	skipShort(t)
	t.Helper()
	port := freePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	t.Setenv("ROBOT_DAEMON_URL", url)
	d := &testDaemon{t: t, url: url, log: &syncbuf.Buffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	dataDir := t.TempDir()
	args := []string{"robot-daemon", "--sim", "--port", strconv.Itoa(port), "--data-dir", dataDir,
		"--apps-venv", filepath.Join(filepath.Dir(testCache), "apps_venv"), "--hub-url", hubURL, "--stop-timeout", "5s", "--log-level", "debug",
		// The generated app builds its poses with numpy, a dependency of the SDK: Debian's, as on
		// a robot without a package index.
		"--python", "/usr/bin/python3", "--system-site-packages"}
	args = append(args, extraArgs...)
	go func() { done <- robotdaemon.Run(ctx, args, os.Getenv, io.Discard, d.log) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("daemon did not shut down")
		}
		if t.Failed() {
			t.Logf("daemon log:\n%s", tail(d.log.String(), 60))
		}
	})
	deadline := time.Now().Add(3 * time.Minute) // the first start creates the apps venv
	for {
		if resp, err := http.Get(url + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				token, err := os.ReadFile(filepath.Join(dataDir, "api-token"))
				if err != nil {
					t.Fatalf("the daemon's token: %v", err)
				}
				daemonTokens.Store(url, strings.TrimSpace(string(token)))
				return d
			}
		}
		select {
		case err := <-done:
			t.Fatalf("daemon exited: %v\n%s", err, d.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon did not answer /healthz\n%s", d.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// daemonTokens holds the owner token of each daemon a test started, by its URL: callJSON sends it
// to that daemon (over TCP every request needs it).
var daemonTokens sync.Map

// ownerToken is the token of the daemon that url is a route of ("" when none).
func ownerToken(url string) string {
	token := ""
	daemonTokens.Range(func(k, v any) bool {
		if strings.HasPrefix(url, k.(string)+"/") {
			token = v.(string)
			return false
		}
		return true
	})
	return token
}

// callJSON sends a JSON request and decodes the answer into out (if not nil); it returns the status.
func callJSON(t testing.TB, method, url string, body, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token := ownerToken(url); token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, url, resp.StatusCode, data, err)
		}
	}
	return resp.StatusCode
}

type robotState struct {
	HeadPose struct {
		Yaw float64 `json:"yaw"`
	} `json:"head_pose"`
	Antennas       []float64 `json:"antennas_position"`
	TargetAntennas []float64 `json:"target_antennas_position"`
}

type appStatus struct {
	Info struct {
		Name string `json:"name"`
	} `json:"info"`
	State string  `json:"state"`
	Error *string `json:"error"`
}

// install installs the app at url through the daemon and waits for the job.
func (d *testDaemon) install(url string) {
	d.t.Helper()
	var job struct {
		JobID string `json:"job_id"`
	}
	if code := callJSON(d.t, "POST", d.url+"/api/apps/install", map[string]string{"url": url}, &job); code != 200 {
		d.t.Fatalf("install: %d", code)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var j struct {
			Status string   `json:"status"`
			Error  *string  `json:"error"`
			Logs   []string `json:"logs"`
		}
		callJSON(d.t, "GET", d.url+"/api/apps/job-status/"+job.JobID, nil, &j)
		switch j.Status {
		case "done":
			return
		case "error":
			d.t.Fatalf("install of %s failed: %v\n%s", url, deref(j.Error), strings.Join(j.Logs, "\n"))
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("install of %s did not finish", url)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// remove uninstalls an app, so that the shared apps venv stays as it was.
// stopApp stops the current app: the daemon answers null, as the public daemon does, and logs
// how the app ended; an app that did not end cleanly fails the test.
func (d *testDaemon) stopApp(t testing.TB) {
	t.Helper()
	var body json.RawMessage
	if code := callJSON(t, "POST", d.url+"/api/apps/stop-current-app", nil, &body); code != 200 || string(body) != "null" {
		t.Fatalf("stop-current-app: %d %s, want 200 null", code, body)
	}
	logText := d.log.String()
	i := strings.LastIndex(logText, `msg="app stopped"`)
	if i < 0 {
		t.Fatalf("the daemon did not log the stop:\n%s", logText)
	}
	if line, _, _ := strings.Cut(logText[i:], "\n"); !strings.Contains(line, " state=done") {
		t.Fatalf("the app did not end cleanly: %s", line)
	}
}

func (d *testDaemon) remove(name string) {
	var job struct {
		JobID string `json:"job_id"`
	}
	if callJSON(d.t, "POST", d.url+"/api/apps/remove/"+name, nil, &job) != 200 {
		return
	}
	for range 600 {
		var j struct {
			Status string `json:"status"`
		}
		callJSON(d.t, "GET", d.url+"/api/apps/job-status/"+job.JobID, nil, &j)
		if j.Status == "done" || j.Status == "failed" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startAndWaitRunning starts the app and returns how long it took to be running (its SDK connected).
func (d *testDaemon) startAndWaitRunning(name string) time.Duration {
	d.t.Helper()
	start := time.Now()
	var st appStatus
	if code := callJSON(d.t, "POST", d.url+"/api/apps/start-app/"+name, nil, &st); code != 200 {
		d.t.Fatalf("start-app %s: %d %+v", name, code, st)
	}
	for {
		callJSON(d.t, "GET", d.url+"/api/apps/current-app-status", nil, &st)
		if st.State == "running" {
			return time.Since(start)
		}
		if st.State == "error" || st.State == "done" {
			d.t.Fatalf("app %s ended: %s %v", name, st.State, deref(st.Error))
		}
		if time.Since(start) > 30*time.Second {
			d.t.Fatalf("app %s not running after 30s: %+v", name, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// antennaSpread watches the robot for a while and returns how far the left antenna travelled
// between its extremes.
func (d *testDaemon) antennaSpread(watch time.Duration) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for end := time.Now().Add(watch); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		var s robotState
		callJSON(d.t, "GET", d.url+"/api/state/full", nil, &s)
		lo, hi = math.Min(lo, s.Antennas[0]), math.Max(hi, s.Antennas[0])
	}
	return hi - lo
}

// localHub is the project's hub emulator (internal/hubemu) served on a loopback port, with a write and
// a read token of the user alice.
type localHub struct {
	url, writeToken, readToken string
}

func startLocalHub(t *testing.T) *localHub {
	t.Helper()
	emu := hubtest.Start(t, localhub.Config{}, hubtest.WithPublicURL())
	h := &localHub{url: emu.URL}
	h.writeToken, _ = emu.Token(t, "alice", hubemu.RoleWrite)
	h.readToken, _ = emu.Token(t, "alice", hubemu.RoleRead)
	return h
}

// End to end, each step real: create, check, publish to the local hub (internal/hubemu), the daemon
// installs from the space URL, start, the app moves the simulated robot and answers on its web
// page, stop.
func TestEndToEndCreateCheckPublishInstallRun(t *testing.T) {
	h := startLocalHub(t)
	webPort := freePort(t)
	dest := t.TempDir()

	r := runCLI(t, nil, "create", "wave_e2e", dest, "--web-port", strconv.Itoa(webPort))
	if r.code != 0 {
		t.Fatalf("create: %s", r.stderr)
	}
	dir := filepath.Join(dest, "wave_e2e")
	if r = runCLI(t, nil, "check", dir); r.code != 0 {
		t.Fatalf("check:\n%s\n%s", r.stdout, r.stderr)
	}
	// A read token is refused before anything happens.
	r = runCLI(t, map[string]string{"HF_ENDPOINT": h.url, "HF_TOKEN": h.readToken}, "publish", dir)
	if r.code != exitError || !strings.Contains(r.stderr, "(user alice) has read permission: publishing needs write permission") {
		t.Fatalf("publish with a read token: exit %d\n%s", r.code, r.stderr)
	}
	r = runCLI(t, map[string]string{"HF_ENDPOINT": h.url, "HF_TOKEN": h.writeToken}, "publish", "--nocheck", dir)
	spaceURL := h.url + "/spaces/alice/wave_e2e"
	if r.code != 0 || !strings.Contains(r.stdout, "Created the space alice/wave_e2e") || !strings.Contains(r.stdout, "Published alice/wave_e2e: "+spaceURL) {
		t.Fatalf("publish:\n%s\n%s", r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr+readFile(t, filepath.Join(dir, ".git", "config")), h.writeToken) {
		t.Fatal("the token shows in the output or in .git/config")
	}

	d := startDaemon(t, h.url)
	t.Cleanup(func() { d.remove("wave_e2e") })

	// The hub's catalog lists the space: its README carries the robot_python_app tag.
	var catalog []struct {
		Name        string `json:"name"`
		URL         string `json:"url"`
		Description string `json:"description"`
	}
	callJSON(t, "GET", d.url+"/api/apps/list-available/hf_space", nil, &catalog)
	if len(catalog) != 1 || catalog[0].Name != "wave_e2e" || catalog[0].URL != spaceURL {
		t.Fatalf("catalog %+v", catalog)
	}

	d.install(spaceURL)
	var list []struct {
		Name  string `json:"name"`
		Extra struct {
			CustomAppURL *string `json:"custom_app_url"`
			Source       string  `json:"source"`
		} `json:"extra"`
	}
	callJSON(t, "GET", d.url+"/api/apps/list", nil, &list)
	found := false
	for _, a := range list {
		if a.Name == "wave_e2e" {
			found = true
			if a.Extra.Source != spaceURL || a.Extra.CustomAppURL == nil || *a.Extra.CustomAppURL != fmt.Sprintf("http://0.0.0.0:%d", webPort) {
				t.Fatalf("installed app %+v", a)
			}
		}
	}
	if !found {
		t.Fatalf("wave_e2e not installed: %+v", list)
	}

	// The daemon's wake-up moves the antennas for a moment after its start, which a fast install
	// no longer outlasts: once they are still, the installed app must not be moving them.
	wait.For(t, 10*time.Second, "the antennas still before the app runs (the installed app must not run yet)", func() bool {
		return d.antennaSpread(300*time.Millisecond) <= 0.01
	})
	took := d.startAndWaitRunning("wave_e2e")
	t.Logf("running (SDK connected) %s after start-app", took)
	if spread := d.antennaSpread(1500 * time.Millisecond); spread < 0.3 {
		t.Fatalf("the app does not wave the antennas: they moved %.3f rad in 1.5 s", spread)
	}

	// The app's web page: its static page and its POST route.
	web := fmt.Sprintf("http://127.0.0.1:%d", webPort)
	resp, err := http.Get(web + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "<h1>Wave E2e</h1>") {
		t.Fatalf("web page: %d\n%s", resp.StatusCode, page)
	}
	var settings map[string]any
	if code := callJSON(t, "POST", web+"/api/settings", map[string]any{"waving": false, "amplitude_deg": 10}, &settings); code != 200 ||
		settings["status"] != "ok" || settings["waving"] != false || settings["amplitude_deg"] != 10.0 {
		t.Fatalf("POST /api/settings: %d %v", code, settings)
	}
	var problem map[string]string
	if code := callJSON(t, "POST", web+"/api/settings", map[string]any{"amplitude_deg": 500}, &problem); code != 422 ||
		problem["detail"] != "amplitude_deg: a number of degrees from 0 to 90" {
		t.Fatalf("POST /api/settings with a bad amplitude: %d %v", code, problem)
	}
	// The antennas settle on the last target, then stay: still over half a second, within 10 s.
	wait.For(t, 10*time.Second, "the antennas still after waving was turned off on the web page", func() bool {
		return d.antennaSpread(500*time.Millisecond) <= 0.01
	})

	d.stopApp(t)
	if _, err := http.Get(web + "/"); err == nil {
		t.Fatal("the web page still answers after the app stopped")
	}
}
