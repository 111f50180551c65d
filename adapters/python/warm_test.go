package python

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/robothub/robothub/core/procgroup/procinfo"
)

// testVenv is a venv of Debian's Python that sees the system's setuptools and wheel, as the
// daemon's --system-site-packages apps venv does: made once for the tests of this file.
var testVenv = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "pytool-warm-")
	if err != nil {
		return "", err
	}
	v := &Venv{Dir: filepath.Join(dir, "venv"), BasePython: "/usr/bin/python3", SystemSitePackages: true}
	var log strings.Builder
	if err := v.Create(context.Background(), &log, false); err != nil {
		return "", err
	}
	return v.Dir, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := testVenv(); err == nil && dir != "" {
		_ = os.RemoveAll(filepath.Dir(dir))
	}
	os.Exit(code)
}

// venvForTest copies the shared venv's settings into a fresh Venv value (its own warm slots).
func venvForTest(t *testing.T) *Venv {
	t.Helper()
	if testing.Short() {
		t.Skip("creates a venv")
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	dir, err := testVenv()
	if err != nil {
		t.Fatal(err)
	}
	return &Venv{Dir: dir, BasePython: "/usr/bin/python3", SystemSitePackages: true, StateDir: t.TempDir()}
}

func writePackage(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const setuptoolsProject = `[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "warm-probe"
version = "2.0.1"

[tool.setuptools]
packages = ["warm_probe"]
`

// A build and an install started ahead: the wheel is built and installed by them, and what the
// venv's Python imports is the new version.
func TestPrestartedBuildAndInstall(t *testing.T) {
	v := venvForTest(t)
	stop := v.Prestart()
	defer stop()
	build, pip := v.warmBuild.proc, v.warmPip.proc
	if build == nil || pip == nil {
		t.Fatalf("Prestart started build %v and pip %v, want both", build, pip)
	}
	src := writePackage(t, map[string]string{"pyproject.toml": setuptoolsProject, "warm_probe/__init__.py": "VERSION = 'two'\n"})
	var log strings.Builder
	w, err := v.BuildWheel(context.Background(), &log, src, t.TempDir())
	if err != nil {
		t.Fatalf("build: %v\n%s", err, log.String())
	}
	if w.Name != "warm-probe" || w.Version != "2.0.1" {
		t.Fatalf("built %s %s", w.Name, w.Version)
	}
	if v.warmBuild.proc != nil || build.waitErr != nil {
		t.Fatalf("the build did not go through the Python started ahead (it exited: %v)", build.waitErr)
	}
	if err := v.Install(context.Background(), &log, w.Path); err != nil {
		t.Fatalf("install: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "(started ahead)") || v.warmPip.proc != nil {
		t.Fatalf("the install did not use the pip started ahead:\n%s", log.String())
	}
	defer func() { _ = v.Uninstall(context.Background(), &log, "warm-probe") }()
	out, err := exec.Command(v.Python(), "-I", "-c", "import warm_probe; print(warm_probe.VERSION)").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "two" {
		t.Fatalf("after the install, warm_probe.VERSION: %s %v", out, err)
	}
}

// A package whose build backend is its own (backend-path) is not built in a Python that imported
// setuptools first: the Python started ahead declines, and a fresh one runs the package's backend.
func TestBuildWithItsOwnBackendGetsAFreshPython(t *testing.T) {
	v := venvForTest(t)
	defer v.Prestart()()
	src := writePackage(t, map[string]string{
		"pyproject.toml": strings.Replace(setuptoolsProject, `build-backend = "setuptools.build_meta"`,
			"build-backend = \"own_backend\"\nbackend-path = [\"_build\"]", 1),
		"_build/own_backend.py": "import os\nfrom setuptools.build_meta import *\nfrom setuptools.build_meta import build_wheel as _bw\n\n" +
			"def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):\n" +
			"    open(os.path.join(wheel_directory, 'own-backend-ran'), 'w').close()\n" +
			"    return _bw(wheel_directory, config_settings, metadata_directory)\n",
		"warm_probe/__init__.py": "",
	})
	out := t.TempDir()
	var log strings.Builder
	w, err := v.BuildWheel(context.Background(), &log, src, out)
	if err != nil {
		t.Fatalf("build: %v\n%s", err, log.String())
	}
	if _, err := os.Stat(filepath.Join(out, "own-backend-ran")); err != nil || w.Version != "2.0.1" {
		t.Fatalf("the package's own backend did not build it (%v), wheel %+v", err, w)
	}
}

// A build backend that fails names why in the error, after the Python started ahead took it.
func TestFailedBuildSaysWhy(t *testing.T) {
	v := venvForTest(t)
	defer v.Prestart()()
	src := writePackage(t, map[string]string{"pyproject.toml": strings.Replace(setuptoolsProject, `version = "2.0.1"`, `version = "not a version"`, 1),
		"warm_probe/__init__.py": ""})
	var log strings.Builder
	_, err := v.BuildWheel(context.Background(), &log, src, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "building the package failed") || !strings.Contains(err.Error(), "project.version") {
		t.Fatalf("error %v, want the build's failure naming the bad field\n%s", err, log.String())
	}
}

// What no step took dies with the job: stop leaves no Python behind.
func TestPrestartStopEndsUnusedPythons(t *testing.T) {
	v := venvForTest(t)
	stop := v.Prestart()
	build, pip := v.warmBuild.proc, v.warmPip.proc
	if build == nil || pip == nil {
		t.Fatal("Prestart started nothing")
	}
	stop()
	for _, p := range []*warmPython{build, pip} {
		select {
		case <-p.exited:
		default:
			t.Fatalf("process %d still runs after stop", p.cmd.Process.Pid)
		}
		if procinfo.Alive(p.cmd.Process.Pid) {
			t.Fatalf("process %d alive after stop", p.cmd.Process.Pid)
		}
	}
	if v.warmBuild.proc != nil || v.warmPip.proc != nil {
		t.Fatal("the slots still hold ended Pythons")
	}
	// The steps then start their own, as without Prestart.
	var log strings.Builder
	src := writePackage(t, map[string]string{"pyproject.toml": setuptoolsProject, "warm_probe/__init__.py": ""})
	if _, err := v.BuildWheel(context.Background(), &log, src, t.TempDir()); err != nil {
		t.Fatalf("build without a Python started ahead: %v\n%s", err, log.String())
	}
}

// Ensure asks pip about build tools the system's site-packages provides once, not at every job:
// each time was 0.6-0.9 s of each update.
func TestEnsureAsksPipOnceAboutTheSystemsBuildTools(t *testing.T) {
	v := venvForTest(t)
	site, err := v.SitePackages()
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(site, "wheel-*.dist-info")); len(m) > 0 {
		t.Skip("wheel is installed in the venv itself here")
	}
	var first, second strings.Builder
	if err := v.Ensure(context.Background(), &first); err != nil {
		t.Fatalf("%v\n%s", err, first.String())
	}
	if !strings.Contains(first.String(), "Running python") {
		t.Skipf("pip was not needed the first time either:\n%s", first.String())
	}
	if err := v.Ensure(context.Background(), &second); err != nil {
		t.Fatalf("%v\n%s", err, second.String())
	}
	if second.Len() != 0 {
		t.Fatalf("the second Ensure ran again:\n%s", second.String())
	}
}
