package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/cli/robothub-server/hubcmd"
	"github.com/robothub/robothub/core/hub"
)

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// devLoop is robothub dev running on free ports with an app (catalog_app) in a space of its hub,
// pushed there with git: the loop of the README's quick start.
type devLoop struct {
	tb              testing.TB
	dir, work, tok  string
	daemonToken     string // the robot daemon's owner token, from its data dir
	hubAddr         string
	recvAddr        string
	hubURL, space   string
	daemonURL       string
	p               *program
	daemon          *http.Client
	pyproject, orig string
}

// startDev runs robothub dev on data dir dir, on free ports.
func startDev(tb testing.TB, dir string) *devLoop {
	d := &devLoop{tb: tb, dir: dir, work: filepath.Join(dir, "catalog_app"), daemon: &http.Client{Timeout: 30 * time.Second}}
	d.hubAddr, d.recvAddr = freeAddr(tb), freeAddr(tb)
	brokerAddr := freeAddr(tb) // robothub dev's embedded MQTT broker (default 127.0.0.1:1883)
	_, daemonPort, _ := net.SplitHostPort(freeAddr(tb))
	tb.Setenv("ROBOT_DAEMON_URL", "http://127.0.0.1:"+daemonPort) // apps find the daemon through it
	d.p = start(tb, map[string]string{"HOME": dir},
		"dev", "--data-dir", filepath.Join(dir, "dev"), "--hub-addr", d.hubAddr, "--receiver-addr", d.recvAddr, "--daemon-port", daemonPort,
		// The SDK's numpy, scipy and FastAPI are Debian's here: no Python index is reachable.
		"--python", "/usr/bin/python3", "--system-site-packages", "--broker-addr", brokerAddr)
	d.p.waitForWithin(tb, 3*time.Minute, `robothub dev is running`)
	d.hubURL, d.daemonURL = "http://"+d.hubAddr, "http://127.0.0.1:"+daemonPort
	d.space = d.hubURL + "/spaces/local/catalog_app"
	token, err := os.ReadFile(filepath.Join(dir, "dev", "hub", "token"))
	if err != nil {
		tb.Fatal(err)
	}
	d.tok = strings.TrimSpace(string(token))
	daemonToken, err := os.ReadFile(filepath.Join(dir, "dev", "robot", "api-token"))
	if err != nil {
		tb.Fatal(err)
	}
	d.daemonToken = strings.TrimSpace(string(daemonToken))
	return d
}

// publish creates the space and pushes the app's first version to it with git.
func (d *devLoop) publish() {
	client, err := hub.New(d.hubURL, hub.WithToken(d.tok))
	if err != nil {
		d.tb.Fatal(err)
	}
	if _, err := client.CreateRepo(context.Background(), hub.CreateRepoRequest{Type: "space", ID: "local/catalog_app", SDK: "static"}); err != nil {
		d.tb.Fatal(err)
	}
	if err := os.CopyFS(d.work, os.DirFS("../../core/apps/testdata/apps/catalog_app")); err != nil {
		d.tb.Fatal(err)
	}
	d.pyproject = filepath.Join(d.work, "pyproject.toml")
	b, err := os.ReadFile(d.pyproject)
	if err != nil {
		d.tb.Fatal(err)
	}
	d.orig = string(b)
	d.git("init", "-q", "-b", "main")
	d.git("add", ".")
	d.git("commit", "-q", "-m", "first version")
	d.git("push", "-q", d.space, "main")
}

// commitVersion commits the app at version (its pyproject.toml's) and returns the commit.
func (d *devLoop) commitVersion(version string) string {
	if err := os.WriteFile(d.pyproject, []byte(strings.Replace(d.orig, `version = "1.0.0"`, `version = "`+version+`"`, 1)), 0o644); err != nil {
		d.tb.Fatal(err)
	}
	d.git("commit", "-q", "-am", "version "+version)
	return d.git("rev-parse", "HEAD")
}

func (d *devLoop) git(args ...string) string {
	d.tb.Helper()
	cmd := exec.Command("git", append([]string{"-c", "http.extraHeader=Authorization: Bearer " + d.tok}, args...)...)
	cmd.Dir = d.work
	cmd.Env = append(os.Environ(), "HOME="+d.dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		d.tb.Fatalf("git %v: %v\n%s", args[0], err, out)
	}
	return strings.TrimSpace(string(out))
}

// call sends a request to the robot daemon and decodes its JSON answer into out.
func (d *devLoop) call(method, path string, body, out any) int {
	d.tb.Helper()
	var rd *strings.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	} else {
		rd = strings.NewReader("")
	}
	req, _ := http.NewRequest(method, d.daemonURL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+d.daemonToken)
	resp, err := d.daemon.Do(req)
	if err != nil {
		d.tb.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		_ = json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

type devApp struct {
	Name  string
	URL   string
	Extra struct{ Version, Revision string }
}

// installed is catalog_app as /api/apps/list shows it, nil when it is not installed.
func (d *devLoop) installed() *devApp {
	var list []devApp
	d.call("GET", "/api/apps/list", nil, &list)
	for i := range list {
		if list[i].Name == "catalog_app" {
			return &list[i]
		}
	}
	return nil
}

type devStatus struct {
	State string
	Info  struct {
		Name  string
		Extra struct{ Version, Revision string }
	}
}

func (d *devLoop) current() devStatus {
	var st devStatus
	d.call("GET", "/api/apps/current-app-status", nil, &st)
	return st
}

// installAndStart installs the app from its space (waiting for it) and starts it.
func (d *devLoop) installAndStart() {
	var job struct {
		JobID  string `json:"job_id"`
		Detail string `json:"detail"`
	}
	if code := d.call("POST", "/api/apps/install?wait=true", map[string]string{"url": d.space}, &job); code != 200 {
		d.tb.Fatalf("install: %d %s", code, job.Detail)
	}
	if code := d.call("POST", "/api/apps/start-app/catalog_app", nil, nil); code != 200 {
		d.tb.Fatalf("start-app: %d", code)
	}
	wait.For(d.tb, 30*time.Second, "catalog_app running", func() bool { return d.current().State == "running" })
}

// runsVersion reports whether the robot runs catalog_app at version, installed from commit rev.
func (d *devLoop) runsVersion(version, rev string) bool {
	a, st := d.installed(), d.current()
	return a != nil && a.Extra.Revision == rev && st.State == "running" && st.Info.Extra.Version == version
}

// TestDevPushUpdatesTheRobot is the whole system on one machine, each step real: robothub dev runs
// the local hub, the receiver and the simulated robot; an app is pushed to a space with git, installed
// on the robot and started; a second push reaches the robot through the hub's webhook and the
// receiver's robot-update route, and the robot runs the new version.
func TestDevPushUpdatesTheRobot(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole system")
	}
	dir := t.TempDir()
	d := startDev(t, dir)
	d.publish()
	first := d.git("rev-parse", "HEAD")
	d.installAndStart()
	if a := d.installed(); a == nil || a.Extra.Revision != first {
		t.Fatalf("installed at %+v, want the first commit %s", a, first)
	}

	// A plain git push of a new version: the robot installs and restarts it by itself.
	second := d.commitVersion("1.1.0")
	pushed := time.Now()
	d.git("push", "-q", d.space, "main")
	wait.For(t, 2*time.Minute, "the robot running the pushed version", func() bool { return d.runsVersion("1.1.0", second) })
	t.Logf("push to the robot running the new version: %s", time.Since(pushed).Round(time.Millisecond))

	if code := d.p.stop(t); code != 0 {
		t.Errorf("robothub dev exited with %d after Ctrl-C\n%s", code, d.p.stderr)
	}
	if !strings.Contains(d.p.stdout.String(), "robothub dev stopped.") {
		t.Errorf("no clean stop:\n%s", d.p.stdout)
	}

	// The same data dir on other ports (issue 24: the app still cloned from the old hub port and
	// failed, the webhook kept delivering to the old receiver, and nothing said so). A push now
	// reaches the robot as before, and the app names the hub where it is now.
	moved := startDev(t, dir)
	moved.work, moved.pyproject, moved.orig = d.work, d.pyproject, d.orig
	third := moved.commitVersion("1.2.0")
	moved.git("push", "-q", moved.space, "main")
	wait.For(t, 2*time.Minute, "the robot updated from the hub on its new port", func() bool {
		a := moved.installed()
		return a != nil && a.Extra.Revision == third && a.Extra.Version == "1.2.0"
	})
	if a := moved.installed(); a.URL != moved.space {
		t.Errorf("after the move the app comes from %s, want %s", a.URL, moved.space)
	}
	// One webhook, to this run's receiver: none left delivering to the old port.
	client, err := hub.New(moved.hubURL, hub.WithToken(moved.tok))
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := client.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 1 || hooks[0].URL != "http://"+moved.recvAddr+"/webhooks/"+devFleetRoute {
		t.Errorf("the hub's webhooks after the move: %+v", hooks)
	}
	if code := moved.p.stop(t); code != 0 {
		t.Errorf("robothub dev on new ports exited with %d after Ctrl-C\n%s", code, moved.p.stderr)
	}
}

// A newly published app appears in the robot's app store at once: the push of a space tagged
// robot_python_app reaches the fleet route, which tells every robot to refresh its catalog, rather
// than the app waiting out the 5-minute cache the store's first listing started.
func TestDevPushOfANewAppRefreshesTheStore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole system")
	}
	d := startDev(t, t.TempDir())
	var listed []struct{ Name string }
	if code := d.call("GET", "/api/apps/list-available/hf_space", nil, &listed); code != 200 || len(listed) != 0 {
		t.Fatalf("the store before any app is published: %d %+v", code, listed)
	}
	published := time.Now()
	d.publish()
	wait.For(t, 30*time.Second, "catalog_app in the robot's store", func() bool {
		listed = nil
		d.call("GET", "/api/apps/list-available/hf_space", nil, &listed)
		return len(listed) == 1 && listed[0].Name == "catalog_app"
	})
	t.Logf("push to the app listed in the store: %s", time.Since(published).Round(time.Millisecond))
	if !strings.Contains(d.p.stderr.String(), "an app of the store was pushed") {
		t.Errorf("the robot did not say why it refreshed its catalog:\n%s", d.p.stderr)
	}
	if code := d.p.stop(t); code != 0 {
		t.Errorf("robothub dev exited with %d after Ctrl-C\n%s", code, d.p.stderr)
	}
}

// BenchmarkPushToRunning is the quick start's loop: a git push of a new version of a running app to
// its space on robothub dev's hub, until the robot runs that version (the hub's webhook, the
// receiver's robot-update route, the daemon's update and restart). Target: p50 <= 2 s.
//
//	go test -run '^$' -bench PushToRunning -benchtime 5x ./cli/robothub
func BenchmarkPushToRunning(b *testing.B) {
	d := startDev(b, b.TempDir())
	d.publish()
	d.installAndStart()
	var took []time.Duration
	for i := 0; b.Loop(); i++ {
		version := fmt.Sprintf("1.0.%d", i+1)
		rev := d.commitVersion(version)
		pushed := time.Now()
		d.git("push", "-q", d.space, "main")
		// Polled every 20 ms (waitUntil's 100 ms would add 50 ms on average to each figure).
		wait.For(b, 2*time.Minute, "the robot running "+version, func() bool { return d.runsVersion(version, rev) })
		took = append(took, time.Since(pushed))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "push-to-running-p50-ms")
	b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "push-to-running-max-ms")
	b.ReportMetric(0, "ns/op")
}

func TestSameLocalRoute(t *testing.T) {
	same := hubcmd.SameLocalRoute("http://127.0.0.1:7860/webhooks/" + devUpdateRoute)
	for u, want := range map[string]bool{
		"http://127.0.0.1:7860/webhooks/" + devUpdateRoute:  true,
		"http://127.0.0.1:22860/webhooks/" + devUpdateRoute: true,
		"http://[::1]:7860/webhooks/" + devUpdateRoute:      true,
		"http://localhost:1/webhooks/" + devUpdateRoute:     true,
		"http://127.0.0.1:7860/webhooks/" + devLogRoute:     false,
		"https://127.0.0.1:7860/webhooks/" + devUpdateRoute: false,
		"https://example.com/webhooks/" + devUpdateRoute:    false,
		"http://10.0.0.2:7860/webhooks/" + devUpdateRoute:   false,
	} {
		if got := same(u); got != want {
			t.Errorf("same route as the dev receiver's: %q = %v, want %v", u, got, want)
		}
	}
	if hubcmd.SameLocalRoute("https://example.com/webhooks/x") != nil {
		t.Error("a receiver elsewhere replaces webhooks")
	}
}
