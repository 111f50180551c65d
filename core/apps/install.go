package apps

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/robothub/robothub/core/fault"
)

const (
	installTimeout    = 15 * time.Minute     // bounds one install or remove job
	installTempPrefix = "robot-app-install-" // names the temporary directory of an install job
)

// source is where an install takes its package from.
type source struct {
	shown    string     // as logged and stored: credentials redacted
	kind     SourceKind // hub_space, git or local
	cloneURL string     // for hub_space and git
	path     string     // for local
	token    string     // a hub token for this install only (install-private-space); never logged
}

var (
	hubSpacePath = regexp.MustCompile(`^/spaces/[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*/?$`)
	scpGitURL    = regexp.MustCompile(`^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[A-Za-z0-9._/~-]+$`)
)

// parseSource classifies an app's url: a hub space URL (<hub>/spaces/<user>/<app>), another git
// URL, or an absolute path to a directory on the robot.
func parseSource(raw string) (source, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return source{}, fault.Invalidf("url: required: a hub space URL (<hub>/spaces/<user>/<app>), a git URL or an absolute local path")
	case len(s) > 2048:
		return source{}, fault.Invalidf("url: longer than 2048 characters")
	case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' }):
		return source{}, fault.Invalidf("url: must not contain spaces or control characters")
	case strings.HasPrefix(s, "-"):
		return source{}, fault.Invalidf("url: must not start with '-'")
	}
	if strings.HasPrefix(s, "file://") {
		u, err := url.Parse(s)
		if err != nil || u.Path == "" {
			return source{}, fault.Invalidf("url: %s is not a valid file:// URL", s)
		}
		s = u.Path
	}
	if strings.HasPrefix(s, "/") {
		clean := filepath.Clean(s)
		info, err := os.Stat(clean)
		if err != nil || !info.IsDir() {
			return source{}, fault.Invalidf("url: local path %s is not a directory on the robot", clean)
		}
		// Checked before a job copies the directory, which for / would be the whole disk.
		if !isPackage(clean) {
			return source{}, fault.Invalidf("url: local path %s is not a Python package: it has no pyproject.toml or setup.py", clean)
		}
		return source{shown: clean, kind: SourceLocal, path: clean}, nil
	}
	if scpGitURL.MatchString(s) {
		return source{shown: s, kind: SourceGit, cloneURL: s}, nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return source{}, fault.Invalidf("url: %s is not a hub space URL, a git URL or an absolute local path", truncate(s, 200))
	}
	if !slices.Contains([]string{"http", "https", "ssh", "git"}, u.Scheme) {
		return source{}, fault.Invalidf("url: scheme %s is not one of http, https, ssh, git, file", u.Scheme)
	}
	kind := SourceGit
	if strings.HasPrefix(u.Scheme, "http") && hubSpacePath.MatchString(u.Path) && u.RawQuery == "" && u.Fragment == "" {
		kind = SourceHubSpace
		u.Path = strings.TrimSuffix(u.Path, "/")
	}
	return source{shown: RedactURL(u.String()), kind: kind, cloneURL: u.String()}, nil
}

// Install starts a job that installs the app package at rawURL (cloned, or copied from a local
// directory) into the apps venv: built into a wheel offline, checked, then installed. A package
// that fails any step leaves the previously installed version in place.
func (m *Manager) Install(rawURL string) (*Job, error) {
	src, err := parseSource(rawURL)
	if err != nil {
		return nil, err
	}
	return m.installSource(src), nil
}

func (m *Manager) installSource(src source) *Job {
	return m.startJob("install", src.shown, func(ctx context.Context, job *Job) ([]string, error) { return m.install(ctx, job, src, false) })
}

// Remove starts a job that uninstalls the package that provides app name, unless the app runs.
func (m *Manager) Remove(name string) (*Job, error) {
	info, err := m.App(name)
	if err != nil {
		return nil, err
	}
	if err := m.refuseIfRunning(name); err != nil {
		return nil, err
	}
	return m.startJob("remove", name, func(ctx context.Context, job *Job) ([]string, error) { return m.remove(ctx, job, info) }), nil
}

func (m *Manager) refuseIfRunning(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.activeLocked(); r != nil && r.info.Name == name {
		return fault.Refusedf("App '%s' is running and cannot be removed: stop it first", name)
	}
	return nil
}

// startJob runs work as a background job, one venv-changing job at a time.
func (m *Manager) startJob(command, target string, work func(context.Context, *Job) ([]string, error)) *Job {
	job := m.jobs.create(command, target)
	go func() {
		m.venvMu.Lock()
		defer m.venvMu.Unlock()
		job.setStatus(JobInProgress, nil)
		ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
		defer cancel()
		apps, err := work(ctx, job)
		if err != nil {
			job.Logf("Job '%s %s' failed: %v", job.info.Command, job.info.Target, err)
			m.log.Warn("job failed", "job", job.info.ID, "command", job.info.Command, "target", job.info.Target, "err", err)
			job.setStatus(JobFailed, err)
			return
		}
		job.Logf("Job '%s %s' completed successfully", job.info.Command, job.info.Target)
		m.log.Info("job done", "job", job.info.ID, "command", job.info.Command, "target", job.info.Target, "apps", apps)
		job.setStatus(JobDone, nil, apps...)
	}()
	return job
}

// install installs src's package and its dependencies (at their newest with upgrade).
func (m *Manager) install(ctx context.Context, job *Job, src source, upgrade bool) ([]string, error) {
	job.Logf("Installing from %s (%s)", src.shown, src.kind)
	job.Logf("Packages come from %s", m.venv.Source.Describe())
	var revision string
	if err := m.venv.Ensure(ctx, job); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", installTempPrefix)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	srcDir := filepath.Join(tmp, "src")
	switch src.kind {
	case SourceLocal:
		job.Logf("Copying %s", src.path)
		if err := CopyPackage(srcDir, src.path); err != nil {
			return nil, fmt.Errorf("copying %s: %w", src.path, err)
		}
	default:
		job.Logf("Cloning %s", src.shown)
		if err := runLoggedEnv(ctx, job, append([]string{gitProtocols}, m.gitAuthEnv(src)...),
			"git", "clone", "--depth", "1", "--quiet", "--", src.cloneURL, srcDir); err != nil {
			return nil, fmt.Errorf("cloning %s: %w", src.shown, err)
		}
		out, err := exec.CommandContext(ctx, "git", "-C", srcDir, "rev-parse", "HEAD").Output()
		if err != nil {
			return nil, fmt.Errorf("reading the cloned revision of %s: %w", src.shown, err)
		}
		revision = strings.TrimSpace(string(out))
		job.Logf("Cloned revision %s", revision)
	}
	if !isPackage(srcDir) {
		return nil, fmt.Errorf("%s has no pyproject.toml or setup.py at its root: it is not a Python package", src.shown)
	}
	if readme, err := os.ReadFile(filepath.Join(srcDir, "README.md")); err != nil || !strings.Contains(string(readme), AppTag) {
		job.Logf("Warning: README.md does not carry the %s tag; the app works but the app store will not list it", AppTag)
	}

	wheelDir := filepath.Join(tmp, "wheel")
	job.Logf("Building the package")
	args := append([]string{"wheel", "--no-index", "--no-deps", "--no-build-isolation", "--wheel-dir", wheelDir}, m.venv.findLinks()...)
	if err := m.venv.Pip(ctx, job, append(args, srcDir)...); err != nil {
		return nil, fmt.Errorf("building the package failed (pip wheel: %v); the installed version, if any, is unchanged", err)
	}
	wheels, _ := filepath.Glob(filepath.Join(wheelDir, "*.whl"))
	if len(wheels) != 1 {
		return nil, fmt.Errorf("building the package produced %d wheels, want 1", len(wheels))
	}
	meta, err := readWheel(wheels[0])
	if err != nil {
		return nil, err
	}
	if len(meta.apps) == 0 {
		return nil, fmt.Errorf("package %s declares no entry point in group %s (expected <app_name> = \"<app_name>.main:<ClassName>\")", meta.name, EntryPointGroup)
	}
	var names []string
	current := m.apps.Load()
	for _, a := range meta.apps {
		if !AppNamePattern.MatchString(a.name) {
			return nil, fmt.Errorf("entry point name %q is not a valid app name (letters, digits and underscores, not starting with a digit)", a.name)
		}
		if !modulePattern.MatchString(a.module) {
			return nil, fmt.Errorf("entry point %s names module %q, which is not a Python module path", a.name, a.module)
		}
		if other, ok := current.byName[a.name]; ok && normalizeDist(other.Extra.Package) != normalizeDist(meta.name) {
			return nil, fmt.Errorf("app %s is already provided by package %s; remove it first", a.name, other.Extra.Package)
		}
		names = append(names, a.name)
	}
	job.Logf("Package %s %s provides %s", meta.name, meta.version, strings.Join(names, ", "))
	stdlib, err := StdlibModules(ctx, m.venv.Python())
	if err != nil {
		return nil, err
	}
	if err := CheckShadowing(wheels[0], stdlib); err != nil {
		return nil, fmt.Errorf("package %s refused: %v; the installed version, if any, is unchanged", meta.name, err)
	}

	// From here pip changes the venv: a daemon killed before endChange puts the previous version
	// back at its next start (store.go). pip undoes its own failures.
	if err := m.beginChange(job, meta.name, wheels[0], tmp); err != nil {
		return nil, err
	}
	if err := m.installDependencies(ctx, job, meta, upgrade); err != nil {
		return nil, errors.Join(fmt.Errorf("installing the dependencies of %s failed: %v; the installed version, if any, is unchanged and keeps working", meta.name, err), m.endChange())
	}
	job.Logf("Installing %s", filepath.Base(wheels[0]))
	// The app's own wheel, replacing what is there even at the same version (a new commit of the
	// same version is new code). Its dependencies are in place: this step needs no index.
	if err := m.venv.install(ctx, job, installOptions{noDeps: true, reinstall: true, noIndex: true}, wheels[0]); err != nil {
		return nil, errors.Join(fmt.Errorf("pip install failed: %v", err), m.endChange())
	}
	if err := m.keepWheel(meta.name, wheels[0]); err != nil {
		job.Logf("Warning: keeping the wheel to restore this version after an interrupted install failed: %v", err)
	}
	err = m.finishChange(ctx, meta.name, wheels[0], func() {
		for _, name := range names {
			m.records[name] = installRecord{Source: src.shown, SourceKind: src.kind, Package: meta.name, Revision: revision, InstalledAt: time.Now().UTC()}
		}
	})
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if _, ok := m.apps.Load().byName[name]; !ok {
			return nil, fmt.Errorf("installed %s but the apps venv does not list app %s", meta.name, name)
		}
	}
	job.Logf("Installed %s %s", strings.Join(names, ", "), meta.version)
	return names, nil
}

func (m *Manager) remove(ctx context.Context, job *Job, info AppInfo) ([]string, error) {
	if err := m.refuseIfRunning(info.Name); err != nil {
		return nil, err
	}
	job.Logf("Uninstalling package %s (app %s)", info.Extra.Package, info.Name)
	if err := m.beginChange(job, info.Extra.Package, "", ""); err != nil {
		return nil, err
	}
	if err := m.venv.Pip(ctx, job, "uninstall", "--yes", info.Extra.Package); err != nil {
		return nil, errors.Join(fmt.Errorf("pip uninstall %s: %v", info.Extra.Package, err), m.endChange())
	}
	var removed []string
	err := m.finishChange(ctx, info.Extra.Package, "", func() {
		for _, a := range m.apps.Load().list {
			if a.Extra.Package == info.Extra.Package {
				removed = append(removed, a.Name)
				delete(m.records, a.Name)
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

// finishChange ends a package change to dist: forgets the journal, keeps only the wheel keep,
// applies edit to the installed-app records, saves them and rediscovers the apps.
func (m *Manager) finishChange(ctx context.Context, dist, keep string, edit func()) error {
	if err := m.endChange(); err != nil {
		return err
	}
	m.pruneWheels(dist, keep)
	m.installCount.Add(1)
	m.listMu.Lock()
	defer m.listMu.Unlock()
	edit()
	if err := writeJSONAtomic(m.path(installedFile), m.records); err != nil {
		return fmt.Errorf("saving installed-app records: %w", err)
	}
	return m.refreshLocked(ctx)
}

type wheelMeta struct {
	name, version string
	requires      []string // Requires-Dist entries that apply without extras
	apps          []entryPoint
}

type entryPoint struct{ name, module, class string }

func readWheel(path string) (wheelMeta, error) {
	var meta wheelMeta
	zr, err := zip.OpenReader(path)
	if err != nil {
		return meta, fmt.Errorf("reading the built wheel: %w", err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		dir, file, ok := strings.Cut(f.Name, "/")
		if !ok || !strings.HasSuffix(dir, ".dist-info") || (file != "METADATA" && file != "entry_points.txt") {
			continue
		}
		data, err := readZipFile(f)
		if err != nil {
			return meta, err
		}
		if file == "METADATA" {
			parseMetadata(string(data), &meta)
		} else {
			meta.apps = append(meta.apps, parseEntryPoints(string(data))[EntryPointGroup]...)
		}
	}
	if meta.name == "" {
		return meta, errors.New("the built wheel has no METADATA")
	}
	return meta, nil
}

// readZipFile reads a member of a wheel, up to 1 MiB.
func readZipFile(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, 1<<20))
}

func parseMetadata(text string, meta *wheelMeta) {
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			return // headers end at the first blank line
		}
		key, value, _ := strings.Cut(line, ":")
		value = strings.TrimSpace(value)
		switch strings.ToLower(key) {
		case "name":
			meta.name = value
		case "version":
			meta.version = value
		case "requires-dist":
			if !extraMarker.MatchString(value) {
				meta.requires = append(meta.requires, value)
			}
		}
	}
}

// parseEntryPoints parses an entry_points.txt: INI sections of name = module:attr lines.
func parseEntryPoints(text string) map[string][]entryPoint {
	out := map[string][]entryPoint{}
	section := ""
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.TrimSpace(line[1 : len(line)-1])
		default:
			name, value, ok := strings.Cut(line, "=")
			if !ok {
				continue
			}
			module, class, _ := strings.Cut(strings.TrimSpace(value), ":")
			class, _, _ = strings.Cut(class, "[") // drop extras
			out[section] = append(out[section], entryPoint{strings.TrimSpace(name), strings.TrimSpace(module), strings.TrimSpace(class)})
		}
	}
	return out
}

// extraMarker matches the environment marker of a requirement that applies only with an extra.
var extraMarker = regexp.MustCompile(`;.*\bextra\s*==`)

var distSeparators = regexp.MustCompile(`[-_.]+`)

func normalizeDist(name string) string {
	return strings.ToLower(distSeparators.ReplaceAllString(name, "-"))
}

// CopyPackage copies the app package at src to dst without VCS data, build output, caches, venvs.
func CopyPackage(dst, src string) error {
	skip := map[string]bool{".git": true, "__pycache__": true, "build": true, "dist": true, ".venv": true, "venv": true, "node_modules": true}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && p != src && (skip[d.Name()] || strings.HasSuffix(d.Name(), ".egg-info")) {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		}
		return nil // symlinks and special files are not part of a package
	})
}

func isPackage(dir string) bool {
	return exists(filepath.Join(dir, "pyproject.toml")) || exists(filepath.Join(dir, "setup.py"))
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
