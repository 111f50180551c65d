package apps_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"testing/synctest"
	"time"

	"github.com/robothub/robothub/adapters/python"
	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/robotd/pysdk"
)

// venvDir is one apps venv shared by the package's tests: creating one takes seconds.
var venvDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "apps-test-")
	if err != nil {
		panic(err)
	}
	venvDir = filepath.Join(dir, "apps_venv")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// skipShort skips a test that makes or uses a Python venv under -short (make check): those run in
// make test.
func skipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("makes or uses a Python venv: not under -short")
	}
}

// testVenv is a venv at dir whose packages come from Debian's wheels and pip's configuration, its
// changes journaled in the manager's data directory state. It is Debian's interpreter's, with its
// site packages: the robot SDK's numpy, scipy, pydantic and FastAPI are Debian's builds, as no
// package index is reachable here.
func testVenv(t testing.TB, dir, state string) *python.Venv {
	skipShort(t)
	return &python.Venv{Dir: dir, StateDir: state, BasePython: "/usr/bin/python3", SystemSitePackages: true,
		Source: python.Source{WheelDirs: []string{"/usr/share/python-wheels"}}}
}

func appDir(name string) string {
	p, err := filepath.Abs(filepath.Join("testdata", "apps", name))
	if err != nil {
		panic(err)
	}
	return p
}

// newManager returns a prepared manager with its own data dir on the shared venv.
func newManager(t *testing.T, dataDir, version string) *apps.Manager {
	t.Helper()
	skipShort(t)
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	m, err := apps.NewManager(apps.Config{
		DataDir: dataDir, Toolchain: testVenv(t, venvDir, dataDir), SDK: pysdk.Files, SDKVersion: python.SDKVersion(version, pysdk.Files),
		StopTimeout: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := m.Prepare(ctx); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	t.Cleanup(m.Close)
	return m
}

func venvPython(code string) (string, error) {
	out, err := exec.Command(filepath.Join(venvDir, "bin", "python"), "-c", code).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func waitJob(t *testing.T, j *apps.Job) apps.JobInfo {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = j.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("job %s did not finish", j.ID())
	}
	return j.Info()
}

func installOK(t *testing.T, m *apps.Manager, path string) apps.JobInfo {
	t.Helper()
	j, err := m.Install(path)
	if err != nil {
		t.Fatal(err)
	}
	info := waitJob(t, j)
	if info.Status != apps.JobDone {
		t.Fatalf("installing %s: %s %v\n%s", path, info.Status, info.Error, strings.Join(info.Logs, "\n"))
	}
	return info
}

func TestSDKInstalledAtDaemonVersionAndReplacedWhenItDiffers(t *testing.T) {
	m := newManager(t, "", "v1.0.0")
	got, err := venvPython("import robot_sdk; print(robot_sdk.__version__)")
	if err != nil || got != "1.0.0" {
		t.Fatalf("robot_sdk version in the venv: %q (%v), want 1.0.0", got, err)
	}
	if m.SDKVersion() != "1.0.0" {
		t.Fatalf("manager SDK version %s", m.SDKVersion())
	}

	dev := newManager(t, "", "dev-0123456789ab")
	got, _ = venvPython("import robot_sdk; print(robot_sdk.__version__)")
	if got != dev.SDKVersion() || !strings.HasPrefix(got, "0.0.0.dev0+0123456789ab.sdk") {
		t.Fatalf("after a dev daemon prepared the venv, robot_sdk is %q, want %q", got, dev.SDKVersion())
	}
	// The SDK is importable as apps use it.
	// A pose is the public SDK's 4x4 numpy matrix: its yaw is atan2(m[1][0], m[0][0]).
	got, err = venvPython("import math; from robot_sdk import RobotApp, Robot, create_head_pose; p = create_head_pose(yaw=90, degrees=True); print(round(math.atan2(p[1][0], p[0][0]), 4))")
	if err != nil || got != "1.5708" {
		t.Fatalf("create_head_pose(yaw=90, degrees=True).yaw = %q (%v)", got, err)
	}
	// Same version: nothing reinstalled (the dist-info directory is untouched).
	site, _ := filepath.Glob(filepath.Join(venvDir, "lib", "python3*", "site-packages", "robot_sdk-*.dist-info"))
	if len(site) != 1 {
		t.Fatalf("dist-info dirs: %v", site)
	}
	before, _ := os.Stat(site[0])
	newManager(t, "", "dev-0123456789ab")
	after, err := os.Stat(site[0])
	if err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("preparing with the same version reinstalled the SDK (%v)", err)
	}
}

func TestRobotSDKErrorsWhenDaemonIsDown(t *testing.T) {
	newManager(t, "", "dev")
	got, err := venvPython(`
import os
os.environ["ROBOT_DAEMON_URL"] = "http://127.0.0.1:9"
from robot_sdk import Robot, DaemonUnavailableError
try:
    Robot()
except DaemonUnavailableError as e:
    print("unavailable:", e)
`)
	if err != nil || !strings.Contains(got, "unavailable: robot daemon at http://127.0.0.1:9 is not reachable") {
		t.Fatalf("Robot() with the daemon down: %q (%v)", got, err)
	}
}

func TestInstallDiscoverRemoveAndPersist(t *testing.T) {
	dataDir := t.TempDir()
	m := newManager(t, dataDir, "dev")
	info := installOK(t, m, appDir("webui_app"))
	if fmt.Sprint(info.Apps) != "[webui_app]" {
		t.Fatalf("job apps %v", info.Apps)
	}
	logs := strings.Join(info.Logs, "\n")
	for _, want := range []string{"Building the package", "Package webui-app 1.0.0 provides webui_app", "Successfully installed webui-app-1.0.0"} {
		if !strings.Contains(logs, want) {
			t.Errorf("install log lacks %q:\n%s", want, logs)
		}
	}
	app, err := m.App("webui_app")
	if err != nil {
		t.Fatal(err)
	}
	if app.Extra.Module != "webui_app.main" || app.Extra.Class != "WebUIApp" || app.Extra.Version != "1.0.0" ||
		app.Extra.Source != appDir("webui_app") || app.Extra.SourceKind != apps.SourceLocal ||
		app.Extra.CustomAppURL == nil || *app.Extra.CustomAppURL != "http://127.0.0.1:8042" {
		t.Fatalf("discovered app: %+v (custom_app_url %v)", app, app.Extra.CustomAppURL)
	}
	if strings.Contains(app.Description, "web UI") == false {
		t.Fatalf("description %q is not the package summary", app.Description)
	}

	// A new manager on the same data dir (a daemon restart) knows where the app came from.
	again := newManager(t, dataDir, "dev")
	app2, err := again.App("webui_app")
	if err != nil || app2.Extra.Source != appDir("webui_app") || app2.Extra.InstalledAt == nil {
		t.Fatalf("after restart: %+v, %v", app2, err)
	}

	if err := again.SetStartupApp("webui_app"); err != nil {
		t.Fatal(err)
	}
	j, err := again.Remove("webui_app")
	if err != nil {
		t.Fatal(err)
	}
	if info := waitJob(t, j); info.Status != apps.JobDone || fmt.Sprint(info.Apps) != "[webui_app]" {
		t.Fatalf("remove job: %+v", info)
	}
	if _, err := again.App("webui_app"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("after remove: %v, want not found", err)
	}
	if again.StartupApp() != "" {
		t.Fatalf("removing the startup app left it configured: %q", again.StartupApp())
	}
	if _, err := again.Remove("webui_app"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("removing it twice: %v", err)
	}
}

func TestBrokenPackageFailsAndKeepsTheInstalledVersion(t *testing.T) {
	m := newManager(t, "", "dev")
	installOK(t, m, appDir("coop_app"))
	t.Cleanup(func() {
		if j, err := m.Remove("coop_app"); err == nil {
			waitJob(t, j)
		}
	})

	j, err := m.Install(appDir("coop_app_broken"))
	if err != nil {
		t.Fatal(err)
	}
	info := waitJob(t, j)
	if info.Status != apps.JobFailed || info.Error == nil || !strings.Contains(*info.Error, "building the package failed") {
		t.Fatalf("broken install: status %s error %v", info.Status, info.Error)
	}
	logs := strings.Join(info.Logs, "\n")
	if !strings.Contains(logs, "coop_app") || !strings.Contains(strings.ToLower(logs), "error") {
		t.Fatalf("the job log does not carry pip's error:\n%s", logs)
	}
	app, err := m.App("coop_app")
	if err != nil || app.Extra.Version != "1.0.0" {
		t.Fatalf("after the failed upgrade coop_app is %+v (%v), want version 1.0.0 still installed", app.Extra, err)
	}
	if got, err := venvPython("import coop_app.main; print(coop_app.main.CoopApp.__name__)"); err != nil || got != "CoopApp" {
		t.Fatalf("coop_app 1.0.0 no longer imports: %q %v", got, err)
	}

	j, _ = m.Install(appDir("not_an_app"))
	info = waitJob(t, j)
	if info.Status != apps.JobFailed || !strings.Contains(*info.Error, "declares no entry point in group robot_apps") {
		t.Fatalf("installing a non-app: %s %v", info.Status, info.Error)
	}
	if got, _ := venvPython("import importlib.util; print(importlib.util.find_spec('not_an_app'))"); got != "None" {
		t.Fatalf("a package without entry point was installed anyway: %s", got)
	}
}

func TestUnknownAppsAndJobs(t *testing.T) {
	m := newManager(t, "", "dev")
	for _, name := range []string{"nope", "../../etc/passwd", "coop_app; rm -rf /", ""} {
		if _, err := m.Start(name); !errors.Is(err, fault.ErrNotFound) {
			t.Errorf("Start(%q) = %v, want not found", name, err)
		}
	}
	if _, err := m.Job("0123"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("unknown job: %v", err)
	}
	if err := m.SetStartupApp("nope"); !errors.Is(err, fault.ErrRefused) || err.Error() != "App 'nope' is not installed" {
		t.Errorf("startup app not installed: %v, want refused (400, as the anchor)", err)
	}
	if _, err := m.Install(""); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("empty url: %v", err)
	}
	if _, err := m.Stop(); !errors.Is(err, fault.ErrRefused) || err.Error() != "No app is currently running" {
		t.Errorf("stop with nothing running: %v", err)
	}
	if st := m.Status(); st != nil {
		t.Errorf("status before any app: %+v", st)
	}
}

// TestRemoteSessionsHoldNoSlot runs in a synctest bubble: the TTL and the heartbeats are on its
// clock, so the test neither waits nor depends on the machine's load. Many SDK clients connect at
// once, as the anchor lets them; the app slot stays free for an app.
func TestRemoteSessionsHoldNoSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data := t.TempDir()
		m, err := apps.NewManager(apps.Config{DataDir: data, Toolchain: testVenv(t, venvDir, data), SDK: pysdk.Files, SessionTTL: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		s, err := m.OpenSession(apps.SessionRequest{PID: os.Getpid(), Local: true, Client: "notebook"})
		if err != nil || s.Kind != "remote" {
			t.Fatalf("open: %+v %v", s, err)
		}
		second, err := m.OpenSession(apps.SessionRequest{Client: "second"})
		if err != nil || second.Kind != "remote" {
			t.Fatalf("a second remote session: %+v %v, want it open beside the first", second, err)
		}
		if slot := m.Slot(); slot.State != "free" {
			t.Fatalf("slot with two SDK clients: %+v, want free for an app", slot)
		}
		if n := len(m.Sessions()); n != 2 {
			t.Fatalf("%d sessions listed, want 2", n)
		}
		// Heartbeats keep it; silence expires it.
		for range 3 {
			time.Sleep(150 * time.Millisecond)
			if _, err := m.Heartbeat(s.ID); err != nil {
				t.Fatalf("heartbeat: %v", err)
			}
		}
		if n := len(m.Sessions()); n != 1 {
			t.Fatalf("%d sessions listed after the second went silent, want 1", n)
		}
		time.Sleep(400 * time.Millisecond)
		if _, err := m.Heartbeat(s.ID); !errors.Is(err, fault.ErrNotFound) {
			t.Fatalf("heartbeat on an expired session: %v", err)
		}
		s2, _ := m.OpenSession(apps.SessionRequest{Client: "again"})
		if err := m.CloseSession(s2.ID); err != nil {
			t.Fatal(err)
		}
		if err := m.CloseSession(s2.ID); !errors.Is(err, fault.ErrNotFound) {
			t.Fatalf("closing twice: %v", err)
		}
	})
}

func TestJobLogFollow(t *testing.T) {
	m := newManager(t, "", "dev")
	j, err := m.Install(appDir("crash_app"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if j, err := m.Remove("crash_app"); err == nil {
			waitJob(t, j)
		}
	})
	var seen []string
	for {
		lines, status, changed := j.Follow(len(seen))
		seen = append(seen, lines...)
		if status.Finished() {
			break
		}
		select {
		case <-changed:
		case <-time.After(time.Minute):
			t.Fatal("no progress")
		}
	}
	if got := j.Info().Logs; strings.Join(got, "\n") != strings.Join(seen, "\n") {
		t.Fatalf("following the log gave %d lines, the job has %d", len(seen), len(got))
	}
	if seen[0] != "Installing from "+appDir("crash_app")+" (local)" || !strings.HasPrefix(seen[len(seen)-1], "Job 'install") {
		t.Fatalf("log starts %q, ends %q", seen[0], seen[len(seen)-1])
	}
}

// A daemon killed while `python -m venv` ran leaves an interpreter without pip (the last step of
// venv creation). The next Prepare completes the venv, and apps install into it.
func TestVenvWhoseCreationWasCutShortIsCompleted(t *testing.T) {
	venv := filepath.Join(t.TempDir(), "apps_venv")
	if out, err := exec.Command("python3", "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Fatalf("python3 -m venv --without-pip: %v\n%s", err, out)
	}
	data := t.TempDir()
	m, err := apps.NewManager(apps.Config{DataDir: data, Toolchain: testVenv(t, venv, data), SDK: pysdk.Files, SDKVersion: python.SDKVersion("v1.0.0", pysdk.Files)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := m.Prepare(ctx); err != nil {
		t.Fatalf("Prepare on a venv without pip: %v", err)
	}
	installOK(t, m, appDir("coop_app"))
	if list := m.List(); len(list) != 1 || list[0].Name != "coop_app" {
		t.Fatalf("apps after installing into the completed venv: %+v", list)
	}
	if out, err := exec.Command(filepath.Join(venv, "bin", "python"), "-m", "pip", "--version").CombinedOutput(); err != nil {
		t.Fatalf("pip in the completed venv: %v\n%s", err, out)
	}
}

// The SDK's dependencies are its pyproject.toml's, read as TOML: the public SDK's five, with the
// ranges written there, and a [project] without any gives none.
func TestSDKDependenciesAreThoseOfItsPyproject(t *testing.T) {
	got := apps.SDKDependencies(pysdk.Files)
	var names []string
	for _, r := range got {
		names = append(names, strings.FieldsFunc(r, func(c rune) bool { return strings.ContainsRune("<>=!~;[ ", c) })[0])
	}
	if want := []string{"numpy", "scipy", "pydantic", "fastapi", "uvicorn"}; !slices.Equal(names, want) {
		t.Fatalf("SDK dependencies %q, want the distributions %q", got, want)
	}
	none := fstest.MapFS{"pyproject.toml": {Data: []byte("[project]\nname = \"x\"\n# dependencies = [\"numpy\"]\n")}}
	if got := apps.SDKDependencies(none); len(got) != 0 {
		t.Fatalf("dependencies of a project without any: %q", got)
	}
}

// A daemon that stops lets go of its data dir only once no job of its can still write there: a job
// waiting for its turn is cancelled, the one changing the venv ends first (within
// JobsShutdownWait). A test that stopped its daemon right after a remove saw the job's writes land
// in the data dir after the daemon had returned.
func TestCloseEndsEveryJobBeforeItReturns(t *testing.T) {
	m := newManager(t, "", "dev")
	first, err := m.Install(appDir("webui_app"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := m.Install(appDir("coop_app"))
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	for _, j := range []*apps.Job{first, second} {
		if info := j.Info(); info.Status != apps.JobDone && info.Status != apps.JobFailed {
			t.Fatalf("job %s (%s %s) is %s after Close returned", info.ID, info.Command, info.Target, info.Status)
		}
	}
	// The second job had not changed the venv (it waited for its turn, or built its package):
	// cancelled, saying the installed version is unchanged.
	if info := second.Info(); info.Status != apps.JobFailed || info.Error == nil || !strings.Contains(*info.Error, "cancelled") ||
		!(strings.Contains(*info.Error, "before it started") || strings.Contains(*info.Error, "is unchanged")) {
		t.Fatalf("the second job: %s %q, want cancelled with the venv unchanged", info.Status, derefOr(info.Error))
	}
}

func derefOr(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
