package apps

import "time"

// SourceKind says where an app comes from.
type SourceKind string

// The source kinds.
const (
	SourceInstalled          SourceKind = "installed"           // an app installed in the apps venv
	SourceHubSpace           SourceKind = "hf_space"            // a space on the hub: <hub>/spaces/<user>/<app>
	SourceDashboardSelection SourceKind = "dashboard_selection" // the apps the dashboard offers: here, the hub catalog
	SourceLocal              SourceKind = "local"               // a directory on the robot
	// SourceGit is any other git URL. It appears only as extra.installed_from, where anchor clients
	// read free-form data: source_kind itself keeps to the anchor's four kinds.
	SourceGit SourceKind = "git"
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
	InstalledAt  *time.Time `json:"installed_at,omitempty"`
	Installed    bool       `json:"installed"`
	// Catalog entries: the space card's title and emoji, and the space's author (the dashboard's
	// app store shows them).
	Title  string `json:"title,omitempty"`
	Author string `json:"author,omitempty"`
	Emoji  string `json:"emoji,omitempty"`
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
