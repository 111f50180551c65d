package robotd_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/robothub/robothub/adapters/python"
	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/robotd"
	"github.com/robothub/robothub/robotd/pysdk"
)

// memApps is the app lifecycle in memory, for the handler tests that need no Python: the same
// slot rules, job statuses and errors (with their core/fault kinds and the manager's messages) as
// core/apps.Manager, without a venv or processes. An app is "installed" from a local package
// directory (the name of the directory is the app's name; its pyproject.toml must declare a
// robot_apps entry point, as a wheel must); a started app connects its SDK at once (running),
// prints one line, and exits when stopped. Sessions are all remote: no process of the test is in
// an app's process group.
type memApps struct {
	robot apps.Robot // returned to its default pose after an app stops, as the manager does

	mu        sync.Mutex
	installed map[string]apps.AppInfo
	jobs      map[string]*memJob
	current   *memRun
	sessions  map[string]memSession
	startup   string
	seq       int
}

var _ robotd.Apps = (*memApps)(nil)

type memSession struct {
	apps.SessionInfo
	peer string
}

func newMemApps(rb apps.Robot) *memApps {
	return &memApps{robot: rb, installed: map[string]apps.AppInfo{}, jobs: map[string]*memJob{}, sessions: map[string]memSession{}}
}

func (m *memApps) nextID() string {
	m.seq++
	return fmt.Sprintf("%016x", m.seq)
}

// memJob is a job with a live log, following the statuses of apps.Job.
type memJob struct {
	mu      sync.Mutex
	info    apps.JobInfo
	changed chan struct{}
}

func (j *memJob) ID() string { return j.info.ID }

func (j *memJob) Info() apps.JobInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	info := j.info
	info.Apps, info.Logs = append([]string{}, j.info.Apps...), append([]string{}, j.info.Logs...)
	return info
}

func (j *memJob) Follow(from int) ([]string, apps.JobStatus, <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var lines []string
	if from < len(j.info.Logs) {
		lines = append(lines, j.info.Logs[from:]...)
	}
	return lines, j.info.Status, j.changed
}

func (j *memJob) update(f func(*apps.JobInfo)) {
	j.mu.Lock()
	defer j.mu.Unlock()
	f(&j.info)
	close(j.changed)
	j.changed = make(chan struct{})
}

func (j *memJob) logf(format string, args ...any) {
	j.update(func(i *apps.JobInfo) { i.Logs = append(i.Logs, fmt.Sprintf(format, args...)) })
}

func (j *memJob) finish(err error, names ...string) {
	j.update(func(i *apps.JobInfo) {
		i.Status, i.Apps, i.Finished = apps.JobDone, names, new(time.Now())
		if err != nil {
			i.Status, i.Error = apps.JobFailed, new(err.Error())
			i.Logs = append(i.Logs, err.Error())
		}
	})
}

// startJob runs work in the background as the manager runs a job: pending, in progress, then done
// with the apps it changed or failed with its error.
func (m *memApps) startJob(command, target string, work func(*memJob) ([]string, error)) *memJob {
	m.mu.Lock()
	j := &memJob{info: apps.JobInfo{ID: m.nextID(), Command: command, Target: target, Status: apps.JobPending, Created: time.Now()},
		changed: make(chan struct{})}
	m.jobs[j.info.ID] = j
	m.mu.Unlock()
	go func() {
		j.update(func(i *apps.JobInfo) { i.Status = apps.JobInProgress })
		names, err := work(j)
		j.finish(err, names...)
	}()
	return j
}

// packageDir checks an install URL as the manager does for a local path.
func packageDir(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return "", fault.Invalidf("url: required: a hub space URL (<hub>/spaces/<user>/<app>), a git URL or an absolute local path")
	case strings.ContainsAny(s, " \t\r\n\x00"):
		return "", fault.Invalidf("url: must not contain spaces or control characters")
	case !filepath.IsAbs(s):
		return "", fault.Invalidf("url: %s is not a hub space URL, a git URL or an absolute local path", s)
	}
	clean := filepath.Clean(s)
	if fi, err := os.Stat(clean); err != nil || !fi.IsDir() {
		return "", fault.Invalidf("url: local path %s is not a directory on the robot", clean)
	}
	if _, err := os.Stat(filepath.Join(clean, "pyproject.toml")); err != nil {
		return "", fault.Invalidf("url: local path %s is not a Python package: it has no pyproject.toml or setup.py", clean)
	}
	return clean, nil
}

var versionLine = regexp.MustCompile(`(?m)^version\s*=\s*"([^"]+)"`)

// readPackage reads what an install of dir would find: its app (the directory's name, when the
// package declares a robot_apps entry point) and its version.
func readPackage(dir string) (apps.AppInfo, error) {
	data, err := os.ReadFile(filepath.Join(dir, "pyproject.toml"))
	if err != nil {
		return apps.AppInfo{}, err
	}
	name := filepath.Base(dir)
	if !strings.Contains(string(data), "[project.entry-points.robot_apps]") {
		return apps.AppInfo{}, fmt.Errorf("the package at %s declares no entry point in group robot_apps", dir)
	}
	version := "0"
	if v := versionLine.FindSubmatch(data); v != nil {
		version = string(v[1])
	}
	return apps.AppInfo{Name: name, SourceKind: apps.SourceInstalled, Extra: apps.AppExtra{
		Module: name + ".main", Version: version, Source: dir, SourceKind: apps.SourceLocal, Installed: true,
		InstalledAt: new(time.Now()),
	}}, nil
}

func (m *memApps) Install(url string) (robotd.Job, error) {
	dir, err := packageDir(url)
	if err != nil {
		return nil, err
	}
	return m.startJob("install", dir, func(j *memJob) ([]string, error) {
		j.logf("Installing from %s", dir)
		info, err := readPackage(dir)
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		m.installed[info.Name] = info
		m.mu.Unlock()
		j.logf("Installed %s %s", info.Name, info.Extra.Version)
		return []string{info.Name}, nil
	}), nil
}

var commitPattern = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

func (m *memApps) Update(url, revision string) (robotd.Job, error) {
	if revision != "" && !commitPattern.MatchString(revision) {
		return nil, fault.Invalidf("revision: %s is not a git commit (7 to 64 hex digits)", revision)
	}
	m.mu.Lock()
	var from []string
	for name, info := range m.installed {
		if info.Extra.Source == strings.TrimSpace(url) {
			from = append(from, name)
		}
	}
	m.mu.Unlock()
	if len(from) == 0 {
		return nil, fault.NotFoundf("No installed app comes from %s: install it first", url)
	}
	return m.Install(url)
}

func (m *memApps) UpdateApp(name string) (robotd.Job, error) {
	info, err := m.app(name)
	if err != nil {
		return nil, err
	}
	return m.Install(info.Extra.Source)
}

func (m *memApps) InstallPrivateSpaceWithToken(spaceID, token string) (robotd.Job, error) {
	if !regexp.MustCompile(`^[\w.-]+/[\w.-]+$`).MatchString(spaceID) {
		return nil, fault.Invalidf("space_id: %s is not <user>/<space>", spaceID)
	}
	return nil, fault.Refusedf("No hub is configured (--hub-url none): private spaces cannot be installed")
}

func (m *memApps) Remove(name string) (robotd.Job, error) {
	if _, err := m.app(name); err != nil {
		return nil, err
	}
	m.mu.Lock()
	running := m.current != nil && m.current.state.Active() && m.current.info.Name == name
	m.mu.Unlock()
	if running {
		return nil, fault.Refusedf("App '%s' is running and cannot be removed: stop it first", name)
	}
	return m.startJob("remove", name, func(j *memJob) ([]string, error) {
		j.logf("Removing %s", name)
		m.mu.Lock()
		delete(m.installed, name)
		m.mu.Unlock()
		return []string{name}, nil
	}), nil
}

func (m *memApps) Job(id string) (robotd.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if j, ok := m.jobs[id]; ok {
		return j, nil
	}
	return nil, fault.NotFoundf("Job %s not found", id)
}

func (m *memApps) app(name string) (apps.AppInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if info, ok := m.installed[name]; ok {
		return info, nil
	}
	return apps.AppInfo{}, fault.NotFoundf("App '%s' is not installed", name)
}

func (m *memApps) List() []apps.AppInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	list := make([]apps.AppInfo, 0, len(m.installed))
	for _, info := range m.installed {
		list = append(list, info)
	}
	slices.SortFunc(list, func(a, b apps.AppInfo) int { return strings.Compare(a.Name, b.Name) })
	return list
}

// ListAvailable has no hub catalog (as --hub-url none): every kind lists the installed apps.
func (m *memApps) ListAvailable(ctx context.Context, kind apps.SourceKind) ([]apps.AppInfo, error) {
	switch kind {
	case "", apps.SourceInstalled, apps.SourceHubSpace, apps.SourceDashboardSelection, apps.SourceLocal:
		return m.List(), nil
	}
	return nil, fault.Invalidf("source kind %q is not one of hf_space, dashboard_selection, local, installed", kind)
}

// RefreshCatalog has nothing to refresh: memApps has no hub catalog.
func (m *memApps) RefreshCatalog() {}

func (m *memApps) CheckUpdates(ctx context.Context, force bool) (*apps.AppUpdates, error) {
	return &apps.AppUpdates{}, nil
}

// memRun is one app run in the slot, with its output.
type memRun struct {
	info   apps.AppInfo
	state  apps.AppState
	output *memOutput
}

func (r *memRun) status() apps.AppStatus { return apps.AppStatus{Info: r.info, State: r.state} }

// memOutput is a run's output, followed as apps.OutputLog is.
type memOutput struct {
	mu      sync.Mutex
	lines   []apps.OutputLine
	ended   bool
	changed chan struct{}
}

func (o *memOutput) add(stream, line string, end bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if line != "" {
		o.lines = append(o.lines, apps.OutputLine{Stream: stream, Line: line})
	}
	o.ended = o.ended || end
	close(o.changed)
	o.changed = make(chan struct{})
}

func (o *memOutput) Follow(from int) ([]apps.OutputLine, int, bool, <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var lines []apps.OutputLine
	if from < len(o.lines) {
		lines = append(lines, o.lines[from:]...)
	}
	return lines, len(o.lines), o.ended, o.changed
}

func (m *memApps) Start(name string) (apps.AppStatus, error)        { return m.start(name) }
func (m *memApps) StartNoEvict(name string) (apps.AppStatus, error) { return m.start(name) }

// start is core/apps': SDK clients hold no slot, so nothing is evicted.
func (m *memApps) start(name string) (apps.AppStatus, error) {
	info, err := m.app(name)
	if err != nil {
		return apps.AppStatus{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.slotBusyLocked(); err != nil {
		return apps.AppStatus{}, err
	}
	r := &memRun{info: info, state: apps.StateStarting, output: &memOutput{changed: make(chan struct{})}}
	m.current = r
	st := r.status()
	r.state = apps.StateRunning // its SDK connects at once
	r.output.add("stdout", name+" running", false)
	return st, nil
}

func (m *memApps) activeLocked() *memRun {
	if m.current != nil && m.current.state.Active() {
		return m.current
	}
	return nil
}

func (m *memApps) slotBusyLocked() error {
	if r := m.activeLocked(); r != nil {
		return fault.Refusedf("An app is already running: '%s' (%s); stop it first: POST /api/apps/stop-current-app, or Stop on the dashboard", r.info.Name, r.state)
	}
	return nil
}

func (m *memApps) Stop() (apps.AppStatus, error) {
	m.mu.Lock()
	r := m.activeLocked()
	if r == nil {
		if c := m.current; c != nil && c.state == apps.StateError {
			m.current = nil // as core/apps: a crashed app's stop clears its error
			m.mu.Unlock()
			return c.status(), nil
		}
		m.mu.Unlock()
		return apps.AppStatus{}, fault.Refusedf("No app is currently running")
	}
	r.output.add("stdout", r.info.Name+" stopping", true)
	r.state = apps.StateDone
	m.current = nil // a stopped app is no current app
	m.mu.Unlock()
	if m.robot != nil {
		m.robot.ReturnToDefault()
	}
	return r.status(), nil
}

func (m *memApps) Restart() (apps.AppStatus, error) {
	st, err := m.Stop()
	if err != nil {
		return apps.AppStatus{}, err
	}
	return m.StartNoEvict(st.Info.Name)
}

func (m *memApps) Status() *apps.AppStatus {
	_, st := m.Output()
	return st
}

func (m *memApps) Output() (robotd.AppOutput, *apps.AppStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.current == nil {
		return nil, nil
	}
	st := m.current.status()
	return m.current.output, &st
}

func (m *memApps) Slot() apps.SlotInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.activeLocked(); r != nil {
		return apps.SlotInfo{State: "local_app", Holder: r.info.Name}
	}
	return apps.SlotInfo{State: "free"}
}

func (m *memApps) OpenSession(req apps.SessionRequest) (apps.SessionInfo, error) {
	if len(req.Client) > 200 {
		return apps.SessionInfo{}, fault.Invalidf("client: at most 200 characters")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	held := 0
	for _, s := range m.sessions {
		if req.Peer != "" && s.peer == req.Peer {
			held++
		}
	}
	if held >= apps.MaxSessionsPerPeer {
		return apps.SessionInfo{}, fmt.Errorf("%w: this client (%s) has %d open, the most one client may hold; close one (DELETE /api/sessions/<id>) or let it expire", apps.ErrTooManySessions, req.Peer, held)
	}
	s := memSession{SessionInfo: apps.SessionInfo{ID: m.nextID(), Kind: "remote", Client: req.Client,
		TTL: apps.DefaultSessionTTL.Seconds(), Opened: time.Now()}, peer: req.Peer}
	m.sessions[s.ID] = s
	return s.SessionInfo, nil
}

func (m *memApps) Heartbeat(id string) (apps.SessionInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.sessions[id]; ok {
		return s.SessionInfo, nil
	}
	return apps.SessionInfo{}, fault.NotFoundf("Session %s not found or expired", id)
}

func (m *memApps) CloseSession(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sessions[id]; !ok {
		return fault.NotFoundf("Session %s not found or expired", id)
	}
	delete(m.sessions, id)
	return nil
}

func (m *memApps) Sessions() []apps.SessionInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []apps.SessionInfo{}
	for _, s := range m.sessions {
		out = append(out, s.SessionInfo)
	}
	return out
}

func (m *memApps) StartupApp() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.startup
}

func (m *memApps) SetStartupApp(name string) error {
	if name != "" {
		if _, err := m.app(name); err != nil {
			return fault.Refusedf("App '%s' is not installed", name)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.startup = name
	return nil
}

func (m *memApps) SDKVersion() string         { return python.SDKVersion("test", pysdk.Files) }
func (m *memApps) VenvDir() string            { return "/nonexistent/apps_venv" }
func (m *memApps) StopTimeout() time.Duration { return time.Second }

var _ apps.Robot = (*robot.Robot)(nil)
