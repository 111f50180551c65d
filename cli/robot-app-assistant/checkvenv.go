package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/version"
	"github.com/robothub/robothub/robotd/pysdk"
)

// commandTimeout bounds each Python or pip command of a check.
const commandTimeout = 3 * time.Minute

// probeScript runs in the temporary venv: is the entry point registered, does it load a RobotApp
// subclass, which static files did the package install.
const probeScript = `
import importlib.util, json, os, sys, traceback
from importlib.metadata import entry_points
name = sys.argv[1]
out = {"registered": None, "load_error": None, "subclass": False, "loaded": None, "static": None}
eps = [e for e in entry_points(group="robot_apps") if e.name == name]
if eps:
    out["registered"] = eps[0].value
    try:
        cls = eps[0].load()
        out["loaded"] = getattr(cls, "__module__", "?") + "." + getattr(cls, "__qualname__", repr(cls))
        from robot_sdk import RobotApp
        out["subclass"] = isinstance(cls, type) and issubclass(cls, RobotApp)
    except BaseException as e:
        out["load_error"] = "".join(traceback.format_exception_only(type(e), e)).strip()
    spec = importlib.util.find_spec(name)
    if spec is not None and spec.submodule_search_locations:
        static = os.path.join(list(spec.submodule_search_locations)[0], "static")
        out["static"] = sorted(os.path.relpath(os.path.join(d, f), static) for d, _, fs in os.walk(static) for f in fs) if os.path.isdir(static) else []
json.dump(out, sys.stdout)
`

type probeResult struct {
	Registered *string  `json:"registered"`
	LoadError  *string  `json:"load_error"`
	Subclass   bool     `json:"subclass"`
	Loaded     *string  `json:"loaded"`
	Static     []string `json:"static"`
}

// checkInstall installs the package, with its dependencies from the package source the robot
// uses (the index of pip's configuration, --index-url, or wheel directories offline), into a
// temporary venv layered on the cached base
// (pip, setuptools, wheel, robot_sdk), checks what got installed, uninstalls it and checks that
// the entry point is gone. It returns an error only when the venv itself cannot be made.
func checkInstall(ctx context.Context, e *env, opts checkOptions, r *checkReport, pythonExe string, bundled []string) error {
	start := time.Now()
	baseSite, err := ensureCheckBase(ctx, e, opts, pythonExe, bundled)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "robot-app-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	venv := filepath.Join(tmp, "venv")
	if out, err := runCommand(ctx, e, tmp, opts.python, "-m", "venv", "--without-pip", venv); err != nil {
		return fmt.Errorf("creating a temporary venv with %s -m venv: %v\n%s", opts.python, err, tail(out, 8))
	}
	site, err := sitePackages(venv)
	if err != nil {
		return err
	}
	// An import line in a .pth file runs at start-up: it adds the base as a site directory, with its own .pth files.
	pth := fmt.Sprintf("import site; site.addsitedir(%q)\n", baseSite)
	if err := os.WriteFile(filepath.Join(site, "_robot_app_check_base.pth"), []byte(pth), 0o644); err != nil {
		return err
	}
	src := filepath.Join(tmp, "src")
	if err := apps.CopyPackage(src, r.dir); err != nil {
		return fmt.Errorf("copying the package: %w", err)
	}
	python := filepath.Join(venv, "bin", "python")
	pip := []string{"-I", "-m", "pip", "--disable-pip-version-check", "--no-input"}

	// The wheel, built as the robot builds it, and what it would install over the runtime: the
	// daemon refuses such a package (core/apps.CheckShadowing), so check says so first.
	wheelDir := filepath.Join(tmp, "wheel")
	if out, err := runCommand(ctx, e, tmp, python, append(append([]string(nil), pip...), "wheel", "--no-deps", "--no-build-isolation", "--no-index", "--wheel-dir", wheelDir, src)...); err != nil {
		r.fail("building the package into a wheel failed:\n"+apps.RedactText(tail(strings.ReplaceAll(out, tmp, "<tmp>"), 8)),
			"run pip wheel --no-deps . in the package and fix the error; the robot builds it the same way")
		return nil
	}
	wheels, _ := filepath.Glob(filepath.Join(wheelDir, "*.whl"))
	if len(wheels) != 1 {
		r.fail(fmt.Sprintf("building the package produced %d wheels, want 1", len(wheels)), "check the [build-system] of pyproject.toml")
		return nil
	}
	stdlib, err := apps.StdlibModules(ctx, python)
	if err != nil {
		return err
	}
	if err := apps.CheckShadowing(wheels[0], stdlib); err != nil {
		r.fail(err.Error(), "the robot refuses this package: list only the app's own package in [tool.setuptools] packages (and no py-modules named after the standard library), and ship no .pth file")
		return nil
	}
	r.ok("the wheel installs nothing over the runtime (robot_sdk, pip, setuptools, wheel, the standard library, .pth files)")

	// The app builds with the base's setuptools, as the daemon builds it with its venv's; its
	// dependencies come from where the robot's come from.
	args := append(append([]string(nil), pip...), "install", "--no-build-isolation", "--no-compile")
	source := "the package index of pip's configuration"
	switch {
	case opts.offline:
		args = append(args, "--no-index")
		source = "wheels in " + strings.Join(opts.wheelDirs, ", ") + " only (--offline)"
	case opts.indexURL != "":
		args = append(args, "--index-url", opts.indexURL)
		source = "the index " + apps.RedactURL(opts.indexURL)
	}
	if !opts.offline {
		for _, u := range opts.extraIndexURLs {
			args = append(args, "--extra-index-url", u)
		}
	}
	for _, d := range opts.wheelDirs {
		args = append(args, "--find-links", d)
	}
	if out, err := runCommand(ctx, e, tmp, python, append(args, wheels[0])...); err != nil {
		hint := "the robot installs the dependencies of pyproject.toml from the package index of its pip configuration (or the daemon's --index-url): check each requirement's name and version, and that the index has it"
		if opts.offline {
			hint = "a robot started with --offline installs only from wheel directories: depend only on packages available as wheels in " + strings.Join(opts.wheelDirs, ", ")
		}
		r.fail("pip could not install the package into a temporary venv from "+source+":\n"+apps.RedactText(tail(strings.ReplaceAll(out, tmp, "<tmp>"), 8)), hint)
		return nil
	}
	r.ok("install of %s into a temporary venv, dependencies from %s", r.dist, source)

	probe, err := runProbe(ctx, e, tmp, python, r.app)
	if err != nil {
		return err
	}
	switch {
	case probe.Registered == nil:
		r.fail(fmt.Sprintf("after the install, the venv has no %s entry point named %s", apps.EntryPointGroup, r.app),
			"check the [project.entry-points."+apps.EntryPointGroup+"] table of pyproject.toml")
		return nil
	case probe.LoadError != nil:
		r.ok("the install registers entry point %s = %q", r.app, *probe.Registered)
		r.fail(fmt.Sprintf("loading %s in a clean venv failed: %s", *probe.Registered, *probe.LoadError),
			"import the module yourself (python -c 'import "+r.module+"') and fix the error; the app may import only robot_sdk, the standard library and its dependencies")
	case !probe.Subclass:
		r.ok("the install registers entry point %s = %q", r.app, *probe.Registered)
		r.fail(fmt.Sprintf("the entry point loads %s, which is not a subclass of robot_sdk.RobotApp", deref(probe.Loaded)),
			fmt.Sprintf("declare class %s(RobotApp), with from robot_sdk import RobotApp", r.class))
	default:
		r.ok("the install registers entry point %s = %q, which loads a RobotApp subclass", r.app, *probe.Registered)
	}
	checkStaticInstalled(r, probe.Static)

	if out, err := runCommand(ctx, e, tmp, python, append(append([]string(nil), pip...), "uninstall", "--yes", r.dist)...); err != nil {
		r.fail("pip uninstall "+r.dist+" failed:\n"+tail(out, 5), "check that the [project] name of pyproject.toml is the package's name")
		return nil
	}
	again, err := runProbe(ctx, e, tmp, python, r.app)
	if err != nil {
		return err
	}
	if again.Registered != nil {
		r.fail(fmt.Sprintf("after pip uninstall %s, the entry point %s is still registered", r.dist, r.app),
			"make the package's files come from one distribution: its [project] name in pyproject.toml")
	} else {
		r.ok("uninstall removes the entry point")
	}
	e.log.Debug("install check done", "elapsed", time.Since(start))
	return nil
}

// checkStaticInstalled compares the package's static/ files with those the install put in the venv.
func checkStaticInstalled(r *checkReport, installed []string) {
	staticDir := filepath.Join(r.dir, r.app, "static")
	if !isDir(staticDir) {
		staticDir = filepath.Join(r.dir, "src", r.app, "static")
	}
	var want []string
	_ = filepath.WalkDir(staticDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(staticDir, p)
			want = append(want, filepath.ToSlash(rel))
		}
		return nil
	})
	if len(want) == 0 {
		return
	}
	var missing []string
	for _, f := range want {
		if !slices.Contains(installed, f) {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		r.fail(fmt.Sprintf("the install leaves out static/ files: %s", strings.Join(missing, ", ")),
			fmt.Sprintf("add to pyproject.toml:\n[tool.setuptools.package-data]\n%s = [\"static/*\"]", r.app))
		return
	}
	r.ok("the install includes the %d static/ file(s) of the web UI", len(want))
}

func runProbe(ctx context.Context, e *env, dir, python, app string) (*probeResult, error) {
	out, err := runCommand(ctx, e, dir, python, "-I", "-c", probeScript, app)
	if err != nil {
		return nil, fmt.Errorf("reading the temporary venv's entry points: %v\n%s", err, tail(out, 8))
	}
	var p probeResult
	if err := json.Unmarshal([]byte(lastLine(out)), &p); err != nil {
		return nil, fmt.Errorf("reading the temporary venv's entry points: unexpected output %q", tail(out, 3))
	}
	return &p, nil
}

// ensureCheckBase returns the site-packages of the base venv for checks: pip, setuptools, wheel
// and robot_sdk at the version this program's daemon installs. It is built once per interpreter
// and SDK version, in the cache directory.
func ensureCheckBase(ctx context.Context, e *env, opts checkOptions, pythonExe string, bundled []string) (string, error) {
	sdkVersion := apps.SDKVersion(version.String(), pysdk.Files)
	sum := sha256.Sum256([]byte(pythonExe + "\x00" + opts.python + "\x00" + sdkVersion + "\x00" + strings.Join(opts.wheelDirs, "\x00")))
	base := filepath.Join(opts.cacheDir, "check-base-"+hex.EncodeToString(sum[:])[:16])
	if isFile(filepath.Join(base, "complete")) {
		return sitePackages(filepath.Join(base, "venv"))
	}
	fmt.Fprintf(e.stdout, "Preparing the base venv for install checks (once per Python and SDK version) in %s\n", base)
	if err := os.MkdirAll(opts.cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("cache directory: %w", err)
	}
	tmp, err := os.MkdirTemp(opts.cacheDir, ".check-base-building-")
	if err != nil {
		return "", fmt.Errorf("cache directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	venv := filepath.Join(tmp, "venv")
	python := filepath.Join(venv, "bin", "python")
	install := []string{"--disable-pip-version-check", "--no-input", "install", "--no-index", "--no-compile"}
	for _, d := range opts.wheelDirs {
		install = append(install, "--find-links", d)
	}
	// pip installs itself and setuptools from a wheel into a venv made without pip: what ensurepip
	// does, without byte-compiling everything, which takes most of ensurepip's time. The wheels are
	// the interpreter's own (ensurepip's bundled ones), else those of the wheel directories
	// (Debian's python3-pip-whl); without either, ensurepip it is.
	want := []string{"pip", "setuptools>=61", "wheel"}
	pip := pickWheel(bundled, "pip")
	if pip != "" {
		install = append(install, "--find-links", filepath.Dir(pip))
		// Debian patches its setuptools wheel for Debian's Python: another interpreter needs its own.
		if st := pickWheel(bundled, "setuptools"); st != "" && compareVersions(wheelVersion(st), "61") >= 0 {
			want = []string{"pip==" + wheelVersion(pip), "setuptools==" + wheelVersion(st), "wheel"}
		}
	} else {
		var wheels []string
		for _, d := range opts.wheelDirs {
			m, _ := filepath.Glob(filepath.Join(d, "pip-*-py3-none-any.whl"))
			wheels = append(wheels, m...)
		}
		pip = pickWheel(wheels, "pip")
	}
	var pipCmd []string
	if pip != "" {
		if out, err := runCommand(ctx, e, tmp, opts.python, "-m", "venv", "--without-pip", venv); err != nil {
			return "", fmt.Errorf("creating the base venv with %s -m venv (is python3-venv installed?): %v\n%s", opts.python, err, tail(out, 8))
		}
		pipCmd = []string{"-I", filepath.Join(pip, "pip")}
	} else {
		if out, err := runCommand(ctx, e, tmp, opts.python, "-m", "venv", venv); err != nil {
			return "", fmt.Errorf("creating the base venv with %s -m venv (is python3-venv installed?): %v\n%s", opts.python, err, tail(out, 8))
		}
		pipCmd = []string{"-I", "-m", "pip"}
	}
	args := append(append([]string(nil), pipCmd...), install...)
	if out, err := runCommand(ctx, e, tmp, python, append(args, want...)...); err != nil {
		return "", fmt.Errorf("installing pip, setuptools and wheel into the base venv from %s (are python3-pip-whl, python3-setuptools-whl and python3-wheel-whl installed?): %v\n%s",
			strings.Join(opts.wheelDirs, ", "), err, tail(out, 8))
	}
	args = append([]string{"-I", "-m", "pip"}, install...)
	sdkDir := filepath.Join(tmp, "robot_sdk_src")
	if err := writeSDK(sdkDir, sdkVersion); err != nil {
		return "", err
	}
	if out, err := runCommand(ctx, e, tmp, python, append(args, "--no-build-isolation", "--no-deps", sdkDir)...); err != nil {
		return "", fmt.Errorf("installing robot_sdk %s into the base venv: %v\n%s", sdkVersion, err, tail(out, 8))
	}
	if err := os.WriteFile(filepath.Join(tmp, "complete"), []byte(sdkVersion+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, base); err != nil && !isFile(filepath.Join(base, "complete")) {
		return "", fmt.Errorf("moving the base venv into place: %w", err)
	}
	return sitePackages(filepath.Join(base, "venv"))
}

var pyprojectVersion = regexp.MustCompile(`(?m)^version\s*=\s*"[^"]*"`)

// pickWheel returns the newest wheel of the distribution dist among paths, or "".
func pickWheel(paths []string, dist string) string {
	best := ""
	for _, p := range paths {
		if strings.HasPrefix(filepath.Base(p), dist+"-") && strings.HasSuffix(p, "-py3-none-any.whl") &&
			(best == "" || compareVersions(wheelVersion(p), wheelVersion(best)) > 0) {
			best = p
		}
	}
	return best
}

// wheelVersion is the version part of a wheel's file name: pip-23.0.1-py3-none-any.whl gives 23.0.1.
func wheelVersion(path string) string {
	parts := strings.Split(filepath.Base(path), "-")
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

// compareVersions compares dotted numeric versions (23.0.1 < 23.2).
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x - y
		}
	}
	return 0
}

// writeSDK writes the embedded SDK's source into dir with its version set.
func writeSDK(dir, sdkVersion string) error {
	err := fs.WalkDir(pysdk.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := fs.ReadFile(pysdk.Files, p)
		if err != nil {
			return err
		}
		if p == "pyproject.toml" {
			data = pyprojectVersion.ReplaceAll(data, []byte(`version = "`+sdkVersion+`"`))
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		return fmt.Errorf("writing the robot SDK: %w", err)
	}
	return nil
}

// sitePackages returns a venv's site-packages directory.
func sitePackages(venv string) (string, error) {
	matches, _ := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
	if len(matches) == 0 {
		return "", fmt.Errorf("venv %s has no lib/python3*/site-packages", venv)
	}
	return matches[0], nil
}

// runCommand runs a command in dir with its output combined, logging it at debug level.
func runCommand(ctx context.Context, e *env, dir, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(buildEnv(os.Environ()), "PIP_DISABLE_PIP_VERSION_CHECK=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	shown := append([]string{name}, args...)
	for i, a := range shown {
		if strings.Contains(a, "\n") {
			shown[i] = "<script>"
		}
	}
	e.log.Debug("run", "cmd", strings.Join(shown, " "), "elapsed", time.Since(start).Round(time.Millisecond), "err", err)
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), fmt.Errorf("%s exited with code %d", filepath.Base(name), ee.ExitCode())
		}
		return out.String(), err
	}
	return out.String(), nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func deref(s *string) string {
	if s == nil {
		return "?"
	}
	return *s
}

// secretVar matches the names of variables that hold credentials: tokens (HF_TOKEN,
// ROBOT_DAEMON_TOKEN, GITHUB_TOKEN), API keys, passwords, secrets, and the git configuration that
// publish passes its token through.
var secretVar = regexp.MustCompile(`(?i)(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|API_?KEY|ACCESS_KEY|PRIVATE_KEY)(_PATH|_FILE)?$|^(GIT_CONFIG_|AWS_|HUGGING_?FACE_)`)

// buildEnv is environ without credentials: the environment of every command check runs, since
// building the package runs its setup.py and the probe imports its code, which must not find the
// hub token (or any other) to send away. The package index of pip's configuration (PIP_INDEX_URL,
// which may carry its own credentials) stays: the dependencies come from it.
func buildEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); !secretVar.MatchString(name) {
			out = append(out, kv)
		}
	}
	return out
}
