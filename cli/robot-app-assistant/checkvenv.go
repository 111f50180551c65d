package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robothub/robothub/adapters/python"
	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/procgroup"
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

// checkInstall installs the package as the robot would, into a temporary venv layered on the cached
// base (pip, setuptools, wheel, robot_sdk): the wheel built offline, its dependencies resolved and
// downloaded from the package source the robot uses (the index of pip's configuration,
// --index-url, or wheel directories offline), every wheel checked as the robot checks it, then
// installed from those files only. It checks what got installed, uninstalls it and checks that the
// entry point is gone. It returns an error only when the venv itself cannot be made.
func checkInstall(ctx context.Context, e *env, opts checkOptions, r *checkReport, pythonExe string, bundled []string) error {
	start := time.Now()
	r.step("building the wheel and installing it into a temporary venv, as the robot will")
	baseSite, err := ensureCheckBase(ctx, e, opts, pythonExe, bundled)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "robot-app-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	venv := e.venv(opts, filepath.Join(tmp, "venv"))
	var out bytes.Buffer
	if err := venv.Create(ctx, &out, true); err != nil {
		return fmt.Errorf("%v\n%s", err, tail(out.String(), 8))
	}
	if err := venv.Layer(baseSite); err != nil {
		return err
	}
	shown := func(b *bytes.Buffer) string {
		return apps.RedactText(tail(strings.ReplaceAll(b.String(), tmp, "<tmp>"), 8))
	}

	// The wheel, built as the robot builds it, and what it would install over the runtime: the
	// daemon refuses such a package, so check says so first.
	out.Reset()
	wheel, err := venv.BuildWheel(ctx, &out, r.dir, filepath.Join(tmp, "wheel"))
	if err != nil {
		r.fail("building the package into a wheel failed:\n"+shown(&out),
			"run pip wheel --no-deps . in the package and fix the error; the robot builds it the same way")
		return nil
	}
	source := venv.Source.Describe()
	if opts.offline {
		source += " (--offline)"
	}
	var reqs []string
	for _, q := range wheel.Requires {
		if python.RequirementName(q) != apps.SDKDistribution {
			reqs = append(reqs, q)
		}
	}
	out.Reset()
	deps, err := venv.Resolve(ctx, &out, apps.Resolution{Requirements: reqs, Dir: filepath.Join(tmp, "deps")})
	if err != nil {
		hint := "the robot installs the dependencies of pyproject.toml from the package index of its pip configuration (or the daemon's --index-url): check each requirement's name and version, and that the index has it"
		if opts.offline {
			hint = "a robot started with --offline installs only from wheel directories: depend only on packages available as wheels in " + strings.Join(opts.wheelDirs, ", ")
		}
		r.fail("pip could not install the package into a temporary venv from "+source+": its dependencies "+strings.Join(reqs, ", ")+
			" could not be resolved: "+apps.RedactText(err.Error())+"\n"+shown(&out), hint)
		return nil
	}
	if err := venv.Check(ctx, wheel, deps); err != nil {
		r.fail(err.Error(), "the robot refuses this package: list only the app's own package in [tool.setuptools] packages (and no py-modules named after the standard library), ship no .pth file, and depend on no package that does")
		return nil
	}
	r.ok("the wheel and its %d dependency wheel(s) install nothing over the runtime (robot_sdk, pip, setuptools, wheel, the standard library, .pth files) or another package", len(deps))
	files := []string{}
	for _, d := range deps {
		files = append(files, d.Path)
	}
	out.Reset()
	if err := venv.Install(ctx, &out, append(files, wheel.Path)...); err != nil {
		r.fail("pip could not install the package into a temporary venv:\n"+shown(&out), "install the wheel yourself (pip install dist/*.whl) and fix the error")
		return nil
	}
	r.ok("install of %s into a temporary venv, dependencies from %s", r.dist, source)

	probe, err := runProbe(ctx, e, tmp, venv.Python(), r.app)
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

	out.Reset()
	if err := venv.Uninstall(ctx, &out, r.dist); err != nil {
		r.fail("pip uninstall "+r.dist+" failed:\n"+tail(out.String(), 5), "check that the [project] name of pyproject.toml is the package's name")
		return nil
	}
	again, err := runProbe(ctx, e, tmp, venv.Python(), r.app)
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

// ensureCheckBase returns the site-packages of the base venv for checks: pip, setuptools, wheel,
// robot_sdk at the version this program's daemon installs, and the SDK's dependencies (numpy,
// FastAPI...) as the robot has them: from the package source, or the interpreter's own with
// --system-site-packages. It is built once per interpreter, SDK version and those choices, in the
// cache directory.
func ensureCheckBase(ctx context.Context, e *env, opts checkOptions, pythonExe string, bundled []string) (string, error) {
	sdkVersion := python.SDKVersion(version.String(), pysdk.Files)
	sum := sha256.Sum256([]byte(pythonExe + "\x00" + opts.python + "\x00" + sdkVersion + "\x00" + strconv.FormatBool(opts.systemSite) +
		"\x00" + opts.indexURL + "\x00" + strings.Join(opts.extraIndexURLs, "\x00") + "\x00" + strings.Join(opts.wheelDirs, "\x00")))
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
	venvPython := filepath.Join(venv, "bin", "python")
	install := []string{"--disable-pip-version-check", "--no-input", "install", "--no-index", "--no-compile"}
	for _, d := range opts.wheelDirs {
		install = append(install, "--find-links", d)
	}
	// pip installs itself and setuptools from a wheel into a venv made without pip: what ensurepip
	// does, without byte-compiling everything, which takes most of ensurepip's time. The wheels are
	// the interpreter's own (ensurepip's bundled ones), else those of the wheel directories
	// (Debian's python3-pip-whl); without either, ensurepip it is.
	want := []string{"pip", "setuptools>=61", "wheel"}
	pip := python.PickWheel(bundled, "pip")
	if pip != "" {
		install = append(install, "--find-links", filepath.Dir(pip))
		// Debian patches its setuptools wheel for Debian's Python: another interpreter needs its own.
		if st := python.PickWheel(bundled, "setuptools"); st != "" && python.AtLeast(python.WheelVersion(st), "61") {
			want = []string{"pip==" + python.WheelVersion(pip), "setuptools==" + python.WheelVersion(st), "wheel"}
		}
	} else {
		var wheels []string
		for _, d := range opts.wheelDirs {
			m, _ := filepath.Glob(filepath.Join(d, "pip-*-py3-none-any.whl"))
			wheels = append(wheels, m...)
		}
		pip = python.PickWheel(wheels, "pip")
	}
	var pipCmd []string
	if pip != "" {
		if out, err := runCommand(ctx, e, tmp, opts.python, venvArgs(opts, "--without-pip", venv)...); err != nil {
			return "", fmt.Errorf("creating the base venv with %s -m venv (is python3-venv installed?): %v\n%s", opts.python, err, tail(out, 8))
		}
		pipCmd = []string{"-I", filepath.Join(pip, "pip")}
	} else {
		if out, err := runCommand(ctx, e, tmp, opts.python, venvArgs(opts, venv)...); err != nil {
			return "", fmt.Errorf("creating the base venv with %s -m venv (is python3-venv installed?): %v\n%s", opts.python, err, tail(out, 8))
		}
		pipCmd = []string{"-I", "-m", "pip"}
	}
	args := append(append([]string(nil), pipCmd...), install...)
	if out, err := runCommand(ctx, e, tmp, venvPython, append(args, want...)...); err != nil {
		return "", fmt.Errorf("installing pip, setuptools and wheel into the base venv from %s (are python3-pip-whl, python3-setuptools-whl and python3-wheel-whl installed?): %v\n%s",
			strings.Join(opts.wheelDirs, ", "), err, tail(out, 8))
	}
	args = append([]string{"-I", "-m", "pip"}, install...)
	sdkDir := filepath.Join(tmp, "robot_sdk_src")
	if err := python.WriteSDK(sdkDir, pysdk.Files, sdkVersion); err != nil {
		return "", err
	}
	if out, err := runCommand(ctx, e, tmp, venvPython, append(args, "--no-build-isolation", "--no-deps", sdkDir)...); err != nil {
		return "", fmt.Errorf("installing robot_sdk %s into the base venv: %v\n%s", sdkVersion, err, tail(out, 8))
	}
	// The SDK's dependencies, as the daemon brings them into the apps venv: an app that uses poses
	// or settings_app loads here only if they are there, as on the robot.
	tc := e.venv(opts, venv)
	missing, err := apps.MissingSDKDependencies(ctx, tc, pysdk.Files)
	if err != nil {
		return "", err
	}
	if len(missing) > 0 {
		fmt.Fprintf(e.stdout, "Installing the robot SDK's dependencies into the base venv: %s\n", strings.Join(missing, " "))
		var log bytes.Buffer
		if err := apps.InstallSDKDependencies(ctx, tc, &log, missing); err != nil {
			return "", fmt.Errorf("the base venv for install checks needs the robot SDK's dependencies: %s\n%s",
				apps.RedactText(err.Error()), apps.RedactText(tail(log.String(), 8)))
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "complete"), []byte(sdkVersion+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, base); err != nil && !isFile(filepath.Join(base, "complete")) {
		return "", fmt.Errorf("moving the base venv into place: %w", err)
	}
	return sitePackages(filepath.Join(base, "venv"))
}

// venvArgs are the arguments of python -m venv for a check venv.
func venvArgs(opts checkOptions, args ...string) []string {
	v := []string{"-m", "venv"}
	if opts.systemSite {
		v = append(v, "--system-site-packages")
	}
	return append(v, args...)
}

// sitePackages returns a venv's site-packages directory.
func sitePackages(dir string) (string, error) { return (&python.Venv{Dir: dir}).SitePackages() }

// runCommand runs a command in dir with its output combined, logging it at debug level.
func runCommand(ctx context.Context, e *env, dir, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	start := time.Now()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(e.packageEnv(), "PIP_DISABLE_PIP_VERSION_CHECK=1")
	var out bytes.Buffer
	err := procgroup.Run(ctx, cmd, &out)
	shown := append([]string{name}, args...)
	for i, a := range shown {
		if strings.Contains(a, "\n") {
			shown[i] = "<script>"
		}
	}
	e.log.Debug("run", "cmd", strings.Join(shown, " "), "elapsed", time.Since(start).Round(time.Millisecond), "err", err)
	return out.String(), err
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

// venv is a throw-away venv for check at dir: its commands get packageEnv, and resolving the
// dependencies also gets the package index's configuration.
func (e *env) venv(opts checkOptions, dir string) *python.Venv {
	return &python.Venv{
		Dir: dir, BasePython: opts.python, NoCompile: true, SystemSitePackages: opts.systemSite,
		Env: e.packageEnv(), ResolveEnv: indexEnv(os.Environ(), e.getenv("HOME")),
		Source: python.Source{Offline: opts.offline, IndexURL: opts.indexURL, ExtraIndexURLs: opts.extraIndexURLs, WheelDirs: opts.wheelDirs},
	}
}

// packageEnv is the environment of every command check and publish run (sandbox.go).
func (e *env) packageEnv() []string { return packageEnv(os.Environ(), e.home) }
