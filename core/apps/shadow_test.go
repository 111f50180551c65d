package apps_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/adapters/python"
	"github.com/robothub/robothub/core/apps"
)

// shadowingCopy copies coop_app as version 1.1.0 with extra top-level modules and packages.
func shadowingCopy(t *testing.T, modules, packages []string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "coop_app")
	if err := python.CopyPackage(dir, appDir("coop_app")); err != nil {
		t.Fatal(err)
	}
	py := filepath.Join(dir, "pyproject.toml")
	data, _ := os.ReadFile(py)
	text := strings.Replace(string(data), `version = "1.0.0"`, `version = "1.1.0"`, 1)
	text = strings.Replace(text, `packages = ["coop_app"]`, `packages = ["coop_app"`+quoteList(packages)+`]`+"\npy-modules = ["+strings.TrimPrefix(quoteList(modules), ", ")+"]", 1)
	if err := os.WriteFile(py, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range packages {
		os.MkdirAll(filepath.Join(dir, p), 0o755)
		os.WriteFile(filepath.Join(dir, p, "__init__.py"), []byte("raise SystemExit('shadowed')\n"), 0o644)
	}
	for _, m := range modules {
		os.WriteFile(filepath.Join(dir, m+".py"), []byte("raise SystemExit('shadowed')\n"), 0o644)
	}
	return dir
}

func quoteList(names []string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteString(`, "` + n + `"`)
	}
	return b.String()
}

func TestUpdateThatShadowsTheRuntimeIsRefused(t *testing.T) {
	m := newManager(t, "", "dev")
	installOK(t, m, appDir("coop_app"))
	t.Cleanup(func() {
		if j, err := m.Remove("coop_app"); err == nil {
			waitJob(t, j)
		}
	})
	sdkBefore, err := venvPython("import robot_sdk; print(robot_sdk.__file__, robot_sdk.Robot.__name__)")
	if err != nil {
		t.Fatalf("robot_sdk: %s %v", sdkBefore, err)
	}
	for _, c := range []struct {
		name              string
		modules, packages []string
		want              []string
	}{
		{"the SDK", nil, []string{"robot_sdk"}, []string{"robot_sdk/__init__.py (robot_sdk, the robot SDK the daemon provides)"}},
		{"pip and sitecustomize", []string{"sitecustomize"}, []string{"pip"}, []string{"pip/__init__.py (pip, the installer", "sitecustomize.py (sitecustomize, a module Python runs at every start)"}},
		{"the standard library", []string{"json", "ssl"}, nil, []string{"json.py (json, a standard-library module)", "ssl.py (ssl, a standard-library module)"}},
	} {
		j, err := m.Install(shadowingCopy(t, c.modules, c.packages))
		if err != nil {
			t.Fatal(err)
		}
		info := waitJob(t, j)
		if info.Status != apps.JobFailed || info.Error == nil {
			t.Fatalf("%s: an update that shadows it: %s", c.name, info.Status)
		}
		for _, w := range append(c.want, "package coop-app refused: the package would shadow the apps' runtime", "the installed version, if any, is unchanged") {
			if !strings.Contains(*info.Error, w) {
				t.Errorf("%s: error %q lacks %q", c.name, *info.Error, w)
			}
		}
		app, err := m.App("coop_app")
		if err != nil || app.Extra.Version != "1.0.0" {
			t.Fatalf("%s: after the refused update coop_app is %+v (%v), want 1.0.0", c.name, app.Extra, err)
		}
		if got, err := venvPython("import coop_app.main, json, ssl, robot_sdk; print(robot_sdk.__file__, robot_sdk.Robot.__name__)"); err != nil || got != sdkBefore {
			t.Fatalf("%s: after the refused update: %q %v, want %q", c.name, got, err, sdkBefore)
		}
	}
}
