package main

// Attacks on the daemon's installs, through the built robot-daemon (issue 20): hostile dependency
// wheels served by a package index on loopback, a direct-URL dependency under --offline, an app's
// dependencies left behind by its removal, a stuck clone that blocks every job, and a corrupt
// installed-apps.json. Each fails on the code before the fix.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/daemonclient"
	"github.com/robothub/robothub/internal/testkit/pyindex"
	"github.com/robothub/robothub/internal/testkit/syncbuf"
)

var daemonBin string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() { // every daemon test skips (startDaemon): no binary to build
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "robot-daemon-bin-")
	if err != nil {
		panic(err)
	}
	daemonBin = filepath.Join(dir, "robot-daemon")
	if out, err := exec.Command("go", "build", "-o", daemonBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type daemon struct {
	url, dataDir, venv string
	token              string // the owner's, from the token file the daemon made
	pid                int
	log                *syncbuf.Buffer
	stop               func() // SIGINT, and wait until it exits
}

// startDaemon runs the built robot-daemon --sim on a free loopback port and waits until it serves.
func startDaemon(t *testing.T, dataDir, venv string, args ...string) *daemon {
	t.Helper()
	return startDaemonWith(t, nil, nil, dataDir, venv, args...)
}

// startDaemonWith is startDaemon with env added to the daemon's environment, run by the command
// prefix (such as setpriv and its arguments) when not nil.
func startDaemonWith(t *testing.T, env, prefix []string, dataDir, venv string, args ...string) *daemon {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the built daemon with a Python venv: not under -short")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	d := &daemon{url: fmt.Sprintf("http://127.0.0.1:%d", port), dataDir: dataDir, venv: venv, log: &syncbuf.Buffer{}}
	argv := append(append(append([]string(nil), prefix...), daemonBin, "--sim", "--port", fmt.Sprint(port), "--data-dir", dataDir, "--apps-venv", venv,
		"--hub-url", "none", "--no-wake-up-on-start", "--log-level", "info"), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = d.log, d.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	stopped := false
	d.stop = func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	t.Cleanup(func() {
		d.stop()
		if t.Failed() {
			t.Logf("daemon log:\n%s", d.log)
		}
	})
	health := daemonclient.New(d.url, daemonclient.Options{HTTPClient: &http.Client{Timeout: 5 * time.Second}}).Client()
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("robot-daemon exited: %v\n%s", waitErr, d.log)
		default:
		}
		// Until it has made its venv the daemon answers /healthz 503: wait for the 200.
		if resp, err := health.GetHealthzWithResponse(context.Background()); err == nil && resp.JSON200 != nil {
			d.pid = cmd.Process.Pid
			for _, kv := range env {
				if v, ok := strings.CutPrefix(kv, "ROBOT_DAEMON_TOKEN="); ok {
					d.token = v
					return d
				}
			}
			data, err := os.ReadFile(filepath.Join(dataDir, "api-token"))
			if err != nil {
				t.Fatalf("the daemon's token file: %v", err)
			}
			d.token = strings.TrimSpace(string(data))
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("robot-daemon did not serve:\n%s", d.log)
		}
	}
}

// client is the generated client of d, with the owner's token.
func (d *daemon) client() *daemonclient.ClientWithResponses {
	return daemonclient.New(d.url, daemonclient.Options{Token: d.token, HTTPClient: &http.Client{Timeout: 30 * time.Second}}).Client()
}

// jobInfo is a job as job-status gives it.
type jobInfo struct{ daemonclient.JobInfo }

func (j jobInfo) err() string {
	if j.Error == nil {
		return ""
	}
	return *j.Error
}

// startInstall starts installing the app at url and returns the job's ID.
func (d *daemon) startInstall(t *testing.T, url string) string {
	t.Helper()
	resp, err := d.client().PostApiAppsInstallWithResponse(context.Background(), nil, daemonclient.PostApiAppsInstallJSONRequestBody{Url: &url})
	if err != nil {
		t.Fatalf("install %s: %v", url, err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("install %s: %v", url, daemonclient.Unexpected(resp.HTTPResponse, resp.Body))
	}
	created, err := resp.JSON200.AsJobCreated()
	if err != nil || created.JobId == "" {
		t.Fatalf("install %s: %v %s, want a job", url, err, resp.Body)
	}
	return created.JobId
}

// startRemove starts removing app and returns the job's ID.
func (d *daemon) startRemove(t *testing.T, app string) string {
	t.Helper()
	resp, err := d.client().PostApiAppsRemoveAppNameWithResponse(context.Background(), app)
	if err != nil {
		t.Fatalf("remove %s: %v", app, err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("remove %s: %v", app, daemonclient.Unexpected(resp.HTTPResponse, resp.Body))
	}
	return resp.JSON200.JobId
}

// wait polls a job until it has finished.
func (d *daemon) wait(t *testing.T, id string, within time.Duration) jobInfo {
	t.Helper()
	c := d.client()
	for deadline := time.Now().Add(within); ; time.Sleep(50 * time.Millisecond) {
		resp, err := c.GetApiAppsJobStatusJobIdWithResponse(context.Background(), id)
		if err != nil {
			t.Fatalf("job-status %s: %v", id, err)
		}
		if resp.JSON200 == nil {
			t.Fatalf("job-status %s: %v", id, daemonclient.Unexpected(resp.HTTPResponse, resp.Body))
		}
		j := jobInfo{*resp.JSON200}
		if j.Status == daemonclient.JobStatusDone || j.Status == daemonclient.JobStatusFailed {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s after %s:\n%s", id, j.Status, within, strings.Join(j.Logs, "\n"))
		}
	}
}

func (d *daemon) install(t *testing.T, dir string) jobInfo {
	t.Helper()
	return d.wait(t, d.startInstall(t, dir), 5*time.Minute)
}

func (d *daemon) remove(t *testing.T, app string) jobInfo {
	t.Helper()
	return d.wait(t, d.startRemove(t, app), 2*time.Minute)
}

// writeApp writes an app package name (version 1.0.0) that requires requires.
func writeApp(t *testing.T, name string, requires ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	quoted := make([]string, len(requires))
	for i, r := range requires {
		quoted[i] = fmt.Sprintf("%q", r)
	}
	files := map[string]string{
		"pyproject.toml": fmt.Sprintf("[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n"+
			"[project]\nname = %q\nversion = \"1.0.0\"\ndependencies = [%s]\n\n[project.entry-points.robot_apps]\n%s = \"%s.main:App\"\n\n"+
			"[tool.setuptools]\npackages = [%q]\n", strings.ReplaceAll(name, "_", "-"), strings.Join(quoted, ", "), name, name, name),
		"README.md":           "---\ntags: [robot_python_app]\n---\n",
		name + "/__init__.py": "",
		name + "/main.py":     "class App:\n    pass\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// siteFiles lists every file of the venv's site-packages, byte-compiled caches aside.
func siteFiles(t *testing.T, venv string) []string {
	t.Helper()
	sites, _ := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
	if len(sites) != 1 {
		t.Fatalf("site-packages of %s: %v", venv, sites)
	}
	var out []string
	_ = filepath.WalkDir(sites[0], func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(p, "__pycache__") {
			rel, _ := filepath.Rel(sites[0], p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

func pythonIn(t *testing.T, venv, code string) string {
	t.Helper()
	out, _ := exec.Command(filepath.Join(venv, "bin", "python"), "-c", code).CombinedOutput()
	return strings.TrimSpace(string(out))
}

// TestHostileDependencyIsRefused: an app whose dependency (or the dependency of a dependency)
// ships a start-up hook, a .pth file, the SDK's package, a standard-library module or another
// installed app's package is refused before anything is installed, naming the file.
func TestHostileDependencyIsRefused(t *testing.T) {
	idx := pyindex.New()
	defer idx.Close()
	marker := filepath.Join(t.TempDir(), "hook-ran")
	hook := fmt.Sprintf("open(%q, 'a').write('ran')\n", marker)
	idx.PublishFiles("evil-hook", "1.0", map[string]string{"sitecustomize.py": hook, "evil_hook/__init__.py": ""})
	idx.PublishFiles("evil-pth", "1.0", map[string]string{"evil_pth.pth": "import os; " + strings.TrimSpace(hook), "evil_pth/__init__.py": ""})
	idx.PublishFiles("evil-sdk", "1.0", map[string]string{"robot_sdk/__init__.py": hook, "robot_sdk/extra.py": ""})
	idx.PublishFiles("evil-stdlib", "1.0", map[string]string{"json/__init__.py": hook})
	idx.PublishFiles("evil-app", "1.0", map[string]string{"good_app/main.py": hook})
	idx.Publish("innocent", "1.0", "evil-hook>=1")
	idx.Publish("plain", "1.0")

	d := startDaemon(t, t.TempDir(), filepath.Join(t.TempDir(), "venv"), "--index-url", idx.URL())
	if j := d.install(t, writeApp(t, "good_app", "plain")); j.Status != "done" {
		t.Fatalf("installing good_app: %s %s\n%s", j.Status, j.err(), strings.Join(j.Logs, "\n"))
	}
	before := siteFiles(t, d.venv)
	for _, c := range []struct{ dep, want string }{
		{"evil-hook", "its dependency evil-hook 1.0 would shadow the apps' runtime: it installs sitecustomize.py (sitecustomize, a module Python runs at every start)"},
		{"innocent", "its dependency evil-hook 1.0 would shadow the apps' runtime: it installs sitecustomize.py"},
		{"evil-pth", "evil_pth.pth (a .pth file"},
		{"evil-sdk", "robot_sdk/__init__.py (robot_sdk, the robot SDK the daemon provides)"},
		{"evil-stdlib", "json/__init__.py (json, a standard-library module)"},
		{"evil-app", "good_app/main.py (owned by the installed good-app)"},
	} {
		j := d.install(t, writeApp(t, "victim_app", c.dep))
		if j.Status != "failed" || !strings.Contains(j.err(), c.want) || !strings.Contains(j.err(), "the installed version, if any, is unchanged") {
			t.Errorf("an app depending on %s: %s %q, want failed naming %q\n%s", c.dep, j.Status, j.err(), c.want, strings.Join(j.Logs, "\n"))
		}
		if after := siteFiles(t, d.venv); !slices.Equal(after, before) {
			t.Errorf("after the refused install of an app depending on %s, site-packages changed", c.dep)
		}
	}
	if got := pythonIn(t, d.venv, "import good_app.main, robot_sdk, json; print(robot_sdk.RobotApp.__name__)"); got != "RobotApp" {
		t.Errorf("the apps venv after the refused installs: %s", got)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a hostile dependency's code ran")
	}
}

// TestOfflineDirectURLDependencyIsRefused: under --offline, a requirement that names a URL (the
// app's own, or one of a wheel in the wheel directories) is refused, naming it, and never fetched.
func TestOfflineDirectURLDependencyIsRefused(t *testing.T) {
	var fetched atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		name, data := pyindex.BuildWheel("remote", "1.0", map[string]string{"remote/__init__.py": ""})
		w.Header().Set("Content-Disposition", "attachment; filename="+name)
		_, _ = w.Write(data)
	}))
	defer srv.Close()
	wheels := t.TempDir()
	name, data := pyindex.BuildWheel("middle", "1.0", map[string]string{"middle/__init__.py": ""}, "remote @ "+srv.URL+"/remote-1.0-py3-none-any.whl")
	if err := os.WriteFile(filepath.Join(wheels, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, t.TempDir(), filepath.Join(t.TempDir(), "venv"), "--offline", "--wheel-dir", "/usr/share/python-wheels", "--wheel-dir", wheels)
	j := d.install(t, writeApp(t, "url_app", "remote @ "+srv.URL+"/remote-1.0-py3-none-any.whl"))
	if j.Status != "failed" || !strings.Contains(j.err(), "remote @ "+srv.URL+"/remote-1.0-py3-none-any.whl names a URL") {
		t.Errorf("an app with a direct-URL requirement offline: %s %q\n%s", j.Status, j.err(), strings.Join(j.Logs, "\n"))
	}
	j = d.install(t, writeApp(t, "url_app", "middle"))
	if j.Status != "failed" || !strings.Contains(j.err(), "names the URL "+srv.URL+"/remote-1.0-py3-none-any.whl") {
		t.Errorf("an app whose dependency has a direct-URL requirement offline: %s %q\n%s", j.Status, j.err(), strings.Join(j.Logs, "\n"))
	}
	if n := fetched.Load(); n != 0 {
		t.Errorf("an offline daemon fetched a URL %d time(s)", n)
	}
}

// TestRemoveTakesTheAppsOwnDependencies: removing an app removes the dependencies its install
// brought, except those another installed app needs, which go with that app.
func TestRemoveTakesTheAppsOwnDependencies(t *testing.T) {
	idx := pyindex.New()
	defer idx.Close()
	idx.Publish("leaf", "1.0")
	idx.Publish("branch", "1.0", "leaf>=1")
	idx.Publish("mine-only", "1.0")
	d := startDaemon(t, t.TempDir(), filepath.Join(t.TempDir(), "venv"), "--index-url", idx.URL())
	empty := siteFiles(t, d.venv)
	for _, app := range []struct {
		dir string
	}{{writeApp(t, "first_app", "branch", "mine-only")}, {writeApp(t, "second_app", "leaf")}} {
		if j := d.install(t, app.dir); j.Status != "done" {
			t.Fatalf("install: %s %s\n%s", j.Status, j.err(), strings.Join(j.Logs, "\n"))
		}
	}
	if got := pythonIn(t, d.venv, "import leaf, branch, mine_only; print('ok')"); got != "ok" {
		t.Fatalf("dependencies after the installs: %s", got)
	}
	if j := d.remove(t, "first_app"); j.Status != "done" {
		t.Fatalf("remove first_app: %s %s", j.Status, j.err())
	}
	if got := pythonIn(t, d.venv, "import importlib.util as u; print([u.find_spec(m) is not None for m in ('first_app', 'branch', 'mine_only', 'leaf', 'second_app')])"); got != "[False, False, False, True, True]" {
		t.Fatalf("after removing first_app (first_app, branch, mine_only, leaf, second_app present): %s", got)
	}
	if j := d.remove(t, "second_app"); j.Status != "done" {
		t.Fatalf("remove second_app: %s %s", j.Status, j.err())
	}
	if after := siteFiles(t, d.venv); !slices.Equal(after, empty) {
		t.Fatalf("after removing both apps site-packages holds more than before:\n%s", strings.Join(slices.DeleteFunc(after, func(f string) bool { return slices.Contains(empty, f) }), "\n"))
	}
}

// TestStuckInstallIsCancelled: an install from a URL that accepts connections and never answers
// git holds the one job slot; cancelling it through the API ends it at once, kills its git, and a
// remove that waited behind it runs at once.
func TestStuckInstallIsCancelled(t *testing.T) {
	asked := make(chan string, 16)
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- r.URL.String():
		default:
		}
		select { // read the request, never answer it
		case <-r.Context().Done():
		case <-done:
		}
	}))
	defer srv.Close()
	defer close(done)
	d := startDaemon(t, t.TempDir(), filepath.Join(t.TempDir(), "venv"))
	if j := d.install(t, writeApp(t, "kept_app")); j.Status != "done" {
		t.Fatalf("install: %s %s", j.Status, j.err())
	}
	stuck := d.startInstall(t, srv.URL+"/spaces/u/stuck_app")
	select {
	case u := <-asked:
		t.Logf("git asked for %s", u)
	case <-time.After(time.Minute):
		t.Fatal("git never asked the server")
	}
	remove := d.startRemove(t, "kept_app")
	start := time.Now()
	resp, err := d.client().PostApiAppsCancelJobJobIdWithResponse(context.Background(), stuck)
	if err != nil {
		t.Fatalf("cancel-job: %v", err)
	}
	if resp.JSON200 == nil {
		t.Fatalf("cancel-job: %v", daemonclient.Unexpected(resp.HTTPResponse, resp.Body))
	}
	cancelled := jobInfo{*resp.JSON200}
	if cancelled.Status != "failed" || !strings.HasPrefix(cancelled.err(), "cancelled on request") {
		t.Fatalf("the cancelled job: %s %q", cancelled.Status, cancelled.err())
	}
	if j := d.wait(t, remove, 30*time.Second); j.Status != "done" {
		t.Fatalf("the remove behind the cancelled install: %s %s", j.Status, j.err())
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("cancel and the remove behind it took %s", took)
	}
	out, _ := exec.Command("pgrep", "-f", "git.*"+strings.TrimPrefix(srv.URL, "http://")).Output()
	if len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("git of the cancelled job still runs: %s", out)
	}
	for id, want := range map[string]int{stuck: 400, "nope": 404} {
		resp, err := d.client().PostApiAppsCancelJobJobIdWithResponse(context.Background(), id)
		if err != nil {
			t.Fatalf("cancelling job %s: %v", id, err)
		}
		if resp.StatusCode() != want || resp.JSONDefault == nil || resp.JSONDefault.Detail == "" {
			t.Errorf("cancelling job %s (finished: 400, unknown: 404): %s %s, want %d with a detail", id, resp.Status(), resp.Body, want)
		}
	}
}

// TestCorruptInstalledAppsFileDoesNotStopTheDaemon: the daemon starts, keeps the bad file aside,
// says so in its status, and lists the installed app from the venv.
func TestCorruptInstalledAppsFileDoesNotStopTheDaemon(t *testing.T) {
	data, venv := t.TempDir(), filepath.Join(t.TempDir(), "venv")
	d := startDaemon(t, data, venv)
	if j := d.install(t, writeApp(t, "kept_app")); j.Status != "done" {
		t.Fatalf("install: %s %s", j.Status, j.err())
	}
	if j := d.install(t, writeApp(t, "other_app")); j.Status != "done" {
		t.Fatalf("install: %s %s", j.Status, j.err())
	}
	file := filepath.Join(data, "installed-apps.json")
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	torn := good[:bytes.Index(good, []byte(`"other_app"`))+20] // kept_app's record whole, other_app's torn
	if err := os.WriteFile(file, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	d2 := restart(t, d)
	// The owner asks through its socket, as robothub dev's summary tells it to.
	owner := daemonclient.NewSocket(d2.dataDir, daemonclient.Options{}).Client()
	status, err := owner.GetApiDaemonStatusWithResponse(context.Background())
	if err != nil {
		t.Fatalf("daemon status over the owner's socket: %v", err)
	}
	if status.JSON200 == nil {
		t.Fatalf("daemon status over the owner's socket: %v", daemonclient.Unexpected(status.HTTPResponse, status.Body))
	}
	// One warning says so (another may say the venv lacks the SDK's dependencies: no index here).
	var corrupt []string
	if status.JSON200.Warnings != nil {
		for _, w := range *status.JSON200.Warnings {
			if strings.Contains(w, "installed-apps.json is corrupt") {
				corrupt = append(corrupt, w)
			}
		}
	}
	if len(corrupt) != 1 || !strings.Contains(corrupt[0], "1 app record(s) recovered") {
		t.Fatalf("daemon status warnings: %s", status.Body)
	}
	aside, _ := filepath.Glob(file + ".corrupt-*")
	if len(aside) != 1 {
		t.Fatalf("the corrupt file was not kept aside: %v", aside)
	}
	if kept, _ := os.ReadFile(aside[0]); !bytes.Equal(kept, torn) {
		t.Fatal("the file kept aside is not the corrupt one")
	}
	listed, err := owner.GetApiAppsListWithResponse(context.Background())
	if err != nil {
		t.Fatalf("apps list over the owner's socket: %v", err)
	}
	if listed.JSON200 == nil {
		t.Fatalf("apps list over the owner's socket: %v", daemonclient.Unexpected(listed.HTTPResponse, listed.Body))
	}
	list := *listed.JSON200
	if len(list) != 2 || list[0].Name != "kept_app" || list[0].Extra.Source == nil || *list[0].Extra.Source == "" || list[1].Name != "other_app" {
		t.Fatalf("apps after the restart: %s", listed.Body)
	}
}

// restart stops d and starts a daemon on the same data dir and venv.
func restart(t *testing.T, d *daemon) *daemon {
	t.Helper()
	d.stop()
	return startDaemon(t, d.dataDir, d.venv)
}

// pythonVersion is python's X.Y.
func pythonVersion(t *testing.T, python string) string {
	t.Helper()
	out, err := exec.Command(python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
	if err != nil {
		t.Fatalf("%s: %v", python, err)
	}
	return strings.TrimSpace(string(out))
}

// Issue 30, items 3 and 4, through the built robot-daemon: a dependency's wheel plants a .pth file
// through the venv's lib64 (a link to lib: .data/data/lib64/pythonX.Y/site-packages/x.pth lands in
// site-packages, and Python runs it at every start), and, with --system-site-packages, a dependency
// ships a top-level numpy/ that every app's import of numpy would find first. Both were installed;
// both are refused now, naming the file, and the venv is unchanged.
func TestWheelChecksFollowTheVenvLayout(t *testing.T) {
	const python = "/usr/bin/python3" // Debian's, whose numpy is in its dist-packages
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s has no numpy: %v", python, err)
	}
	version := pythonVersion(t, python)
	idx := pyindex.New()
	defer idx.Close()
	marker := filepath.Join(t.TempDir(), "pth-ran")
	idx.PublishFiles("evil-lib64", "1.0", map[string]string{
		"evil_lib64/__init__.py": "",
		"evil_lib64-1.0.data/data/lib64/python" + version + "/site-packages/evil_lib64.pth": fmt.Sprintf("import os; open(%q, 'a').write('ran')\n", marker),
	})
	idx.PublishFiles("numpy-shadow", "1.0", map[string]string{"numpy/__init__.py": fmt.Sprintf("open(%q, 'a').write('shadow')\n", marker)})
	d := startDaemon(t, t.TempDir(), filepath.Join(t.TempDir(), "venv"), "--index-url", idx.URL(), "--python", python, "--system-site-packages")
	before := siteFiles(t, d.venv)
	for _, c := range []struct{ dep, want string }{
		{"evil-lib64", "its dependency evil-lib64 1.0 would shadow the apps' runtime: it installs evil_lib64.pth (a .pth file"},
		{"numpy-shadow", "its dependency numpy-shadow 1.0 would shadow the apps' runtime: it installs numpy/__init__.py (owned by the system's /usr/lib/python3/dist-packages"},
	} {
		j := d.install(t, writeApp(t, "victim_app", c.dep))
		if j.Status != "failed" || !strings.Contains(j.err(), c.want) {
			t.Errorf("an app depending on %s: %s %q, want failed naming %q\n%s", c.dep, j.Status, j.err(), c.want, strings.Join(j.Logs, "\n"))
		}
		if after := siteFiles(t, d.venv); !slices.Equal(after, before) {
			t.Errorf("after the refused install of an app depending on %s, site-packages changed", c.dep)
		}
	}
	if got := pythonIn(t, d.venv, "import numpy, robot_sdk; print(numpy.__file__)"); !strings.HasPrefix(got, "/usr/lib/python3/dist-packages/numpy/") {
		t.Errorf("the apps venv's numpy: %s", got)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a hostile dependency's code ran")
	}
}

// bigDatasetHub answers as a hub with datasets: each name maps to its files' sizes; a file's
// bytes are made as they are sent (a 65 MiB file is never held in memory).
func bigDatasetHub(t *testing.T, datasets map[string]map[string]int64) string {
	t.Helper()
	const sha = "0123456789abcdef0123456789abcdef01234567"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for name, files := range datasets {
			if r.URL.Path == "/api/datasets/"+name+"/revision/main" {
				var siblings []string
				for f := range files {
					siblings = append(siblings, fmt.Sprintf(`{"rfilename":%q}`, f))
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"sha":%q,"siblings":[%s]}`, sha, strings.Join(siblings, ","))
				return
			}
			for f, size := range files {
				if r.URL.Path == "/datasets/"+name+"/resolve/"+sha+"/"+f {
					w.Header().Set("Content-Length", fmt.Sprint(size))
					_, _ = io.CopyN(w, zeros{}, size)
					return
				}
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// Issue 30, item 7, through the built robot-daemon: a hub download (a move library) had no total
// cap, and a file over 64 MiB was cut at 64 MiB and cached as complete. A file over its cap, or a
// library over --max-download-mib, is an error naming the file and the cap, and the cache holds
// no file cut short.
func TestHubDownloadsAreCappedNeverCut(t *testing.T) {
	hubURL := bigDatasetHub(t, map[string]map[string]int64{
		"alice/huge":  {"huge.json": 65 << 20},
		"alice/heavy": {"a.json": 700 << 10, "b.json": 700 << 10},
	})
	dataDir := t.TempDir()
	d := startDaemon(t, dataDir, filepath.Join(t.TempDir(), "venv"), "--hub-url", hubURL, "--preload-moves", "none", "--max-download-mib", "1")
	for _, c := range []struct{ dataset, want string }{
		{"alice/huge", "the file huge.json of dataset alice/huge is larger than the cap of 64 MiB per file"},
		{"alice/heavy", "dataset alice/heavy at 0123456789abcdef0123456789abcdef01234567 holds more than the cap of 1 MiB per snapshot"},
	} {
		// The client sends the dataset's slash escaped (%2F), in one segment as the document has it.
		resp, err := d.client().GetApiMoveRecordedMoveDatasetsListDatasetNameWithResponse(context.Background(), c.dataset)
		if err != nil {
			t.Fatal(err)
		}
		if resp.JSONDefault == nil || !strings.Contains(resp.JSONDefault.Detail, c.want) {
			t.Errorf("the move library %s: %s %s, want an error naming %q", c.dataset, resp.Status(), resp.Body, c.want)
		}
	}
	_ = filepath.WalkDir(filepath.Join(dataDir, "datasets"), func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if fi, _ := e.Info(); fi.Size() != 700<<10 && !strings.HasPrefix(e.Name(), ".") {
				t.Errorf("the cache holds %s of %d bytes: a file cut short", p, fi.Size())
			}
			if strings.HasSuffix(filepath.Dir(p), "refs") {
				t.Errorf("the cache holds the ref %s of a refused download", p)
			}
		}
		return nil
	})
}

// Issue 30, item 6, through the built robot-daemon: the broker password (and the owner's token)
// given in the daemon's environment was taken out of the environment its apps inherit, yet stayed
// readable in /proc/<daemon>/environ by every process of the daemon's user, its apps included. The
// daemon is not dumpable now: another process of its user cannot read it. Both run as root without
// any capability (setpriv), as an unprivileged daemon and its apps are: the kernel then decides by
// the user and the dumpable flag alone. (--fleet-password-file keeps the password out of the
// environment altogether.)
func TestDaemonEnvironmentIsNotReadableByItsUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("dropping every capability of a root process (setpriv) needs root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv is not installed")
	}
	const password, token = "fleet-s3cret-in-the-environment", "owner-token-in-the-environment-0123456789"
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a broker that never answers: the daemon starts all the same
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	noCaps := []string{"setpriv", "--inh-caps=-all", "--bounding-set=-all"}
	d := startDaemonWith(t, []string{"ROBOT_FLEET_PASSWORD=" + password, "ROBOT_DAEMON_TOKEN=" + token}, noCaps, t.TempDir(), filepath.Join(t.TempDir(), "venv"),
		"--fleet", "mqtt://"+ln.Addr().String(), "--fleet-id", "robot-env")
	environ := fmt.Sprintf("/proc/%d/environ", d.pid)
	if status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.pid)); !strings.Contains(string(status), "CapEff:\t0000000000000000") {
		t.Fatalf("the daemon runs with capabilities:\n%s", status)
	}
	out, err := exec.Command(noCaps[0], append(noCaps[1:], "cat", environ)...).CombinedOutput()
	if err == nil || strings.Contains(string(out), password) || strings.Contains(string(out), token) {
		t.Fatalf("a process of the daemon's user read %s: %v\n%q", environ, err, out)
	}
	if !strings.Contains(string(out), "Permission denied") {
		t.Errorf("reading %s: %v %s, want permission denied", environ, err, out)
	}
	// The daemon itself still works, and the owner's token from its environment is the one.
	if resp, err := d.client().GetApiDaemonStatusWithResponse(context.Background()); err != nil {
		t.Fatalf("the daemon with its token from the environment: %v", err)
	} else if resp.JSON200 == nil {
		t.Fatalf("the daemon with its token from the environment: %v", daemonclient.Unexpected(resp.HTTPResponse, resp.Body))
	}
}
