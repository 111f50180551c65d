package apps_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/python"
	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/internal/testkit/pyindex"
	"github.com/robothub/robothub/robotd/pysdk"
)

// writeDepApp writes, in a new folder, an app package dep_app at version that requires requires.
// Its module prints the version of the dep package it imports, then idles until SIGINT: an app
// that runs only if its dependencies were installed.
func writeDepApp(t testing.TB, version string, requires ...string) string {
	t.Helper()
	dir := t.TempDir()
	quoted := make([]string, len(requires))
	for i, r := range requires {
		quoted[i] = fmt.Sprintf("%q", r)
	}
	files := map[string]string{
		"pyproject.toml": fmt.Sprintf(`[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "dep-app"
version = %q
requires-python = ">=3.9"
dependencies = [%s]

[project.entry-points.robot_apps]
dep_app = "dep_app.main:DepApp"

[tool.setuptools]
packages = ["dep_app"]
`, version, strings.Join(quoted, ", ")),
		"README.md":              "---\ntags: [robot_python_app]\n---\n",
		"dep_app/__init__.py":    "",
		"dep_app/main.py":        "import time\nimport dep\n\nclass DepApp:\n    pass\n\nif __name__ == \"__main__\":\n    print(\"dep_app " + version + " with dep\", dep.VERSION, flush=True)\n    try:\n        while True:\n            time.sleep(0.05)\n    except KeyboardInterrupt:\n        pass\n",
		"dep_app/__version__.py": fmt.Sprintf("VERSION = %q\n", version),
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

// indexManager is a manager on a venv of its own whose packages come from the index of pip's
// configuration, which the test points at idx through PIP_INDEX_URL, as a user would.
func indexManager(t testing.TB, venv *python.Venv, cfg apps.Config) *apps.Manager {
	skipShort(t)
	t.Helper()
	if venv.Source.WheelDirs == nil {
		venv.Source.WheelDirs = []string{"/usr/share/python-wheels"}
	}
	cfg.DataDir, cfg.Toolchain, cfg.SDK, cfg.StopTimeout = t.TempDir(), venv, pysdk.Files, 2*time.Second
	venv.StateDir, cfg.SDKVersion = cfg.DataDir, python.SDKVersion("dev", pysdk.Files)
	m, err := apps.NewManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := m.Prepare(ctx); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	t.Cleanup(m.Close)
	return m
}

func pythonIn(t *testing.T, venv, code string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(venv, "bin", "python"), "-c", code).CombinedOutput()
	if err != nil {
		t.Fatalf("python -c %q: %v\n%s", code, err, out)
	}
	return strings.TrimSpace(string(out))
}

// jobOf waits for the job a call started: jobOf(t)(m.Install(dir)).
func jobOf(t *testing.T) func(*apps.Job, error) apps.JobInfo {
	return func(j *apps.Job, err error) apps.JobInfo {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return waitJob(t, j)
	}
}

// TestInstallResolvesDependenciesFromTheIndex installs an app requiring dep>=1.1 from a PEP 503
// index found through pip's own configuration; an update picks up dep 1.2 once it is published;
// an update whose requirement cannot be resolved fails with pip's message naming it, and the
// version running before keeps running.
func TestInstallResolvesDependenciesFromTheIndex(t *testing.T) {
	idx := pyindex.New()
	defer idx.Close()
	idx.Publish("dep", "1.1")
	t.Setenv("PIP_INDEX_URL", idx.URL())
	venv := filepath.Join(t.TempDir(), "venv")
	m := indexManager(t, &python.Venv{Dir: venv}, apps.Config{})

	v1 := writeDepApp(t, "1.0.0", "dep>=1.1")
	info := jobOf(t)(m.Install(v1))
	if info.Status != apps.JobDone {
		t.Fatalf("install: %s %v\n%s", info.Status, deref(info.Error), strings.Join(info.Logs, "\n"))
	}
	if !idx.Asked("dep") {
		t.Fatalf("the index was not asked for dep: %v", idx.Requests())
	}
	if got := pythonIn(t, venv, "import dep; print(dep.VERSION)"); got != "1.1" {
		t.Fatalf("dep installed at %s, want 1.1", got)
	}

	idx.Publish("dep", "1.2")
	info = jobOf(t)(m.UpdateApp("dep_app"))
	if info.Status != apps.JobDone {
		t.Fatalf("update: %s %v\n%s", info.Status, deref(info.Error), strings.Join(info.Logs, "\n"))
	}
	if got := pythonIn(t, venv, "import dep; print(dep.VERSION)"); got != "1.2" {
		t.Fatalf("after the update dep is at %s, want 1.2\n%s", got, strings.Join(info.Logs, "\n"))
	}

	if _, err := m.Start("dep_app"); err != nil {
		t.Fatal(err)
	}
	waitAppState(t, m, apps.StateRunning)
	before := m.Status()
	// The source moves to a version whose requirement the index does not have.
	v2 := writeDepApp(t, "2.0.0", "dep>=1.1", "missing-dep>=1")
	replaceDir(t, v1, v2)
	info = jobOf(t)(m.UpdateApp("dep_app"))
	if info.Status != apps.JobFailed || info.Error == nil || !strings.Contains(*info.Error, "No matching distribution found for missing-dep>=1") {
		t.Fatalf("update to an unresolvable version: %s %v, want failed naming missing-dep>=1\n%s", info.Status, deref(info.Error), strings.Join(info.Logs, "\n"))
	}
	if !strings.Contains(*info.Error, "the installed version, if any, is unchanged") {
		t.Errorf("the error does not say the installed version is kept: %s", *info.Error)
	}
	if a, err := m.App("dep_app"); err != nil || a.Extra.Version != "1.0.0" {
		t.Fatalf("after the failed update the installed app is %+v (%v), want version 1.0.0", a.Extra, err)
	}
	if st := m.Status(); st == nil || st.State != apps.StateRunning || st.Info.Name != before.Info.Name || st.Info.Extra.Version != "1.0.0" {
		t.Fatalf("the app running before the failed update: %+v", st)
	}
	if got := pythonIn(t, venv, "import importlib.util; print(importlib.util.find_spec('missing_dep') is None)"); got != "True" {
		t.Fatal("a package of the failed update is installed")
	}
}

// replaceDir replaces the contents of dst with those of src.
func replaceDir(t *testing.T, dst, src string) {
	t.Helper()
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

func waitAppState(t *testing.T, m *apps.Manager, want apps.AppState) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := m.Status()
		if st != nil && st.State == want {
			return
		}
		if st != nil && !st.State.Active() {
			t.Fatalf("app ended: %+v", st)
		}
		if time.Now().After(deadline) {
			t.Fatalf("app status %+v, want %s", st, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestIndexURLAndOfflineInstalls: --index-url points pip at an index even when pip's configuration
// names another; offline, only the wheel directories are used and the index is never asked, and a
// requirement missing from them fails naming it.
func TestIndexURLAndOfflineInstalls(t *testing.T) {
	idx := pyindex.New()
	defer idx.Close()
	idx.Publish("dep", "1.1")
	// pip's own configuration points at nothing that answers: the flag must win.
	t.Setenv("PIP_INDEX_URL", "http://127.0.0.1:1/simple")
	venv := filepath.Join(t.TempDir(), "venv")
	m := indexManager(t, &python.Venv{Dir: venv, Source: python.Source{IndexURL: idx.URL()}}, apps.Config{})
	info := jobOf(t)(m.Install(writeDepApp(t, "1.0.0", "dep>=1.1")))
	if info.Status != apps.JobDone || !idx.Asked("dep") {
		t.Fatalf("install with --index-url: %s %v (index asked: %v)\n%s", info.Status, deref(info.Error), idx.Requests(), strings.Join(info.Logs, "\n"))
	}

	// Offline: the dependency's wheel in a wheel directory of its own.
	wheels := t.TempDir()
	name, data := pyindex.BuildWheel("dep", "1.1", map[string]string{"dep/__init__.py": "VERSION = 'offline'\n"})
	if err := os.WriteFile(filepath.Join(wheels, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	offIdx := pyindex.New()
	defer offIdx.Close()
	offIdx.Publish("dep", "1.1")
	t.Setenv("PIP_INDEX_URL", offIdx.URL())
	venv2 := filepath.Join(t.TempDir(), "venv")
	off := indexManager(t, &python.Venv{Dir: venv2, Source: python.Source{Offline: true, WheelDirs: []string{"/usr/share/python-wheels", wheels}}}, apps.Config{})
	info = jobOf(t)(off.Install(writeDepApp(t, "1.0.0", "dep>=1.1")))
	if info.Status != apps.JobDone {
		t.Fatalf("offline install: %s %v\n%s", info.Status, deref(info.Error), strings.Join(info.Logs, "\n"))
	}
	if got := pythonIn(t, venv2, "import dep; print(dep.VERSION)"); got != "offline" {
		t.Fatalf("offline dep is %q, want the wheel directory's", got)
	}
	if len(offIdx.Requests()) != 0 {
		t.Fatalf("an offline install asked the index: %v", offIdx.Requests())
	}
	info = jobOf(t)(off.Install(writeDepApp(t, "1.0.1", "other-dep")))
	if info.Status != apps.JobFailed || !strings.Contains(deref(info.Error), "other-dep") {
		t.Fatalf("offline install of a missing requirement: %s %v, want failed naming other-dep", info.Status, deref(info.Error))
	}
}

// TestSystemSitePackages: with --system-site-packages the apps venv imports the system's numpy
// (Debian's python3-numpy for /usr/bin/python3), and turning it off hides it again.
func TestSystemSitePackages(t *testing.T) {
	const system = "/usr/bin/python3"
	if err := exec.Command(system, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s has no numpy (Debian's python3-numpy): %v", system, err)
	}
	venv := filepath.Join(t.TempDir(), "venv")
	indexManager(t, &python.Venv{Dir: venv, BasePython: system, SystemSitePackages: true, Source: python.Source{Offline: true}}, apps.Config{})
	if got := pythonIn(t, venv, "import numpy, sys; print(numpy.__file__.startswith(sys.prefix))"); got != "False" {
		t.Fatalf("numpy in the apps venv comes from %q, want the system's", got)
	}
	indexManager(t, &python.Venv{Dir: venv, BasePython: system, SystemSitePackages: false, Source: python.Source{Offline: true}}, apps.Config{})
	out, err := exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import numpy").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "No module named 'numpy'") {
		t.Fatalf("without --system-site-packages the venv still imports numpy: %v %s", err, out)
	}
}

// TestInstallWithUV runs a real install with uv when it is on PATH.
func TestInstallWithUV(t *testing.T) {
	uv, err := exec.LookPath("uv")
	if err != nil {
		t.Skip("uv is not on PATH: installs with uv are not exercised on this machine (TestInstallCommand checks the command the daemon would run)")
	}
	idx := pyindex.New()
	defer idx.Close()
	idx.Publish("dep", "1.1")
	venv := filepath.Join(t.TempDir(), "venv")
	m := indexManager(t, &python.Venv{Dir: venv, Source: python.Source{UV: uv, IndexURL: idx.URL()}}, apps.Config{})
	info := jobOf(t)(m.Install(writeDepApp(t, "1.0.0", "dep>=1.1")))
	if info.Status != apps.JobDone || !idx.Asked("dep") {
		t.Fatalf("install with uv: %s %v\n%s", info.Status, deref(info.Error), strings.Join(info.Logs, "\n"))
	}
}
