package robotd_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/mqtt"
	"github.com/robothub/robothub/core/fleet"
	hubclient "github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/release"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
	"github.com/robothub/robothub/internal/testkit/fakesystemd"
	"github.com/robothub/robothub/internal/testkit/mosquittotest"
	"github.com/robothub/robothub/internal/testkit/syncbuf"
)

// The tests' release key: one for the package, so that the daemons built for one test serve the
// others. testReleaseSecret is its secret key file's text, as robothub release keygen writes it.
var testReleaseSecret = sync.OnceValues(func() ([]byte, error) {
	_, secret, err := release.GenerateKey()
	return secret, err
})

var testReleaseKey = sync.OnceValues(func() (release.SigningKey, error) {
	secret, err := testReleaseSecret()
	if err != nil {
		return release.SigningKey{}, err
	}
	return release.ParseSigningKey(secret, "")
})

var releaseBuilds sync.Map // version -> func() (string, error)

// releaseProgram builds robot-daemon as make release does (the version and the tests' release key
// linked in), or, for a version ending in "-neverready", testdata/neverready: a release that
// never says READY.
func releaseProgram(t testing.TB, version string) string {
	t.Helper()
	build, _ := releaseBuilds.LoadOrStore(version, sync.OnceValues(func() (string, error) {
		key, err := testReleaseKey()
		if err != nil {
			return "", err
		}
		dir, err := os.MkdirTemp("", "robotd-release-")
		if err != nil {
			return "", err
		}
		out := filepath.Join(dir, "robot-daemon")
		// -s -w as make release links it: a third smaller, which every release step handles
		// (gzip, checksums, the hub, the download).
		pkg, ldflags := "./cmd/robot-daemon", "-s -w -X github.com/robothub/robothub/core/version.Version="+version+
			" -X github.com/robothub/robothub/core/release.CompiledKey="+keyLine(key.Public())
		goarch := "amd64"
		if strings.HasSuffix(version, "-neverready") {
			pkg, ldflags = "./testdata/neverready", "-X main.version="+strings.TrimSuffix(version, "-neverready")
		}
		if strings.HasSuffix(version, "-arm64") {
			pkg, ldflags, goarch = "./testdata/neverready", "-X main.version="+strings.TrimSuffix(version, "-arm64"), "arm64"
		}
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", out, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %v\n%s", version, err, b)
		}
		return out, nil
	}))
	path, err := build.(func() (string, error))()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func keyLine(k release.Key) string {
	lines := strings.Split(strings.TrimSpace(k.String()), "\n")
	return lines[len(lines)-1]
}

// releaseHub is the local hub with a release repository (a space: the local hub stores spaces).
type releaseHub struct {
	URL    string
	client *hubclient.Client
	repo   release.Repo
}

func startReleaseHub(t testing.TB) *releaseHub {
	t.Helper()
	ctx := context.Background()
	emu, err := localhub.Open(ctx, localhub.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	token, _, err := emu.CreateToken(ctx, "robothub", hubemu.RoleWrite, "release")
	if err != nil {
		t.Fatal(err)
	}
	c, err := hubclient.New(srv.URL, hubclient.WithToken(token))
	if err != nil {
		t.Fatal(err)
	}
	return &releaseHub{URL: srv.URL, client: c, repo: release.Repo{Type: "space", ID: "robothub/robot-daemon-releases"}}
}

// assembledReleases holds the files of each release version (release assembled) that a test
// published: the hubs of all the tests get the same ones.
var assembledReleases sync.Map // version -> func() ([]release.RepoFile, error)

// assembled gzips, checksums and signs program as release version for linux/amd64 with the built
// robothub release assemble, as make release does: release.Assemble in this test binary runs
// under the race detector, where gzip of a robot-daemon took 35 s of CPU.
func assembled(t testing.TB, version, program string) []release.RepoFile {
	t.Helper()
	build, _ := assembledReleases.LoadOrStore(version, sync.OnceValues(func() ([]release.RepoFile, error) {
		secret, err := testReleaseSecret()
		if err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp(filepath.Dir(sharedVenv), "release-")
		if err != nil {
			return nil, err
		}
		keyFile, bin := filepath.Join(dir, "release.key"), filepath.Join(dir, "bin", "robot-daemon_linux_amd64")
		if err := os.WriteFile(keyFile, secret, 0o600); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			return nil, err
		}
		if err := os.Symlink(program, bin); err != nil {
			return nil, err
		}
		tools, err := builtBinaries()
		if err != nil {
			return nil, err
		}
		v := strings.TrimSuffix(strings.TrimSuffix(version, "-neverready"), "-arm64")
		out := filepath.Join(dir, "out")
		cmd := exec.Command(filepath.Join(tools, "robothub"), "release", "assemble", "--version", v, "--key", keyFile, "--out", out, bin)
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("robothub release assemble %s: %v\n%s", version, err, b)
		}
		var files []release.RepoFile
		err = filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(out, p)
			files = append(files, release.RepoFile{Path: filepath.ToSlash(rel), Content: data})
			return nil
		})
		return files, err
	}))
	files, err := build.(func() ([]release.RepoFile, error))()
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// publish signs program as release version for linux/amd64 and publishes it, as make release and
// robothub release publish do.
func (h *releaseHub) publish(t testing.TB, version, program string) {
	t.Helper()
	v, err := release.ParseVersion(strings.TrimSuffix(strings.TrimSuffix(version, "-neverready"), "-arm64"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := release.Publish(context.Background(), h.client, h.repo, v, assembled(t, version, program)); err != nil {
		t.Fatal(err)
	}
}

// supervisedRobot is robot-daemon --sim as installed under systemd: the program at a path of its
// own (the unit's ExecStart), its state directory, fakesystemd in systemd's place.
type supervisedRobot struct {
	t       testing.TB
	url     string
	token   string
	dataDir string
	svc     *fakesystemd.Service
	out     *syncbuf.Buffer
	last    string // what a waitFor condition saw last
}

// withEnv is an argument of startSupervisedRobot that sets a variable of the service.
func withEnv(kv string) string { return "\x00env:" + kv }

func startSupervisedRobot(t testing.TB, installed string, hub *releaseHub, extra ...string) *supervisedRobot {
	t.Helper()
	dir := t.TempDir()
	launcher := filepath.Join(dir, "usr-local-bin", "robot-daemon")
	if err := os.MkdirAll(filepath.Dir(launcher), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(installed)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(launcher, data, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{}
	var args []string
	for _, a := range extra {
		if kv, ok := strings.CutPrefix(a, "\x00env:"); ok {
			env = append(env, kv)
		} else {
			args = append(args, a)
		}
	}
	extra = args
	venv := ""
	for i, a := range extra {
		if a == "--apps-venv" && i+1 < len(extra) {
			venv = extra[i+1]
		}
	}
	if venv == "" {
		// A venv of its own: its releases install their SDK, which the shared venv's daemons
		// would replace again.
		venv = ownVenv(t)
	}
	tok := make([]byte, 16)
	_, _ = rand.Read(tok)
	port := freePort(t)
	r := &supervisedRobot{t: t, url: fmt.Sprintf("http://127.0.0.1:%d", port), token: hex.EncodeToString(tok), dataDir: filepath.Join(dir, "state"), out: &syncbuf.Buffer{}}
	argv := append(append([]string{launcher, "--sim", "--port", strconv.Itoa(port), "--data-dir", r.dataDir}, venvArgs(venv)...),
		append([]string{"--hub-url", hub.URL, "--release-repo", hub.repo.String(), "--stop-timeout", "2s", "--log-level", "debug",
			"--preload-moves", "none", "--no-mdns"}, extra...)...)
	mu := venvLock(venv)
	mu.Lock()
	r.svc = fakesystemd.Start(t, fakesystemd.Unit{Argv: argv, Env: append(env, "ROBOT_DAEMON_TOKEN="+r.token), TimeoutStart: 3 * time.Minute,
		Watchdog: 4 * time.Second, RestartDelay: 200 * time.Millisecond, Output: r.out})
	r.svc.Wait(3*time.Minute, "ready", func(evs []fakesystemd.Event) bool { return fakesystemd.Count(evs, "ready") > 0 })
	mu.Unlock()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("daemon output:\n%s\nsupervisor:\n%s", r.out.String(), fakesystemd.Format(r.svc.Events()))
		}
	})
	return r
}

func (r *supervisedRobot) call(method, path string, body, out any) int {
	r.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, r.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+r.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0 // the daemon is between two programs
	}
	defer resp.Body.Close()
	if out != nil {
		_ = json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

// waitFor polls until cond holds.
func (r *supervisedRobot) waitFor(timeout time.Duration, what string, cond func() bool) {
	r.t.Helper()
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			r.t.Fatalf("after %s, not %s (last seen: %s)", timeout, what, r.last)
		}
	}
}

func (r *supervisedRobot) version() string {
	var st struct {
		Version string `json:"version"`
	}
	if r.call("GET", "/api/daemon/status", nil, &st) != 200 {
		return ""
	}
	return st.Version
}

func (r *supervisedRobot) job(id string) release.JobInfo {
	var info release.JobInfo
	r.call("GET", "/api/update/info?job_id="+id, nil, &info)
	return info
}

func (r *supervisedRobot) startUpdate(query string) string {
	r.t.Helper()
	var created struct {
		JobID  string `json:"job_id"`
		Detail string `json:"detail"`
	}
	if code := r.call("POST", "/api/update/start"+query, nil, &created); code != 200 {
		r.t.Fatalf("POST /api/update/start%s: %d %s", query, code, created.Detail)
	}
	return created.JobID
}

func (r *supervisedRobot) appStatus() (name, state string) {
	var st struct {
		Info struct {
			Name string `json:"name"`
		} `json:"info"`
		State string `json:"state"`
	}
	r.call("GET", "/api/apps/current-app-status", nil, &st)
	return st.Info.Name, st.State
}

func (r *supervisedRobot) appPID() int {
	var ra struct {
		PID int `json:"pid"`
	}
	data, _ := os.ReadFile(filepath.Join(r.dataDir, "running-app.json"))
	_ = json.Unmarshal(data, &ra)
	return ra.PID
}

func (r *supervisedRobot) robot() robotState {
	var st robotState
	r.call("GET", "/api/state/full", nil, &st)
	return st
}

// The daemon updates itself from the hub's signed releases through the REST route, as under
// systemd: the app stops and starts again, the robot stays awake where it was, and a release
// that never becomes ready is rolled back by itself, the update's record saying why.
func TestDaemonUpdatesItselfAndRollsBack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three releases and runs them under a supervisor")
	}
	t.Parallel() // its own hub, data dirs, ports and supervisor: mostly waiting on restarts
	hub := startReleaseHub(t)
	v100, v110, v120 := releaseProgram(t, "1.0.0"), releaseProgram(t, "1.1.0"), releaseProgram(t, "1.2.0-neverready")
	hub.publish(t, "1.0.0", v100)
	hub.publish(t, "1.1.0", v110)
	r := startSupervisedRobot(t, v100, hub)
	if v := r.version(); v != "1.0.0" {
		t.Fatalf("version %q, want 1.0.0", v)
	}
	var av struct {
		Update map[string]release.Availability `json:"update"`
	}
	if r.call("GET", "/api/update/available", nil, &av); av.Update["robot_daemon"] != (release.Availability{Current: "1.0.0", Available: "1.1.0", Is: true, Channel: "stable"}) {
		t.Fatalf("available: %+v", av)
	}

	// An app runs, the robot is awake.
	var created struct {
		JobID string `json:"job_id"`
	}
	r.call("POST", "/api/apps/install", map[string]string{"url": testdataApp("coop_app")}, &created)
	r.waitFor(3*time.Minute, "coop_app installed", func() bool {
		var j jobInfo
		r.call("GET", "/api/apps/job-status/"+created.JobID, nil, &j)
		return j.Status == "done"
	})
	t.Cleanup(func() {
		r.call("POST", "/api/apps/stop-current-app", nil, nil)
		if r.call("POST", "/api/apps/remove/coop_app", nil, &created) == 200 {
			r.waitFor(time.Minute, "coop_app removed", func() bool {
				var j jobInfo
				r.call("GET", "/api/apps/job-status/"+created.JobID, nil, &j)
				return j.Status == "done" || j.Status == "failed"
			})
		}
	})
	// Awake first: a target set while the wake-up move plays replaces it.
	r.waitFor(time.Minute, "the robot awake", func() bool { return r.robot().Awake })
	if code := r.call("POST", "/api/apps/start-app/coop_app", nil, nil); code != 200 {
		t.Fatalf("start-app: %d", code)
	}
	r.waitFor(time.Minute, "coop_app running, the robot awake", func() bool {
		name, state := r.appStatus()
		st := r.robot()
		r.last = fmt.Sprintf("app %q %q, awake %v", name, state, st.Awake)
		return state == "running" && st.Awake
	})
	pid1, daemonPID := r.appPID(), r.svc.Events()[0].PID

	// 1.0.0 -> 1.1.0 through the REST route.
	id := r.startUpdate("")
	r.waitFor(2*time.Minute, "the update done", func() bool { return release.Finished(r.job(id).Status) })
	info := r.job(id)
	if info.Status != "done" || info.Result != "updated" || info.From != "1.0.0" || info.To != "1.1.0" {
		t.Fatalf("update job: %+v", info)
	}
	logs := strings.Join(info.Logs, "\n")
	for _, want := range []string{"signature by release key", "checksum ok", "swapped: current is 1.1.0", "robot-daemon 1.1.0 is ready"} {
		if !strings.Contains(logs, want) {
			t.Errorf("update log lacks %q:\n%s", want, logs)
		}
	}
	if v := r.version(); v != "1.1.0" {
		t.Fatalf("version after the update: %q", v)
	}
	evs := r.svc.Events()
	if n := fakesystemd.Count(evs, "start"); n != 1 {
		t.Errorf("the service was started %d times: the update must hand over in the same process (systemd's main PID)\n%s", n, fakesystemd.Format(evs))
	}
	if evs[0].PID != daemonPID {
		t.Errorf("daemon PID changed")
	}
	r.waitFor(time.Minute, "coop_app running again", func() bool {
		name, state := r.appStatus()
		return name == "coop_app" && state == "running" && r.appPID() != pid1
	})
	if st := r.robot(); !st.Awake || st.ControlMode != "enabled" || math.Abs(st.TargetHead.Yaw-math.Pi/18) > 0.01 {
		t.Errorf("robot after the update: awake %v mode %s target yaw %.3f, want awake, enabled, the app's 0.175", st.Awake, st.ControlMode, st.TargetHead.Yaw)
	}
	var src release.InstallSource
	if r.call("GET", "/api/update/install-source", nil, &src); src.Source != "release" || src.Version != "1.1.0" || !strings.HasSuffix(src.Program, "/releases/1.1.0/robot-daemon") {
		t.Errorf("install-source: %+v", src)
	}

	// A signed release whose program is built for another CPU: refused before the swap, naming it;
	// the running daemon is untouched (same version, no restart).
	hub.publish(t, "1.1.5-arm64", releaseProgram(t, "1.1.5-arm64"))
	id = r.startUpdate("?version=1.1.5")
	r.waitFor(time.Minute, "the arm64 update refused", func() bool { return release.Finished(r.job(id).Status) })
	if info := r.job(id); info.Status != "failed" || !strings.Contains(info.Error, "built for arm64 (ELF machine EM_AARCH64), not for this robot's amd64") {
		t.Fatalf("arm64 release: %+v", info)
	}
	if v, evs := r.version(), r.svc.Events(); v != "1.1.0" || fakesystemd.Count(evs, "start") != 1 {
		t.Fatalf("after a refused release: version %s, supervisor:\n%s", v, fakesystemd.Format(evs))
	}
	var d struct{ Detail string }
	if code := r.call("POST", "/api/update/start?version=1.0.0", nil, &d); code != 400 || !strings.Contains(d.Detail, "a downgrade needs allow_downgrade") {
		t.Errorf("downgrade without allow_downgrade: %d %q", code, d.Detail)
	}

	// 1.1.0 -> 1.2.0, which never becomes ready: rolled back to 1.1.0 by itself.
	r.call("POST", "/api/apps/stop-current-app", nil, nil)
	r.waitFor(30*time.Second, "coop_app stopped", func() bool { _, state := r.appStatus(); return state != "running" && state != "stopping" })
	r.call("POST", "/api/move/set_target", map[string]any{"target_head_pose": map[string]any{"yaw": 0.3}}, nil)
	hub.publish(t, "1.2.0-neverready", v120)
	id = r.startUpdate("?version=1.2.0")
	r.waitFor(2*time.Minute, "the broken update finished", func() bool { return release.Finished(r.job(id).Status) })
	info = r.job(id)
	if info.Status != "failed" || info.Result != "rolled-back" || info.Error != "1.2.0 started once without becoming ready" {
		t.Fatalf("broken update job: %+v", info)
	}
	if v := r.version(); v != "1.1.0" {
		t.Fatalf("version after the rollback: %q", v)
	}
	if evs := r.svc.Events(); fakesystemd.Count(evs, "watchdog-timeout") != 1 {
		t.Errorf("the never-ready release was not stopped by the watchdog once:\n%s", fakesystemd.Format(evs))
	}
	if st := r.robot(); !st.Awake || math.Abs(st.TargetHead.Yaw-0.3) > 1e-6 {
		t.Errorf("robot after the rollback: awake %v target yaw %.3f, want awake at 0.3", st.Awake, st.TargetHead.Yaw)
	}
	if !strings.Contains(strings.Join(info.Logs, "\n"), "rolled back to 1.1.0: 1.2.0 started once without becoming ready") {
		t.Errorf("log: %q", info.Logs)
	}
}

// canaryIDs picks robot ids for a canary of one among n robots at canary percent: one whose
// bucket is in the first wave, the others not.
func canaryIDs(n, canary int) []string {
	edge := canary * fleet.Buckets / 100
	var in, out []string
	for i := 0; len(in) < 1 || len(out) < n-1; i++ {
		id := fmt.Sprintf("robot-%d", i)
		if fleet.Bucket(id) < edge {
			if len(in) < 1 {
				in = append(in, id)
			}
		} else if len(out) < n-1 {
			out = append(out, id)
		}
	}
	return append(in, out...)
}

// A daemon release announced through the fleet reaches three robots in canary waves, as an app's
// push does: the canary robot first, then the others once it runs the release; a release that
// rolls back on its canary halts the rollout, and the others keep what they run.
func TestFleetUpdatesTheDaemonInCanaryWaves(t *testing.T) {
	if testing.Short() {
		t.Skip("builds releases, starts a broker, a hub and three supervised daemons")
	}
	t.Parallel() // its own hub, data dirs, ports and supervisor: mostly waiting on restarts
	hub := startReleaseHub(t)
	v100, v110, v120 := releaseProgram(t, "1.0.0"), releaseProgram(t, "1.1.0"), releaseProgram(t, "1.2.0-neverready")
	hub.publish(t, "1.0.0", v100)
	hub.publish(t, "1.1.0", v110)
	hub.publish(t, "1.2.0-neverready", v120)

	const canary = 33
	ids := canaryIDs(3, canary)
	passwords := map[string]string{"operator": "operator-pw"}
	for _, id := range ids {
		passwords[id] = id + "-pw"
	}
	broker := mosquittotest.Start(t, mosquittotest.Options{Users: passwords, ACL: mosquittotest.FleetACL(t, map[string][]string{})})
	ctx := context.Background()

	// The operator: the statuses (as fleet ls reads them) and the publisher (as fleet update-daemon runs it).
	board := &statusBoard{statuses: map[string]fleet.Status{}, changed: make(chan struct{}, 1)}
	plan := fleet.Plan{Canary: canary, Halt: 0, Wait: 3 * time.Minute}
	pub := &fleet.Publisher{Plan: plan, Log: slog.New(slog.DiscardHandler)}
	op, err := mqtt.Connect(ctx, mqtt.Config{URL: broker.URL, ClientID: "operator", Username: "operator", Password: passwords["operator"],
		TLS: broker.TLSConfig(), ReceiveMaximum: mqtt.ManyMessages, Logger: slog.New(slog.DiscardHandler),
		OnMessage: func(topic string, payload []byte) { board.take(topic, payload); pub.Handle(topic, payload) }})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close(context.Background())
	pub.Link = op
	short, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	if err := op.Subscribe(short, pub.Filters()...); err != nil {
		t.Fatal(err)
	}
	pub.Subscribed()
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	go func() { _ = pub.Run(runCtx) }()

	robots := map[string]*supervisedRobot{}
	for _, id := range ids {
		robots[id] = startSupervisedRobot(t, v100, hub, withEnv("ROBOT_FLEET_PASSWORD="+passwords[id]),
			"--apps-venv", ownVenv(t), "--fleet", broker.URL, "--fleet-id", id, "--fleet-ca", broker.CAFile)
	}
	for _, id := range ids {
		board.wait(t, id, "reporting robot-daemon 1.0.0", func(s fleet.Status) bool { return s.Daemon == "1.0.0" })
	}

	// 1.1.0: the canary robot, then the other two.
	r, err := pub.AnnounceDaemon(ctx, "1.1.0", hub.repo.String())
	if err != nil || r.State != fleet.RolloutCanary {
		t.Fatalf("announce: %+v %v", r, err)
	}
	board.wait(t, ids[0], "the canary robot on 1.1.0", func(s fleet.Status) bool { return s.Daemon == "1.1.0" })
	for _, id := range ids[1:] {
		if s := board.get(id); s.Daemon != "1.0.0" {
			t.Errorf("%s runs %s before the canary passed", id, s.Daemon)
		}
	}
	for _, id := range ids {
		// The new daemon's first status may come before it has read its update's record: wait for
		// the one that reports the update, and fail on one that reports it otherwise.
		st := board.wait(t, id, "robot-daemon 1.1.0 reporting its update", func(s fleet.Status) bool {
			return s.Daemon == "1.1.0" && s.LastDaemonUpdate != nil && s.LastDaemonUpdate.Version == "1.1.0"
		})
		if st.LastDaemonUpdate.Result != fleet.ResultDone {
			t.Errorf("%s's last daemon update: %+v", id, st.LastDaemonUpdate)
		}
		if v := robots[id].version(); v != "1.1.0" {
			t.Errorf("%s's API says %s", id, v)
		}
	}
	if cur, _ := pub.DaemonRollout(); cur.State != fleet.RolloutComplete {
		t.Errorf("rollout after the canary: %+v", cur)
	}

	// 1.2.0 never becomes ready: the canary robot rolls back and the rollout halts.
	r, err = pub.AnnounceDaemon(ctx, "1.2.0", hub.repo.String())
	if err != nil {
		t.Fatal(err)
	}
	st := board.wait(t, ids[0], "the canary robot rolled back", func(s fleet.Status) bool {
		return s.LastDaemonUpdate != nil && s.LastDaemonUpdate.Version == "1.2.0"
	})
	if st.LastDaemonUpdate.Result != fleet.ResultRolledBack || st.Daemon != "1.1.0" {
		t.Fatalf("canary robot: daemon %s, last update %+v", st.Daemon, st.LastDaemonUpdate)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if cur, _ := pub.DaemonRollout(); cur.ID == r.ID && cur.State == fleet.RolloutHalted {
			if !strings.Contains(cur.Reason, "1 of 1 canary robots failed") {
				t.Errorf("halt reason: %q", cur.Reason)
			}
			break
		}
		if time.Now().After(deadline) {
			cur, _ := pub.DaemonRollout()
			t.Fatalf("the rollout did not halt: %+v", cur)
		}
	}
	for _, id := range ids[1:] {
		if s := board.get(id); s.Daemon != "1.1.0" || (s.LastDaemonUpdate != nil && s.LastDaemonUpdate.Version == "1.2.0") {
			t.Errorf("%s after the halt: daemon %s, last update %+v", id, s.Daemon, s.LastDaemonUpdate)
		}
	}
}

func (s *statusBoard) get(robot string) fleet.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statuses[robot]
}
