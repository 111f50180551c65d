package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/testkit/pyindex"
)

// edit replaces old with new in a file of an app, failing when old is not there.
func edit(t testing.TB, path, old, new string) {
	t.Helper()
	text := readFile(t, path)
	if !strings.Contains(text, old) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(text, old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheckPassesOnACreatedApp(t *testing.T) {
	dir := mustCreate(t, "good_app")
	t.Parallel() // the check runs in a process of its own (see TestCheckReportsBrokenPackages)
	// How long a check takes is measured by BenchmarkCheck (make bench-apps), not here:
	// a wall-clock limit in a test fails on a loaded machine.
	r := runCLIProcess(t, nil, nil, "check", dir)
	if r.code != 0 {
		t.Fatalf("check of a created app: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, s := range []string{
		`ok    entry point robot_apps: good_app = "good_app.main:GoodApp"`,
		"ok    good_app/main.py:10: class GoodApp derives from RobotApp",
		"ok    README.md: tagged robot_python_app",
		`ok    the install registers entry point good_app = "good_app.main:GoodApp", which loads a RobotApp subclass`,
		"ok    the install includes the 3 static/ file(s) of the web UI",
		"ok    uninstall removes the entry point",
		"All checks passed",
	} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "FAIL") || strings.Contains(r.stdout, "skip") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	// check leaves the package as it was: no build output, no egg-info, no caches.
	if got := files(t, dir); len(got) != 10 {
		t.Errorf("check changed the package: %v", got)
	}
}

// Each broken package gets its own message, naming what to fix.
func TestCheckReportsBrokenPackages(t *testing.T) {
	tests := []struct {
		name    string
		breakIt func(t *testing.T, dir string)
		want    []string
	}{
		{"no entry point", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "pyproject.toml"), "[project.entry-points.robot_apps]\nbroken = \"broken.main:Broken\"\n", "")
		}, []string{"FAIL  pyproject.toml: no entry point in group robot_apps: the daemon would not find the app",
			"fix: add to pyproject.toml:", "[project.entry-points.robot_apps]", `broken = "broken.main:Broken"`,
			"skip  install into a temporary venv"}},
		{"wrong group", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "pyproject.toml"), "[project.entry-points.robot_apps]", "[project.entry-points.robot-apps]")
		}, []string{`FAIL  pyproject.toml:15: entry points are in group "robot-apps", not robot_apps`,
			"fix: rename the table to [project.entry-points.robot_apps] (with underscores)"}},
		{"wrong module", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "pyproject.toml"), `"broken.main:Broken"`, `"broken.app:Broken"`)
		}, []string{"FAIL  pyproject.toml:16: entry point broken names module broken.app; the daemon runs python -m broken.main"}},
		{"missing tag", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "README.md"), "  - robot_python_app\n", "")
		}, []string{"FAIL  README.md:10: tags do not include robot_python_app: the app store would not list the app",
			"fix: add the line   - robot_python_app   under tags:"}},
		{"no tags", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "README.md"), "tags:\n  - robot\n  - robot_python_app\n", "")
		}, []string{"FAIL  README.md: front matter has no tags: the app store lists only spaces tagged robot_python_app"}},
		{"class not derived", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "broken", "main.py"), "class Broken(RobotApp):", "class Broken(object):")
		}, []string{"FAIL  broken/main.py:10: class Broken does not derive from RobotApp (bases: object)",
			"fix: declare it as class Broken(RobotApp), with from robot_sdk import RobotApp",
			"FAIL  the entry point loads broken.main.Broken, which is not a subclass of robot_sdk.RobotApp"}},
		{"invalid front matter", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "README.md"), "title: Broken", "title: Broken: the app")
		}, []string{"FAIL  README.md:2: front matter is not valid YAML: mapping values are not allowed in this context (\": \" inside a value: quote the value)"}},
		{"unclosed front matter", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "README.md"), "  - robot_python_app\n---\n", "  - robot_python_app\n")
		}, []string{"FAIL  README.md:1: the front matter that starts here is not closed by a --- line"}},
		{"no front matter", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Broken\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"FAIL  README.md has no front matter"}},
		{"no title", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "README.md"), "title: Broken\n", "")
		}, []string{"FAIL  README.md: front matter has no title"}},
		{"invalid toml", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "pyproject.toml"), `version = "0.1.0"`, `version = 0.1.0"`)
		}, []string{"FAIL  pyproject.toml:7: not valid TOML:"}},
		{"no main block", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "broken", "main.py"), `if __name__ == "__main__":`, `def unused():`)
		}, []string{`FAIL  broken/main.py: no if __name__ == "__main__": block: the daemon runs python -m broken.main, which would do nothing`}},
		{"no run", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "broken", "main.py"), "def run(self, robot: Robot, stop_event: threading.Event)", "def loop(self, robot: Robot, stop_event: threading.Event)")
		}, []string{"FAIL  broken/main.py:10: class Broken has no run method"}},
		{"syntax error", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "broken", "main.py"), "import math", "import math(")
		}, []string{"FAIL  broken/main.py:3: SyntaxError:"}},
		{"static files not packaged", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "pyproject.toml"), "[tool.setuptools.package-data]\nbroken = [\"static/*\"]\n", "")
		}, []string{"FAIL  the install leaves out static/ files: index.html, main.js, style.css",
			"[tool.setuptools.package-data]"}},
		{"import error", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "broken", "main.py"), "import math", "import math\nimport numpy_that_is_not_here")
		}, []string{"FAIL  loading broken.main:Broken in a clean venv failed: ModuleNotFoundError: No module named 'numpy_that_is_not_here'"}},
		{"unavailable dependency", func(t *testing.T, dir string) {
			idx := pyindex.New()
			t.Cleanup(idx.Close)
			t.Setenv("PIP_INDEX_URL", idx.URL()) // pip's own configuration, which check follows
			edit(t, filepath.Join(dir, "pyproject.toml"), "dependencies = []", `dependencies = ["nonexistent-robot-lib>=2"]`)
		}, []string{"FAIL  pip could not install the package into a temporary venv from the package index of pip's configuration:", "No matching distribution found for nonexistent-robot-lib>=2"}},
		{"shadows the runtime", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "pyproject.toml"), `packages = ["broken"]`, `packages = ["broken", "robot_sdk"]`+"\npy-modules = [\"json\"]")
			for f, text := range map[string]string{"robot_sdk/__init__.py": "", "json.py": ""} {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
				if err := os.WriteFile(filepath.Join(dir, f), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}, []string{"FAIL  the package would shadow the apps' runtime: it installs json.py (json, a standard-library module), robot_sdk/__init__.py (robot_sdk, the robot SDK the daemon provides)",
			"fix: the robot refuses this package"}},
		{"no package marker and no landing page", func(t *testing.T, dir string) {
			for _, f := range []string{"broken/__init__.py", "index.html"} {
				if err := os.Remove(filepath.Join(dir, f)); err != nil {
					t.Fatal(err)
				}
			}
		}, []string{"FAIL  index.html is missing: it is part of the space's landing page", "FAIL  broken/__init__.py is missing: broken is not a Python package"}},
		{"no pyproject", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "pyproject.toml"))
		}, []string{"FAIL  pyproject.toml is missing: this folder is not a Python package"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := mustCreate(t, "broken")
			tt.breakIt(t, dir)
			// The checks run two at a time, each in a process of its own (runCLIProcess):
			// urfave/cli/v2 applies its global help flag (cli.HelpFlag) to each App it runs,
			// a data race when two run in one process. The case that sets PIP_INDEX_URL with
			// t.Setenv runs alone and in-process, before the parallel ones resume, so its
			// variable reaches no other case.
			var r result
			if tt.name == "unavailable dependency" {
				r = runCLI(t, nil, "check", dir)
			} else {
				t.Parallel()
				r = runCLIProcess(t, nil, nil, "check", dir)
			}
			if r.code != exitError {
				t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			for _, s := range tt.want {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
			if !strings.Contains(r.stderr, "robot-app-assistant: check found") {
				t.Errorf("stderr: %q", r.stderr)
			}
		})
	}
}

// Several problems at once are all reported, each with its fix.
func TestCheckReportsEveryFailure(t *testing.T) {
	dir := mustCreate(t, "many")
	edit(t, filepath.Join(dir, "README.md"), "  - robot_python_app\n", "")
	edit(t, filepath.Join(dir, "many", "main.py"), "class Many(RobotApp):", "class Many:")
	if err := os.Remove(filepath.Join(dir, "style.css")); err != nil {
		t.Fatal(err)
	}
	t.Parallel() // the check runs in a process of its own (see TestCheckReportsBrokenPackages)
	r := runCLIProcess(t, nil, nil, "check", dir)
	if r.code != exitError {
		t.Fatalf("exit %d", r.code)
	}
	if n := strings.Count(r.stdout, "FAIL"); n != 4 {
		t.Errorf("%d failures, want 4 (style.css, class, tag, loaded class):\n%s", n, r.stdout)
	}
	if n := strings.Count(r.stdout, "fix:"); n != 4 {
		t.Errorf("%d fixes, want 4:\n%s", n, r.stdout)
	}
	if !strings.Contains(r.stderr, "check found 4 problems in "+dir) {
		t.Errorf("stderr %q", r.stderr)
	}
}

func TestCheckOnSomethingThatIsNotAFolder(t *testing.T) {
	r := runCLI(t, nil, "check", filepath.Join(t.TempDir(), "nothing"))
	if r.code != exitError || !strings.Contains(r.stderr, "is not a directory") {
		t.Fatalf("exit %d, %q", r.code, r.stderr)
	}
	r = runCLI(t, nil, "check", "--python", "python-that-does-not-exist", t.TempDir())
	if r.code != exitError || !strings.Contains(r.stderr, "python-that-does-not-exist not found") {
		t.Fatalf("exit %d, %q", r.code, r.stderr)
	}
}

// check installs dependencies as the robot does: from the index (pip's configuration, or
// --index-url), and with --offline only from wheel directories, naming what is missing.
func TestCheckInstallsDependenciesFromTheIndex(t *testing.T) {
	idx := pyindex.New()
	defer idx.Close()
	idx.Publish("dep", "1.2")
	dir := mustCreate(t, "with_dep")
	edit(t, filepath.Join(dir, "pyproject.toml"), "dependencies = []", `dependencies = ["dep>=1.1"]`)
	edit(t, filepath.Join(dir, "with_dep", "main.py"), "import math", "import math\nimport dep")
	// The checks run in processes of their own (see TestCheckReportsBrokenPackages); pip's
	// configuration, PIP_INDEX_URL, goes into the environment of the later two.
	t.Parallel()
	r := runCLIProcess(t, nil, nil, "check", "--index-url", idx.URL(), dir)
	if r.code != 0 || !strings.Contains(r.stdout, "dependencies from the index "+idx.URL()) || !idx.Asked("dep") {
		t.Fatalf("check with --index-url: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	pipConfig := []string{"PIP_INDEX_URL=" + idx.URL()}
	if r := runCLIProcess(t, nil, pipConfig, "check", dir); r.code != 0 || !strings.Contains(r.stdout, "dependencies from the package index of pip's configuration") {
		t.Fatalf("check with PIP_INDEX_URL: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLIProcess(t, nil, pipConfig, "check", "--offline", dir)
	if r.code != exitError || !strings.Contains(r.stdout, "(--offline)") || !strings.Contains(r.stdout, "dep>=1.1") || !strings.Contains(r.stdout, "a robot started with --offline installs only from wheel directories") {
		t.Fatalf("check --offline of a dependency that is in no wheel directory: exit %d\n%s", r.code, r.stdout)
	}
}

// The check venvs hold the robot SDK's dependencies as the robot does. Offline, with no wheel of
// numpy and without the interpreter's own packages, check cannot make them: it says so before
// checking anything, naming what is missing and the two ways to bring it, instead of failing
// the app's load with a ModuleNotFoundError that blames the app.
func TestCheckNamesTheSDKDependenciesItCannotBring(t *testing.T) {
	dir := mustCreate(t, "needs_sdk_deps")
	t.Parallel()
	r := runCLIProcess(t, map[string]string{envSystemSite: "0"}, nil, "check", "--offline", dir)
	if r.code != exitError {
		t.Fatalf("exit %d, want %d\n%s\n%s", r.code, exitError, r.stdout, r.stderr)
	}
	for _, want := range []string{"needs the robot SDK's dependencies", "numpy>=1.24", "fastapi", "--index-url", "--system-site-packages"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "loading needs_sdk_deps") {
		t.Errorf("check went on to load the app:\n%s", r.stdout)
	}
}

// Issue 30, item 3: a dependency's wheel that plants a .pth file through the venv's lib64 (a link
// to lib, so into site-packages, where Python runs it at every start) was reported clean. check
// follows the venv's real layout, as the robot does, and reports it unsafe.
func TestCheckReportsAPthPlantedThroughLib64(t *testing.T) {
	out, err := exec.Command("/usr/bin/python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(out))
	idx := pyindex.New()
	defer idx.Close()
	marker := filepath.Join(t.TempDir(), "pth-ran")
	idx.PublishFiles("evil-lib64", "1.0", map[string]string{
		"evil_lib64/__init__.py": "",
		"evil_lib64-1.0.data/data/lib64/python" + version + "/site-packages/evil_lib64.pth": "import os; open(" + quotePy(marker) + ", 'a').write('ran')\n",
	})
	dir := mustCreate(t, "lib64_victim")
	edit(t, filepath.Join(dir, "pyproject.toml"), "dependencies = []", `dependencies = ["evil-lib64"]`)
	t.Parallel()
	r := runCLIProcess(t, nil, nil, "check", "--index-url", idx.URL(), dir)
	if r.code != exitError || !strings.Contains(r.stdout, "FAIL") || !strings.Contains(r.stdout, "evil_lib64.pth (a .pth file") {
		t.Fatalf("check of an app whose dependency plants a .pth through lib64: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the planted .pth ran")
	}
}
