package apps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/robothub/robothub/core/apps/origin"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/procgroup"
)

// The deadline of each step of a job, fitted to what the step does. A clone or a download that
// stops receiving fails sooner: git gives up below 1 KB/s for 30 s, pip after 30 s of silence.
const (
	ensureDeadline  = 10 * time.Minute // create or complete the venv (ensurepip, setuptools)
	cloneDeadline   = 10 * time.Minute // git clone --depth 1 of an app's source
	buildDeadline   = 10 * time.Minute // build the app's wheel, offline
	resolveDeadline = 20 * time.Minute // resolve and download (and build) its dependencies
	changeDeadline  = 10 * time.Minute // install the checked wheels, or uninstall: local, no network
	cloneLowSpeed   = "30"             // seconds below http.lowSpeedLimit before git gives up
)

// Install starts a job that installs the app package at rawURL (cloned, or copied from a local
// directory) into the apps venv: built into a wheel offline, its dependencies resolved and
// downloaded, every wheel checked, then installed from those files only. A package that fails any
// step, or a job cancelled before the venv changes, leaves the previously installed version.
func (m *Manager) Install(rawURL string) (*Job, error) {
	src, err := origin.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	return m.installSource(src), nil
}

func (m *Manager) installSource(src source) *Job {
	var expected []string
	if guess := appNameGuess(src); guess != "" {
		expected = []string{guess}
	}
	return m.startJob("install", src.Shown, expected, func(ctx context.Context, job *Job) ([]string, error) { return m.install(ctx, job, src, false) })
}

// appNameGuess is the app an install of src most likely brings, until its package says: the
// space's or folder's name as a Python name (a space my-app holds my_app, as publish names it).
func appNameGuess(src source) string {
	var base string
	switch src.Kind {
	case SourceLocal:
		base = filepath.Base(src.Path)
	default:
		u := strings.TrimSuffix(strings.TrimRight(src.CloneURL, "/"), ".git")
		base = u[strings.LastIndexAny(u, "/:")+1:]
	}
	name := strings.ReplaceAll(base, "-", "_")
	if !AppNamePattern().MatchString(name) {
		return ""
	}
	return name
}

// Remove starts a job that uninstalls the package that provides app name, and the dependencies
// its installs brought that no other installed app needs, unless the app runs.
func (m *Manager) Remove(name string) (*Job, error) {
	info, err := m.App(name)
	if err != nil {
		return nil, err
	}
	if err := m.refuseIfRunning(name); err != nil {
		return nil, err
	}
	return m.startJob("remove", name, nil, func(ctx context.Context, job *Job) ([]string, error) { return m.remove(ctx, job, info) }), nil
}

func (m *Manager) refuseIfRunning(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.activeLocked(); r != nil && r.info.Name == name {
		return fault.Refusedf("App '%s' is running and cannot be removed: stop it first", name)
	}
	return nil
}

// step runs one step of a job under its own deadline; the job's cancellation reaches it too. The
// job's log says how long each step took: the breakdown of an update's time (issue 24's profile).
func step(ctx context.Context, log io.Writer, deadline time.Duration, what string, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeoutCause(ctx, deadline, fmt.Errorf("did not finish within %s", deadline))
	defer cancel()
	began := time.Now()
	if err := f(ctx); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	fmt.Fprintf(log, "Step %q took %d ms\n", what, time.Since(began).Milliseconds())
	return nil
}

// install installs src's package and its dependencies (at their newest with upgrade).
func (m *Manager) install(ctx context.Context, job *Job, src source, upgrade bool) ([]string, error) {
	job.Logf("Installing from %s (%s)", src.Shown, src.Kind)
	if err := step(ctx, job, ensureDeadline, "preparing the apps venv", func(ctx context.Context) error { return m.py.Ensure(ctx, job) }); err != nil {
		return nil, err
	}
	if p, ok := m.py.(Prestarter); ok {
		defer p.Prestart()()
	}
	tmp, err := os.MkdirTemp("", installTempPrefix)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	srcDir, revision, err := m.fetch(ctx, job, src, filepath.Join(tmp, "src"))
	if err != nil {
		return nil, err
	}
	if !origin.IsPackage(srcDir) {
		return nil, fmt.Errorf("%s has no pyproject.toml or setup.py at its root: it is not a Python package", src.Shown)
	}
	if readme, err := os.ReadFile(filepath.Join(srcDir, "README.md")); err != nil || !strings.Contains(string(readme), AppTag) {
		job.Logf("Warning: README.md does not carry the %s tag; the app works but the app store will not list it", AppTag)
	}

	job.Logf("Building the package")
	var wheel Wheel
	err = step(ctx, job, buildDeadline, "building the package", func(ctx context.Context) (err error) {
		wheel, err = m.py.BuildWheel(ctx, job, srcDir, filepath.Join(tmp, "wheel"))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%v; the installed version, if any, is unchanged", err)
	}
	names, err := m.appsOf(wheel)
	if err != nil {
		return nil, err
	}
	job.Logf("Package %s %s provides %s", wheel.Name, wheel.Version, strings.Join(names, ", "))
	job.Expect(names)

	var reqs, sdkMissing []string
	for _, r := range wheel.Requires {
		if normalizeDist(requirementName(r)) == normalizeDist(SDKDistribution) {
			// The daemon provides the SDK, but not always what the SDK needs: an app that requires
			// it gets the SDK's requirements that the venv lacks resolved with its own, as pip
			// would bring them, so that an install the app cannot import after fails here, naming
			// them. Those the venv has are taken as they are: pip would re-resolve Debian's builds
			// against their upstream pins (fastapi 0.92 wants a starlette Debian does not ship).
			if sdkMissing, err = MissingSDKDependencies(ctx, m.py, m.cfg.SDK); err != nil {
				return nil, err
			}
			if len(sdkMissing) == 0 {
				job.Logf("Requirement %s: the daemon provides robot_sdk %s, and the apps venv has its requirements", r, m.SDKVersion())
			} else {
				job.Logf("Requirement %s: the daemon provides robot_sdk %s; its requirements the apps venv lacks are resolved with the app's: %s", r, m.SDKVersion(), strings.Join(sdkMissing, ", "))
				reqs = append(reqs, sdkMissing...)
			}
			continue
		}
		reqs = append(reqs, r)
	}
	if len(reqs) > 0 {
		job.Logf("Installing dependencies: %s", strings.Join(reqs, ", "))
	}
	var deps []Wheel
	err = step(ctx, job, resolveDeadline, "the dependencies of "+wheel.Name, func(ctx context.Context) (err error) {
		deps, err = m.py.Resolve(ctx, job, Resolution{Requirements: reqs, Upgrade: upgrade, Held: sdkMissing, Dir: filepath.Join(tmp, "deps")})
		return err
	})
	if err != nil && len(sdkMissing) > 0 {
		return nil, fmt.Errorf("%s requires robot-sdk, whose requirements %s are not in the apps venv and cannot be installed with the app's (%v): %s; the installed version, if any, is unchanged",
			wheel.Name, strings.Join(sdkMissing, ", "), err, SDKDependenciesHint)
	}
	if err != nil {
		return nil, fmt.Errorf("%v; the installed version, if any, is unchanged and keeps working", err)
	}
	if err := m.py.Check(ctx, wheel, deps); err != nil {
		return nil, fmt.Errorf("package %s refused: %v; the installed version, if any, is unchanged", wheel.Name, err)
	}
	if len(deps) > 0 {
		job.Logf("Checked %d dependency wheel(s): none installs over the runtime or another package", len(deps))
	}

	// From here the venv changes: a cancel is refused, and a daemon killed before endChange puts the
	// previous version back at its next start (the toolchain's journal). pip undoes its own failures.
	if err := job.BeginUncancellable(); err != nil {
		return nil, err
	}
	defer job.EndUncancellable()
	if err := m.py.BeginChange(job.ID(), wheel.Name, wheel.Path, tmp); err != nil {
		return nil, err
	}
	files := make([]string, 0, len(deps)+1)
	brought := make([]string, 0, len(deps))
	for _, d := range deps {
		files, brought = append(files, d.Path), append(brought, normalizeDist(d.Name))
	}
	job.Logf("Installing %s", strings.Join(append(slices.Clone(brought), filepath.Base(wheel.Path)), ", "))
	// The app's own wheel replaces what is there even at the same version (a new commit of the same
	// version is new code); everything comes from the checked files, no index, no dependencies.
	err = step(context.WithoutCancel(ctx), job, changeDeadline, "installing", func(ctx context.Context) error {
		return m.py.Install(ctx, job, append(files, wheel.Path)...)
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%v; the installed version, if any, is unchanged", err), m.py.EndChange(job, wheel.Name, "", true))
	}
	err = m.finishChange(ctx, job, wheel.Name, wheel.Path, func() {
		var depsOf []string
		for _, rec := range m.records {
			if normalizeDist(rec.Package) == normalizeDist(wheel.Name) {
				depsOf = append(depsOf, rec.Dependencies...)
			}
		}
		depsOf = sortedSet(append(depsOf, brought...))
		for _, name := range names {
			rec := installRecord{Source: src.Shown, SourceKind: src.Kind, Package: wheel.Name, Revision: revision,
				InstalledAt: time.Now().UTC(), Dependencies: depsOf, LastUpdate: m.records[name].LastUpdate}
			m.recordSpace(&rec, false)
			m.records[name] = rec
		}
	})
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if _, ok := m.apps.Load().byName[name]; !ok {
			return nil, fmt.Errorf("installed %s but the apps venv does not list app %s", wheel.Name, name)
		}
	}
	job.Logf("Installed %s %s", strings.Join(names, ", "), wheel.Version)
	return names, nil
}

// appsOf returns the apps a wheel's robot_apps entry points declare, refusing names that are not
// app names and apps that another package provides.
func (m *Manager) appsOf(w Wheel) ([]string, error) {
	eps := w.EntryPoints[EntryPointGroup]
	if len(eps) == 0 {
		return nil, fmt.Errorf("package %s declares no entry point in group %s (expected <app_name> = \"<app_name>.main:<ClassName>\")", w.Name, EntryPointGroup)
	}
	var names []string
	current := m.apps.Load()
	for _, a := range eps {
		if !AppNamePattern().MatchString(a.Name) {
			return nil, fmt.Errorf("entry point name %q is not a valid app name (letters, digits and underscores, not starting with a digit)", a.Name)
		}
		if !modulePattern().MatchString(a.Module) {
			return nil, fmt.Errorf("entry point %s names module %q, which is not a Python module path", a.Name, a.Module)
		}
		if other, ok := current.byName[a.Name]; ok && normalizeDist(other.Extra.Package) != normalizeDist(w.Name) {
			return nil, fmt.Errorf("app %s is already provided by package %s; remove it first", a.Name, other.Extra.Package)
		}
		names = append(names, a.Name)
	}
	return names, nil
}

// fetch returns the directory of src's package: a local one as it is (the build copies it), or a
// clone into dir, with its revision.
func (m *Manager) fetch(ctx context.Context, job *Job, src source, dir string) (string, string, error) {
	if src.Kind == SourceLocal {
		job.Logf("Copying %s", src.Path)
		return src.Path, "", nil
	}
	job.Logf("Cloning %s", src.Shown)
	err := step(ctx, job, cloneDeadline, "cloning "+src.Shown, func(ctx context.Context) error {
		cmd := exec.Command("git", "-c", "http.lowSpeedLimit=1000", "-c", "http.lowSpeedTime="+cloneLowSpeed,
			"clone", "--depth", "1", "--quiet", "--", src.CloneURL, dir)
		cmd.Env = append(gitEnv(), m.gitAuthEnv(src)...)
		tail := &lineTail{max: 3}
		if err := procgroup.Run(ctx, cmd, io.MultiWriter(job, tail)); err != nil {
			if ctx.Err() == nil && len(tail.last(1)) > 0 {
				return fmt.Errorf("%w: %s", err, RedactText(tail.last(1)[0]))
			}
			return err
		}
		return nil
	})
	if err != nil {
		return "", "", err
	}
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", "", fmt.Errorf("reading the cloned revision of %s: %w", src.Shown, err)
	}
	revision := strings.TrimSpace(string(out))
	job.Logf("Cloned revision %s", revision)
	return dir, revision, nil
}

// gitEnv is the environment of git for a URL from outside: no prompt, the protocols that reach
// only a server, and ssh that gives up on a silent server.
func gitEnv() []string {
	env := append(os.Environ(), "GIT_TERMINAL_PROMPT=0", gitProtocols)
	if os.Getenv("GIT_SSH_COMMAND") == "" && os.Getenv("GIT_SSH") == "" {
		env = append(env, "GIT_SSH_COMMAND=ssh -o BatchMode=yes -o ConnectTimeout=30 -o ServerAliveInterval=15 -o ServerAliveCountMax=2")
	}
	return env
}

func (m *Manager) remove(ctx context.Context, job *Job, info AppInfo) ([]string, error) {
	if err := m.refuseIfRunning(info.Name); err != nil {
		return nil, err
	}
	pkg := info.Extra.Package
	leaving, kept, err := m.dependenciesLeaving(pkg)
	if err != nil {
		return nil, err
	}
	job.Logf("Uninstalling package %s (app %s)", pkg, info.Name)
	if len(leaving) > 0 {
		job.Logf("and the dependencies it brought that no other app needs: %s", strings.Join(leaving, ", "))
	}
	if err := job.BeginUncancellable(); err != nil {
		return nil, err
	}
	defer job.EndUncancellable()
	if err := m.py.BeginChange(job.ID(), pkg, "", ""); err != nil {
		return nil, err
	}
	err = step(context.WithoutCancel(ctx), job, changeDeadline, "uninstalling "+pkg, func(ctx context.Context) error {
		return m.py.Uninstall(ctx, job, append([]string{pkg}, leaving...)...)
	})
	if err != nil {
		return nil, errors.Join(err, m.py.EndChange(job, pkg, "", true))
	}
	var removed []string
	err = m.finishChange(ctx, job, pkg, "", func() {
		for _, a := range m.apps.Load().list {
			if a.Extra.Package == pkg {
				removed = append(removed, a.Name)
				delete(m.records, a.Name)
			}
		}
		// What another app needs stays, and is now that app's to take away.
		for name, rec := range m.records {
			if more := kept[normalizeDist(rec.Package)]; len(more) > 0 {
				rec.Dependencies = sortedSet(append(rec.Dependencies, more...))
				m.records[name] = rec
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if name := m.StartupApp(); name != "" && slices.Contains(removed, name) {
		job.Logf("App %s was the startup app; clearing the startup app", info.Name)
		if err := m.SetStartupApp(""); err != nil {
			return nil, err
		}
	}
	return removed, nil
}

// dependenciesLeaving returns the distributions that installs of package pkg brought and that no
// other installed app package needs (directly or not), and, by app package, those it brought that
// other packages need, which stay.
func (m *Manager) dependenciesLeaving(pkg string) ([]string, map[string][]string, error) {
	brought := map[string]bool{}
	others := map[string]bool{}
	for _, rec := range m.records {
		if normalizeDist(rec.Package) == normalizeDist(pkg) {
			for _, d := range rec.Dependencies {
				brought[d] = true
			}
		}
	}
	for _, a := range m.apps.Load().list {
		if p := normalizeDist(a.Extra.Package); p != normalizeDist(pkg) {
			others[p] = true
		}
	}
	if len(brought) == 0 {
		return nil, nil, nil
	}
	kept := map[string][]string{}
	needed := map[string]bool{}
	for other := range others {
		needs, err := m.py.Needs(other)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the distributions of the apps venv: %w", err)
		}
		for d := range needs {
			needed[d] = true
			if brought[d] {
				kept[other] = append(kept[other], d)
			}
		}
	}
	var leaving []string
	for d := range brought {
		if m.py.InstalledVersion(d) != "" && !needed[d] && !runtimeDistribution(d) {
			leaving = append(leaving, d)
		}
	}
	slices.Sort(leaving)
	return leaving, kept, nil
}

func runtimeDistribution(name string) bool {
	return slices.Contains([]string{"pip", "setuptools", "wheel", normalizeDist(SDKDistribution)}, normalizeDist(name))
}

func sortedSet(list []string) []string {
	set := map[string]bool{}
	for _, s := range list {
		set[s] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// finishChange ends a package change to dist: forgets the journal, keeps only the wheel keep,
// applies edit to the installed-app records, saves them and rediscovers the apps.
func (m *Manager) finishChange(ctx context.Context, job *Job, dist, keep string, edit func()) error {
	if err := m.py.EndChange(job, dist, keep, false); err != nil {
		return err
	}
	m.installCount.Add(1)
	m.listMu.Lock()
	defer m.listMu.Unlock()
	edit()
	if err := writeJSONAtomic(m.path(installedFile), m.records); err != nil {
		return fmt.Errorf("saving installed-app records: %w", err)
	}
	return m.refreshLocked(context.WithoutCancel(ctx))
}

var (
	distSeparators = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[-_.]+`) })
	// requirementNamePattern is the distribution name at the start of a PEP 508 requirement.
	requirementNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)`) })
)

// normalizeDist is the PEP 503 normalized form of a distribution name.
func normalizeDist(name string) string {
	return strings.ToLower(distSeparators().ReplaceAllString(name, "-"))
}

func requirementName(req string) string {
	m := requirementNamePattern().FindStringSubmatch(req)
	if m == nil {
		return ""
	}
	return m[1]
}
