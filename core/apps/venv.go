package apps

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Venv is the apps venv: one Python virtual environment shared by every installed app, its
// packages from Source (Debian's /usr/share/python-wheels holds setuptools and wheel).
type Venv struct {
	Dir        string        // the venv directory
	BasePython string        // the interpreter that creates it: python3
	Source     PackageSource // where packages come from
	// SystemSitePackages lets the venv see the system's packages: Raspberry Pi OS ships numpy and
	// OpenCV built for the board through apt, which apps then use instead of building their own.
	SystemSitePackages bool
}

// Python is the venv's interpreter.
func (v *Venv) Python() string { return filepath.Join(v.Dir, "bin", "python") }

// SitePackages returns the venv's site-packages directory.
func (v *Venv) SitePackages() (string, error) {
	matches, _ := filepath.Glob(filepath.Join(v.Dir, "lib", "python3*", "site-packages"))
	if len(matches) == 0 {
		return "", fmt.Errorf("apps venv %s has no lib/python3*/site-packages", v.Dir)
	}
	return matches[0], nil
}

// Ensure creates the venv if missing, with setuptools and wheel: builds run without isolation.
func (v *Venv) Ensure(ctx context.Context, log io.Writer) error {
	if !exists(v.Python()) {
		fmt.Fprintf(log, "Creating the apps venv at %s\n", v.Dir)
		if err := os.MkdirAll(filepath.Dir(v.Dir), 0o755); err != nil {
			return err
		}
		base := cmp.Or(v.BasePython, "python3")
		args := []string{"-m", "venv"}
		if v.SystemSitePackages {
			args = append(args, "--system-site-packages")
		}
		if err := runLoggedEnv(ctx, log, nil, base, append(args, v.Dir)...); err != nil {
			return fmt.Errorf("creating the apps venv with %s -m venv: %w", base, err)
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
		if err := runLoggedEnv(ctx, log, nil, v.Python(), "-m", "ensurepip", "--default-pip"); err != nil {
			return fmt.Errorf("installing pip into the apps venv with ensurepip: %w", err)
		}
	}
	var missing []string
	for _, pkg := range []string{"setuptools", "wheel"} {
		if m, _ := filepath.Glob(filepath.Join(site, pkg+"-*.dist-info")); len(m) == 0 {
			missing = append(missing, pkg)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	// The wheel directories first: these build tools are bootstrap, and a robot whose index is
	// slow or down should not wait on it for what Debian's python3-*-whl packages hold.
	fmt.Fprintf(log, "Installing %s into the apps venv from %s\n", strings.Join(missing, ", "), strings.Join(v.Source.WheelDirs, ", "))
	err = v.install(ctx, log, installOptions{noIndex: true}, missing...)
	if err != nil && !v.Source.Offline {
		fmt.Fprintf(log, "Not in the wheel directories; trying %s\n", v.Source.Describe())
		err = v.install(ctx, log, installOptions{}, missing...)
	}
	if err != nil {
		return fmt.Errorf("installing %s into the apps venv (are python3-setuptools-whl and python3-wheel-whl installed?): %w", strings.Join(missing, " and "), err)
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

func (v *Venv) findLinks() []string {
	var args []string
	for _, d := range v.Source.WheelDirs {
		if d != "" {
			args = append(args, "--find-links", d)
		}
	}
	return args
}

// Pip runs the venv's pip with args, writing its output to log line by line.
func (v *Venv) Pip(ctx context.Context, log io.Writer, args ...string) error {
	return runLoggedEnv(ctx, log, nil, v.Python(), append(slices.Clone(pipArgs), args...)...)
}

// installedVersion returns the version of distribution dist installed in the venv itself, not in
// the system's site-packages ("" if none), read from its <name>-<version>.dist-info directory.
func (v *Venv) installedVersion(dist string) string {
	site, _ := v.SitePackages() // "" when missing: ReadDir fails, no version
	entries, _ := os.ReadDir(site)
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".dist-info")
		if name, version, _ := strings.Cut(base, "-"); ok && e.IsDir() && normalizeDist(name) == normalizeDist(dist) {
			return version
		}
	}
	return ""
}

// siteStamp is site-packages' modification time: pip changes it when it adds or removes a package.
func (v *Venv) siteStamp() string {
	site, _ := v.SitePackages()
	info, err := os.Stat(site)
	if err != nil {
		return ""
	}
	return info.ModTime().String()
}

// runLoggedEnv runs name with args and env added, copying its output to log as whole lines.
func runLoggedEnv(ctx context.Context, log io.Writer, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PYTHONUNBUFFERED=1", "GIT_TERMINAL_PROMPT=0"), env...)
	dieWithDaemon(cmd)
	// The thread that starts the process must live until it exits (see dieWithDaemon).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	var wg sync.WaitGroup
	wg.Go(func() {
		scanLines(pr, func(line string) { fmt.Fprintln(log, line) })
		_, _ = io.Copy(io.Discard, pr)
	})
	err := cmd.Run()
	pw.Close()
	wg.Wait()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return fmt.Errorf("%s exited with code %d", filepath.Base(name), ee.ExitCode())
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound):
		return fmt.Errorf("%s not found: %w", name, err)
	}
	return err
}

// EntryPointGroup is the entry-point group an app declares itself in.
const EntryPointGroup = "robot_apps"

// discoverScript prints, as JSON, every robot_apps entry point with its distribution and the
// custom_app_url literal of its module, read from the source: discovery imports no app code.
const discoverScript = `
import json, re, sys
from importlib.metadata import distributions
pattern = re.compile(r"""^\s*custom_app_url\s*(?::[^=]+)?=\s*["']([^"']+)["']""", re.M)
out, seen = [], set()
for dist in distributions():
    try:
        eps = [ep for ep in dist.entry_points if ep.group == "robot_apps"]
    except Exception:
        continue
    for ep in eps:
        if ep.name in seen:
            continue
        seen.add(ep.name)
        module, _, attr = ep.value.partition(":")
        module = module.strip()
        url = None
        wanted = module.replace(".", "/") + ".py"
        for f in dist.files or []:
            if str(f).replace("\\", "/") == wanted:
                try:
                    m = pattern.search(open(dist.locate_file(f), encoding="utf-8", errors="replace").read())
                    url = m.group(1) if m else None
                except OSError:
                    pass
                break
        out.append({"name": ep.name, "module": module, "class": attr.strip(),
                    "package": dist.metadata["Name"], "version": dist.version,
                    "summary": dist.metadata.get("Summary") or "", "custom_app_url": url})
json.dump(out, sys.stdout)
`

type discoveredApp struct {
	Name         string  `json:"name"`
	Module       string  `json:"module"`
	Class        string  `json:"class"`
	Package      string  `json:"package"`
	Version      string  `json:"version"`
	Summary      string  `json:"summary"`
	CustomAppURL *string `json:"custom_app_url"`
}

// AppNamePattern is an app name: a Python module name, so also safe in URLs, paths and logs.
var AppNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,99}$`)

var modulePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// discover lists the apps in the venv, skipping names or modules that could not run safely.
func (v *Venv) discover(ctx context.Context) ([]discoveredApp, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, v.Python(), "-I", "-c", discoverScript)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("listing %s entry points in %s: %v: %s", EntryPointGroup, v.Dir, err, bytes.TrimSpace(stderr.Bytes()))
	}
	var found []discoveredApp
	if err := json.Unmarshal(stdout.Bytes(), &found); err != nil {
		return nil, fmt.Errorf("listing %s entry points: %w", EntryPointGroup, err)
	}
	kept := found[:0]
	for _, a := range found {
		if AppNamePattern.MatchString(a.Name) && modulePattern.MatchString(a.Module) {
			kept = append(kept, a)
		}
	}
	return kept, nil
}
