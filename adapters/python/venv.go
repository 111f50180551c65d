// Package python is the Python toolchain: virtual environments (created, completed when their
// creation was cut short, bootstrapped from offline wheels), pip and uv, building and reading
// wheels, resolving a package's dependencies into wheel files that are checked before anything is
// installed, and the checks that keep a package from shadowing the runtime or another package.
// The robot daemon drives its apps venv through it (as core/apps.Toolchain), and
// robot-app-assistant's check uses it to install a package as the robot would.
package python

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/procgroup"
)

// Venv is one Python virtual environment and where its packages come from.
type Venv struct {
	Dir        string // the venv directory
	BasePython string // the interpreter that creates it; default python3
	Source     Source // where packages come from
	// SystemSitePackages lets the venv see the system's packages: Raspberry Pi OS ships numpy and
	// OpenCV built for the board through apt, which apps then use instead of building their own.
	SystemSitePackages bool
	// Env is the whole environment of every command the venv runs (nil: the process's own). A
	// package's build runs its code: robot-app-assistant passes an allow-list here.
	Env []string
	// ResolveEnv is added to Env for resolving and downloading dependencies only: the package
	// index's configuration, which the package's own build and code never get.
	ResolveEnv []string
	// NoCompile skips byte-compiling installed files (a throw-away venv).
	NoCompile bool
	// StateDir holds the journal of a package change under way and the kept wheel of each
	// package changed through BeginChange (journal.go): the daemon's data directory.
	StateDir string

	stdlibMu sync.Mutex
	stdlib   map[string]bool

	// layoutMu guards layout, the venv's install layout as its Python gave it for the
	// configuration layoutCfg (pyvenv.cfg).
	layoutMu  sync.Mutex
	layout    *installLayout
	layoutCfg string

	// outsideMu guards outside: the build tools that Ensure found satisfied outside the venv (by
	// the system's site-packages), keyed by the venv's configuration. Without it every job ran pip
	// to learn that again: 0.6-0.9 s of each update (issue 24's profile).
	outsideMu sync.Mutex
	outside   map[string]string
	// warmBuild and warmPip are the Pythons started ahead of a build and an install (warm.go).
	warmBuild, warmPip warmSlot
}

var _ apps.Toolchain = (*Venv)(nil)

// VenvDir returns the venv directory.
func (v *Venv) VenvDir() string { return v.Dir }

// Python is the venv's interpreter.
func (v *Venv) Python() string {
	if runtime.GOOS == "windows" {
		return filepath.Join(v.Dir, "Scripts", "python.exe")
	}
	return filepath.Join(v.Dir, "bin", "python")
}

// SitePackages returns the venv's site-packages directory.
func (v *Venv) SitePackages() (string, error) {
	pattern := filepath.Join(v.Dir, "lib", "python3*", "site-packages")
	if runtime.GOOS == "windows" {
		pattern = filepath.Join(v.Dir, "Lib", "site-packages")
	}
	matches, _ := filepath.Glob(pattern)
	if len(matches) == 0 {
		return "", fmt.Errorf("venv %s has no site-packages directory", v.Dir)
	}
	return matches[0], nil
}

// Create makes the venv with `<base> -m venv` (without pip when withoutPip).
func (v *Venv) Create(ctx context.Context, log io.Writer, withoutPip bool) error {
	if err := os.MkdirAll(filepath.Dir(v.Dir), 0o755); err != nil {
		return err
	}
	base := cmp.Or(v.BasePython, "python3")
	args := []string{"-m", "venv"}
	if v.SystemSitePackages {
		args = append(args, "--system-site-packages")
	}
	if withoutPip {
		args = append(args, "--without-pip")
	}
	if err := v.run(ctx, log, nil, base, append(args, v.Dir)...); err != nil {
		return fmt.Errorf("creating a venv with %s -m venv (is python3-venv installed?): %w", base, err)
	}
	return nil
}

// Ensure creates the venv if missing, with pip, setuptools and wheel: builds run without isolation.
func (v *Venv) Ensure(ctx context.Context, log io.Writer) error {
	if !exists(v.Python()) {
		fmt.Fprintf(log, "Creating the apps venv at %s\n", v.Dir)
		if err := v.Create(ctx, log, false); err != nil {
			return err
		}
	} else if err := v.setSystemSitePackages(log); err != nil {
		return err
	}
	site, err := v.SitePackages()
	if err != nil {
		return err
	}
	// `python -m venv` runs ensurepip last: a daemon killed before leaves a venv without pip, which
	// no pip call could repair. ensurepip installs Python's bundled pip, offline, apps untouched.
	if m, _ := filepath.Glob(filepath.Join(site, "pip-*.dist-info")); len(m) == 0 {
		fmt.Fprintf(log, "The apps venv at %s has no pip (its creation was cut short?): installing it with ensurepip\n", v.Dir)
		if err := v.run(ctx, log, nil, v.Python(), "-m", "ensurepip", "--default-pip"); err != nil {
			return fmt.Errorf("installing pip into the apps venv with ensurepip: %w", err)
		}
	}
	cfg, _ := os.ReadFile(filepath.Join(v.Dir, "pyvenv.cfg"))
	var missing []string
	v.outsideMu.Lock()
	for _, pkg := range []string{"setuptools", "wheel"} {
		if m, _ := filepath.Glob(filepath.Join(site, pkg+"-*.dist-info")); len(m) == 0 && v.outside[pkg] != string(cfg) {
			missing = append(missing, pkg)
		}
	}
	v.outsideMu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	// The wheel directories first: these build tools are bootstrap, and a robot whose index is
	// slow or down should not wait on it for what Debian's python3-*-whl packages hold.
	fmt.Fprintf(log, "Installing %s into the apps venv from %s\n", strings.Join(missing, ", "), strings.Join(v.Source.WheelDirs, ", "))
	args := append(append(v.pip("install", "--no-index"), v.Source.findLinks()...), missing...)
	err = v.runInstaller(ctx, log, nil, v.Python(), args...)
	if err != nil && !v.Source.Offline {
		fmt.Fprintf(log, "Not in the wheel directories; trying %s\n", v.Source.Describe())
		probeArgs, _ := v.indexArgsFor(ctx, log, v.environ(v.ResolveEnv))
		args = append(append(append(v.pip("install"), v.Source.indexArgs()...), probeArgs...), missing...)
		err = v.runInstaller(ctx, log, v.ResolveEnv, v.Python(), args...)
	}
	if err != nil {
		return fmt.Errorf("installing %s into the apps venv (are python3-setuptools-whl and python3-wheel-whl installed?): %w", strings.Join(missing, " and "), err)
	}
	// pip succeeds without installing what the system's site-packages already has: remember it
	// for as long as the venv's configuration (its base Python, system site packages) stays.
	v.outsideMu.Lock()
	defer v.outsideMu.Unlock()
	for _, pkg := range missing {
		if m, _ := filepath.Glob(filepath.Join(site, pkg+"-*.dist-info")); len(m) == 0 {
			if v.outside == nil {
				v.outside = map[string]string{}
			}
			v.outside[pkg] = string(cfg)
		}
	}
	return nil
}

// setSystemSitePackages sets include-system-site-packages in pyvenv.cfg (read at each start).
func (v *Venv) setSystemSitePackages(log io.Writer) error {
	cfgPath := filepath.Join(v.Dir, "pyvenv.cfg")
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		return fmt.Errorf("reading the apps venv's configuration: %w", err)
	}
	want := strconv.FormatBool(v.SystemSitePackages)
	line := "include-system-site-packages = " + want
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	found := false
	for i, l := range lines {
		key, value, ok := strings.Cut(l, "=")
		if !ok || strings.TrimSpace(key) != "include-system-site-packages" {
			continue
		}
		found = true
		if strings.EqualFold(strings.TrimSpace(value), want) {
			return nil
		}
		lines[i] = line
	}
	if !found {
		lines = append(lines, line)
	}
	fmt.Fprintf(log, "Setting %s in %s\n", line, cfgPath)
	return os.WriteFile(cfgPath, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// Layer makes the packages of another venv's site-packages (a cached base) importable in this one,
// through a .pth file whose import line adds it as a site directory, with its own .pth files.
func (v *Venv) Layer(baseSite string) error {
	site, err := v.SitePackages()
	if err != nil {
		return err
	}
	pth := fmt.Sprintf("import site; site.addsitedir(%q)\n", baseSite)
	return os.WriteFile(filepath.Join(site, "_pytool_base.pth"), []byte(pth), 0o644)
}

// InstalledVersion returns the version of distribution dist installed in the venv itself, not in
// the system's site-packages ("" if none), read from its <name>-<version>.dist-info directory.
func (v *Venv) InstalledVersion(dist string) string {
	site, _ := v.SitePackages() // "" when missing: ReadDir fails, no version
	entries, _ := os.ReadDir(site)
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".dist-info")
		if name, version, _ := strings.Cut(base, "-"); ok && e.IsDir() && Normalize(name) == Normalize(dist) {
			return version
		}
	}
	return ""
}

// Stamp is site-packages' modification time: pip changes it when it adds or removes a package.
func (v *Venv) Stamp() string {
	site, _ := v.SitePackages()
	info, err := os.Stat(site)
	if err != nil {
		return ""
	}
	return info.ModTime().String()
}

// pip returns the arguments of `python -m pip <command>`, isolated from PYTHON* variables.
func (v *Venv) pip(command string, args ...string) []string {
	out := []string{"-I", "-m", "pip", "--disable-pip-version-check", "--no-input", command}
	return append(out, args...)
}

// environ is the environment of one command: Env (or the process's), plus extra.
func (v *Venv) environ(extra []string) []string {
	base := v.Env
	if base == nil {
		base = os.Environ()
	}
	env := append(slices.Clone(base), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PYTHONUNBUFFERED=1", "GIT_TERMINAL_PROMPT=0")
	return append(env, extra...)
}

// run runs name with args in the venv's environment (plus extra), its output to log.
func (v *Venv) run(ctx context.Context, log io.Writer, extra []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Env = v.environ(extra)
	return procgroup.Run(ctx, cmd, log)
}

// runInstaller runs an installer command; a failure's error carries the installer's explanation.
func (v *Venv) runInstaller(ctx context.Context, log io.Writer, extra []string, name string, args ...string) error {
	fmt.Fprintf(log, "Running %s %s\n", filepath.Base(name), apps.RedactText(strings.Join(args, " ")))
	tail := &lineTail{max: 40}
	return installerError(ctx, v.run(ctx, io.MultiWriter(log, tail), extra, name, args...), tail)
}

// installerError adds to an installer's failure the explanation at the end of its output.
func installerError(ctx context.Context, err error, tail *lineTail) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	if why := installerMessage(tail.last()); why != "" {
		return fmt.Errorf("%w: %s", err, why)
	}
	return err
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
