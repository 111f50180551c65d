// Package apps is the app lifecycle of the robot daemon: install, update and remove as background
// jobs that can be cancelled, the SDK in the apps venv, discovery of installed apps from their
// robot_apps entry points, the single app slot (start, stop, restart, status) shared with remote
// SDK sessions, the startup app; the hub catalog it offers is core/apps/catalog. The Python
// packaging itself is a Toolchain (adapters/python), which the daemon wires in.
package apps

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robothub/robothub/core/apps/catalog"
	"github.com/robothub/robothub/core/apps/job"
	"github.com/robothub/robothub/core/apps/origin"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/robot"
)

// DefaultStopTimeout is how long Stop waits after SIGINT before it kills the app's process group.
const DefaultStopTimeout = 20 * time.Second

// DefaultSessionTTL is how long an SDK session lasts without a heartbeat.
const DefaultSessionTTL = 10 * time.Second

// Robot is what the manager needs from the robot: wake it for the startup app, return it to its
// default pose after an app, and hear about wake-ups and antenna touches.
type Robot interface {
	Awake() bool
	WakeUp() *robot.Move
	ReturnToDefault() bool
	OnAntennaTouch(func())
	OnWake(func())
}

// Config configures a Manager.
type Config struct {
	DataDir     string        // installed-app records, startup config, running-app file
	Toolchain   Toolchain     // the apps venv and its packaging (adapters/python)
	HubToken    string        // reads private spaces of HubURL (install-private-space, their updates)
	StopTimeout time.Duration // default DefaultStopTimeout
	SessionTTL  time.Duration // default DefaultSessionTTL
	SDK         fs.FS         // the embedded Python SDK (pyproject.toml, robot_sdk/)
	SDKVersion  string        // the version the SDK is installed at: python.SDKVersion (adapters/python) of the daemon's
	HubURL      string        // the hub whose spaces form the catalog; empty: no catalog
	HTTPClient  *http.Client  // for the catalog
	Robot       Robot         // may be nil (no pose reset, no startup app)
	StartupApp  string        // the --startup-app flag; overrides the saved startup app
	Log         *slog.Logger
}

// Manager runs the app lifecycle. Its methods are safe for concurrent use.
type Manager struct {
	cfg     Config
	log     *slog.Logger
	py      Toolchain
	catalog *catalog.Catalog
	jobs    *job.Registry

	venvMu chan struct{}  // held (one token) by whatever changes the venv: one job at a time
	jobsWG sync.WaitGroup // the jobs' goroutines: Close waits for them before the data dir is let go

	listMu  sync.Mutex // serialises discovery and guards records
	apps    atomic.Pointer[appSet]
	records map[string]installRecord

	updates      updateCache
	installCount atomic.Uint64 // changes of the venv's apps since start: update checks go stale
	webPort      atomic.Int32  // the port of the running app's page (AppWebPortEnv); 0: the app's own

	mu           sync.Mutex
	appEnv       []string // what the daemon adds to its apps' environment (SetAppEnv)
	appCreds     AppCredentials
	warnings     []string // what the daemon status shows: state files that could not be read
	current      *run
	sessions     map[string]*session
	startupApp   string
	launchOnWake bool
	closed       bool
}

type appSet struct {
	list   []AppInfo
	byName map[string]AppInfo
	stamp  string
	found  []discoveredApp // what discovery found: the list is rebuilt from it when only records change
}

// NewManager returns a Manager for cfg; call Prepare before using it.
func NewManager(cfg Config) (*Manager, error) {
	if cfg.DataDir == "" || cfg.Toolchain == nil {
		return nil, fmt.Errorf("apps: DataDir and Toolchain are required")
	}
	if cfg.SDK == nil {
		return nil, fmt.Errorf("apps: the embedded SDK is required")
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = DefaultStopTimeout
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("apps: data dir: %w", err)
	}
	m := &Manager{
		cfg:      cfg,
		log:      cmp.Or(cfg.Log, slog.New(slog.DiscardHandler)),
		py:       cfg.Toolchain,
		venvMu:   make(chan struct{}, 1),
		jobs:     &job.Registry{Redact: RedactText, NewID: func() string { return randomHex(8) }},
		records:  map[string]installRecord{},
		sessions: map[string]*session{},
	}
	if cfg.HubURL != "" {
		m.catalog = &catalog.Catalog{HubURL: cfg.HubURL, Client: cfg.HTTPClient, TTL: 5 * time.Minute}
	}
	m.loadRecords()
	migrated := 0
	for name, rec := range m.records {
		if rec.SourceKind == legacyHubSpace {
			rec.SourceKind = SourceHubSpace
		}
		if m.recordSpace(&rec, true) {
			migrated++
		}
		m.records[name] = rec
	}
	if migrated > 0 {
		// Records written before the space was kept held one run's URL of the hub.
		if err := writeJSONAtomic(m.path(installedFile), m.records); err != nil {
			m.log.Warn("saving the installed-app records with their spaces", "err", err)
		}
		m.log.Info("installed-app records now name their hub space", "records", migrated)
	}
	// A startup setting that cannot be read (a torn write by another tool, an edit by hand) must
	// not keep the robot from starting: it is unset until set again.
	var sc startupConfig
	if err := readJSON(m.path(startupFile), &sc); err != nil {
		m.log.Warn("the saved startup app cannot be read; no startup app until one is set again", "file", m.path(startupFile), "err", err)
	} else if sc.StartupApp != "" && !AppNamePattern().MatchString(sc.StartupApp) {
		m.log.Warn("the saved startup app is not an app name; no startup app until one is set again", "file", m.path(startupFile), "startup_app", truncate(sc.StartupApp, 100))
	} else {
		m.startupApp = sc.StartupApp
	}
	if cfg.StartupApp != "" {
		if !AppNamePattern().MatchString(cfg.StartupApp) {
			return nil, fault.Invalidf("startup app %q is not a valid app name", cfg.StartupApp)
		}
		m.startupApp = cfg.StartupApp
	}
	m.apps.Store(&appSet{byName: map[string]AppInfo{}})
	if m.cfg.Robot != nil {
		m.cfg.Robot.OnWake(m.onWake)
		m.cfg.Robot.OnAntennaTouch(m.onAntennaTouch)
	}
	return m, nil
}

func (m *Manager) path(name string) string { return filepath.Join(m.cfg.DataDir, name) }

// SetAppEnv sets variables ("NAME=value", such as the daemon's address and token) apps get.
func (m *Manager) SetAppEnv(vars ...string) {
	for _, kv := range vars {
		if v, ok := strings.CutPrefix(kv, AppWebPortEnv+"="); ok {
			if port, err := strconv.Atoi(v); err == nil && port > 0 && port <= 65535 {
				m.webPort.Store(int32(port))
			}
		}
	}
	m.mu.Lock()
	m.appEnv = append([]string(nil), vars...)
	m.mu.Unlock()
}

// AppCredentials makes the credentials of one run of an app: variables ("NAME=value") added to its
// environment after SetAppEnv's, and revoke, called once the app has exited.
type AppCredentials func(app string) (vars []string, revoke func())

// SetAppCredentials sets what makes each run's credentials (the daemon mints a token per start).
func (m *Manager) SetAppCredentials(f AppCredentials) {
	m.mu.Lock()
	m.appCreds = f
	m.mu.Unlock()
}

// Warnings says what went wrong with the manager's state at start (a corrupt installed-apps.json
// kept aside), for the daemon's status.
func (m *Manager) Warnings() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.warnings)
}

// Warn logs msg as an error and adds it to Warnings, for the daemon's status: what the operator
// must act on (another robot took this one's fleet session).
func (m *Manager) Warn(msg string) {
	m.log.Error(msg)
	m.mu.Lock()
	m.warnings = append(m.warnings, msg)
	m.mu.Unlock()
}

// StopTimeout is how long Stop waits after SIGINT.
func (m *Manager) StopTimeout() time.Duration { return m.cfg.StopTimeout }

// VenvDir is the apps venv directory.
func (m *Manager) VenvDir() string { return m.py.VenvDir() }

// SDKVersion is the version of the SDK the manager installs.
func (m *Manager) SDKVersion() string { return m.cfg.SDKVersion }

// Prepare stops an app a previous daemon left running, creates the apps venv if missing, puts back
// a package change a killed daemon left half done, installs the SDK, and discovers the apps.
func (m *Manager) Prepare(ctx context.Context) error {
	m.recoverOrphan()
	m.venvMu <- struct{}{}
	defer func() { <-m.venvMu }()
	pr, w := io.Pipe()
	defer w.Close()
	// pip's and venv's own lines are for --log-level debug: on a first start some 25 of them came
	// before robothub dev's banner. Their errors come back with their output's end.
	// A first start makes the venv and installs the SDK: tens of seconds that robothub dev's user
	// watched in silence. Say so, and when it is done.
	began := time.Now()
	if _, err := os.Stat(m.py.Python()); err != nil {
		m.log.Info("making the apps venv and installing the robot SDK into it (first start only: 10-30 s)", "dir", m.py.VenvDir())
	} else {
		m.log.Info("preparing the apps venv", "dir", m.py.VenvDir())
	}
	defer func() { m.log.Info("the apps venv is ready", "in", time.Since(began).Round(100*time.Millisecond)) }()
	go func() {
		scanLines(pr, func(line string) { m.log.Debug(line, "source", "venv") })
		_, _ = io.Copy(io.Discard, pr)
	}()
	if err := m.py.Ensure(ctx, w); err != nil {
		return err
	}
	if err := m.py.Recover(ctx, w); err != nil {
		// The daemon still serves, so that the app can be installed again; the journal stays
		// for the next start.
		m.log.Error("the apps venv could not be repaired", "err", err)
	}
	if _, err := m.ensureSDK(ctx, w); err != nil {
		return err
	}
	if err := m.ensureSDKDependencies(ctx, w); err != nil {
		// Apps that use no pose or settings page still run: the daemon serves, and says what is
		// missing and how to bring it, in its log and its status.
		msg := "the robot SDK's dependencies are not all in the apps venv: apps that use them fail to import them, and installing an app that requires robot-sdk fails: " + err.Error()
		m.log.Warn(msg)
		m.mu.Lock()
		m.warnings = append(m.warnings, msg)
		m.mu.Unlock()
	}
	m.listMu.Lock()
	defer m.listMu.Unlock()
	return m.refreshLocked(ctx)
}

func (m *Manager) refreshLocked(ctx context.Context) error {
	stamp := m.py.Stamp()
	found, err := m.discover(ctx)
	if err != nil {
		return err
	}
	m.buildLocked(found, stamp)
	return nil
}

// buildLocked makes the app list from what discovery found and the install records.
func (m *Manager) buildLocked(found []discoveredApp, stamp string) {
	set := &appSet{byName: map[string]AppInfo{}, stamp: stamp, found: found}
	for _, d := range found {
		info := AppInfo{
			Name: d.Name, SourceKind: SourceInstalled, Description: d.Summary,
			Extra: AppExtra{
				Module: d.Module, Class: d.Attr, Package: d.Dist, Version: d.Version,
				CustomAppURL: m.webURL(d.Name, d.CustomAppURL), Installed: true,
			},
		}
		if rec, ok := m.records[d.Name]; ok {
			info.URL = m.sourceOf(rec)
			info.Extra.Source, info.Extra.SourceKind, info.Extra.Space = info.URL, rec.SourceKind, rec.Space
			info.Extra.Revision, info.Extra.InstalledAt = rec.Revision, new(rec.InstalledAt)
			if rec.LastUpdate != nil {
				info.Extra.LastUpdate = new(*rec.LastUpdate)
			}
		}
		set.list = append(set.list, info)
		set.byName[d.Name] = info
	}
	sort.Slice(set.list, func(i, j int) bool { return set.list[i].Name < set.list[j].Name })
	m.apps.Store(set)
	m.log.Debug("discovered apps", "count", len(set.list))
}

// installed returns the discovery, redone if site-packages changed behind the daemon's back.
func (m *Manager) installed() *appSet {
	set := m.apps.Load()
	if set.stamp == m.py.Stamp() {
		return set
	}
	select {
	case m.venvMu <- struct{}{}:
	default: // a job changes the venv and rediscovers the apps when it is done
		return set
	}
	defer func() { <-m.venvMu }()
	m.listMu.Lock()
	defer m.listMu.Unlock()
	if set = m.apps.Load(); set.stamp != m.py.Stamp() {
		if err := m.refreshLocked(context.Background()); err != nil {
			m.log.Warn("rediscovering apps", "err", err)
		}
	}
	return m.apps.Load()
}

// List returns the installed apps, sorted by name.
func (m *Manager) List() []AppInfo { return m.installed().list }

// App returns the installed app called name, or a NotFound error.
func (m *Manager) App(name string) (AppInfo, error) {
	if AppNamePattern().MatchString(name) {
		if info, ok := m.installed().byName[name]; ok {
			return info, nil
		}
	}
	return AppInfo{}, fault.NotFoundf("App '%s' is not installed", truncate(name, 100))
}

// ListAvailable returns the installed and the catalog apps of kind "" (all), "installed", "hf_space"
// or "dashboard_selection" (here the same hub catalog); "local" gives none (the daemon keeps no
// uninstalled folders). A catalog that cannot be fetched yields only installed apps, with the error.
func (m *Manager) ListAvailable(ctx context.Context, kind SourceKind) ([]AppInfo, error) {
	switch kind {
	case "", SourceInstalled, SourceHubSpace, SourceDashboardSelection:
	case SourceLocal:
		return []AppInfo{}, nil
	default:
		return nil, fault.Invalidf("source kind %q is not one of hf_space, dashboard_selection, local, installed", kind)
	}
	set := m.installed()
	var out []AppInfo
	if kind == "" || kind == SourceInstalled {
		out = append(out, set.list...)
	}
	if kind == SourceInstalled || m.catalog == nil {
		return out, nil
	}
	listed, err := m.catalog.List(ctx, false)
	for _, c := range listed {
		a := AppInfo{
			Name: c.Name, SourceKind: SourceHubSpace, Description: c.Description, URL: c.GitURL,
			Extra: AppExtra{Title: c.Title, Author: c.Author, Emoji: c.Emoji},
		}
		if _, ok := set.byName[strings.ReplaceAll(a.Name, "-", "_")]; ok {
			a.Extra.Installed = true
		}
		out = append(out, a)
	}
	return out, err
}

// RefreshCatalog makes the next ListAvailable fetch the hub's catalog afresh, not from its cache.
func (m *Manager) RefreshCatalog() { m.catalog.Invalidate() }

// Job returns a job by ID.
func (m *Manager) Job(id string) (*Job, error) {
	if j, ok := m.jobs.Get(id); ok {
		return j, nil
	}
	return nil, fault.NotFoundf("Job %s not found", truncate(id, 64))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// The port of the running app's page. Apps name the SDK's default, DefaultAppWebPort, in their
// custom_app_url (the public SDK's and our template's); two daemons on one machine running such
// apps collided on it. The daemon gives its apps a port of its own in AppWebPortEnv, which the SDK
// serves the page on in place of the default, and lists custom_app_url with it. A port other than
// the default is the app author's choice and stays.
const (
	AppWebPortEnv     = "ROBOT_APP_WEB_PORT"
	DefaultAppWebPort = 8042
)

// webURL keeps only http(s) custom_app_urls (javascript: would run in the dashboard's origin), with
// the daemon's page port in place of the default one.
func (m *Manager) webURL(app string, raw *string) *string {
	if raw == nil {
		return nil
	}
	u, err := url.Parse(*raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		m.log.Warn("ignoring the app's custom_app_url: not an http(s) URL", "app", app, "custom_app_url", truncate(RedactText(*raw), 200))
		return nil
	}
	if port := m.webPort.Load(); port != 0 && u.Port() == strconv.Itoa(DefaultAppWebPort) {
		u.Host = net.JoinHostPort(u.Hostname(), strconv.Itoa(int(port)))
		return new(u.String())
	}
	return raw
}

// SourceKind says where an app comes from (the kinds of a package's origin, and the public daemon's
// others).
type SourceKind = origin.Kind

// The source kinds.
const (
	SourceInstalled          SourceKind = "installed"           // an app installed in the apps venv
	SourceHubSpace                      = origin.HubSpace       // a space on the hub: <hub>/spaces/<user>/<app>
	SourceDashboardSelection SourceKind = "dashboard_selection" // the apps the dashboard offers: here, the hub catalog
	SourceLocal                         = origin.Local          // a directory on the robot
	// SourceGit is any other git URL. It appears only as extra.installed_from, where anchor clients
	// read free-form data: source_kind itself keeps to the anchor's four kinds.
	SourceGit = origin.Git
)

// legacyHubSpace is what installed-app records written before the anchor's names said for a hub space.
const legacyHubSpace SourceKind = "hub_space"

// AppInfo describes an app, installed or available from the catalog.
type AppInfo struct {
	Name        string     `json:"name"`
	SourceKind  SourceKind `json:"source_kind"`
	Description string     `json:"description"`
	URL         string     `json:"url"`
	Extra       AppExtra   `json:"extra"`
}

// AppExtra holds what the daemon knows about an installed app.
type AppExtra struct {
	Module       string     `json:"module,omitempty"`  // the module the daemon runs: <app>.main
	Class        string     `json:"class,omitempty"`   // the RobotApp subclass the entry point names
	Package      string     `json:"package,omitempty"` // the Python distribution that provides it
	Version      string     `json:"version,omitempty"`
	CustomAppURL *string    `json:"custom_app_url"`   // the app's web UI, when it has one
	Source       string     `json:"source,omitempty"` // the URL or path it was installed from
	SourceKind   SourceKind `json:"installed_from,omitempty"`
	Revision     string     `json:"revision,omitempty"` // the git commit installed from a hub space or git URL
	Space        string     `json:"space,omitempty"`    // the hub space's ID (<owner>/<name>), for hub_space sources
	InstalledAt  *time.Time `json:"installed_at,omitempty"`
	Installed    bool       `json:"installed"`
	// LastUpdate is the app's last update: when, to which revision, and how it ended.
	LastUpdate *UpdateRecord `json:"last_update,omitempty"`
	// Catalog entries: the space card's title and emoji, and the space's author (the dashboard's
	// app store shows them).
	Title  string `json:"title,omitempty"`
	Author string `json:"author,omitempty"`
	Emoji  string `json:"emoji,omitempty"`
}

// UpdateRecord is one update job of an installed app, as /api/apps/list and the dashboard show it.
type UpdateRecord struct {
	JobID    string     `json:"job_id"`
	Status   JobStatus  `json:"status"`             // in_progress, done or failed
	Revision string     `json:"revision,omitempty"` // the revision asked for (a push's), or installed when none was
	Error    string     `json:"error,omitempty"`    // why it failed
	Started  time.Time  `json:"started_at"`
	Finished *time.Time `json:"finished_at,omitempty"`
}

// AppState is the state of the app in the slot.
type AppState string

// The app states: starting → running → stopping → done or error.
const (
	StateStarting AppState = "starting"
	StateRunning  AppState = "running"
	StateStopping AppState = "stopping"
	StateDone     AppState = "done"
	StateError    AppState = "error"
)

// Active reports whether an app in this state holds the slot.
func (s AppState) Active() bool {
	return s == StateStarting || s == StateRunning || s == StateStopping
}

// AppStatus is the status of the current (or last) app.
type AppStatus struct {
	Info  AppInfo  `json:"info"`
	State AppState `json:"state"`
	Error *string  `json:"error"`
}
