package appsapi

import (
	"context"
	"log/slog"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/robotd/httpapi"
)

// Apps is what the app routes need of the app lifecycle (*apps.Manager, through ManagerApps):
// its jobs, the one app slot, the SDK sessions, the catalog and the startup app. The daemon's
// status reads the rest of the manager through robotd/daemonapi's own interface.
type Apps interface {
	AppJobs
	AppSlot
	AppSessions
	AppCatalog
	StartupApps
}

// AppCatalog lists the apps: installed, and in the hub's catalog, with their updates.
type AppCatalog interface {
	// List is the installed apps; ListAvailable the catalog of kind ("" or installed: the installed ones).
	List() []apps.AppInfo
	ListAvailable(ctx context.Context, kind apps.SourceKind) ([]apps.AppInfo, error)
	RefreshCatalog() // the next ListAvailable fetches the hub's catalog afresh
	CheckUpdates(ctx context.Context, force bool) (*apps.AppUpdates, error)
}

// StartupApps is the app started when the robot wakes up.
type StartupApps interface {
	StartupApp() string
	SetStartupApp(name string) error // "" clears; an app that is not installed is fault.Refused
}

// AppJobs are the background jobs that change the installed apps. Errors that refuse a request
// carry a core/fault kind (Invalid, NotFound, Refused); a job's own failure is in its status.
type AppJobs interface {
	Install(url string) (Job, error)
	Update(url, revision string) (Job, error)
	UpdateApp(name string) (Job, error)
	InstallPrivateSpaceWithToken(spaceID, token string) (Job, error)
	Remove(name string) (Job, error)
	Job(id string) (Job, error)
	// CancelJob stops a job and returns its final snapshot once it has ended; a finished job, or
	// one changing the venv, is fault.Refused.
	CancelJob(id string) (apps.JobInfo, error)
}

// Job is one install, update or remove job: its snapshot, and its log to follow.
type Job interface {
	ID() string
	Info() apps.JobInfo
	// Follow returns the log lines from index from on, the status, and a channel closed on change.
	Follow(from int) (lines []string, status apps.JobStatus, changed <-chan struct{})
}

// AppSlot is the one app slot: start, stop, restart and the current app's status and output.
type AppSlot interface {
	Start(name string) (apps.AppStatus, error)
	StartNoEvict(name string) (apps.AppStatus, error)
	Stop() (apps.AppStatus, error)
	Restart() (apps.AppStatus, error)
	Status() *apps.AppStatus
	// Output is the current (or last) run's output and status; nil, nil when there is none.
	Output() (AppOutput, *apps.AppStatus)
}

// AppOutput is one app run's output.
type AppOutput interface {
	// Follow returns the lines from number from on, the number to ask for next, whether the run
	// has ended, and a channel closed at the next change.
	Follow(from int) (lines []apps.OutputLine, next int, ended bool, changed <-chan struct{})
}

// AppSessions are the SDK clients' sessions, which share the app slot.
type AppSessions interface {
	OpenSession(req apps.SessionRequest) (apps.SessionInfo, error)
	Heartbeat(id string) (apps.SessionInfo, error)
	CloseSession(id string) error
}

// managerApps serves *apps.Manager as Apps: its jobs and outputs are concrete types, which the
// interfaces' methods return as Job and AppOutput (never a typed nil).
type managerApps struct{ *apps.Manager }

func jobOf(j *apps.Job, err error) (Job, error) {
	if err != nil {
		return nil, err
	}
	return j, nil
}

func (m managerApps) Install(url string) (Job, error) { return jobOf(m.Manager.Install(url)) }

func (m managerApps) Update(url, revision string) (Job, error) {
	return jobOf(m.Manager.Update(url, revision))
}

func (m managerApps) UpdateApp(name string) (Job, error) { return jobOf(m.Manager.UpdateApp(name)) }

func (m managerApps) InstallPrivateSpaceWithToken(spaceID, token string) (Job, error) {
	return jobOf(m.Manager.InstallPrivateSpaceWithToken(spaceID, token))
}

func (m managerApps) Remove(name string) (Job, error) { return jobOf(m.Manager.Remove(name)) }

func (m managerApps) Job(id string) (Job, error) { return jobOf(m.Manager.Job(id)) }

func (m managerApps) Output() (AppOutput, *apps.AppStatus) {
	out, st := m.Manager.Output()
	if out == nil {
		return nil, st
	}
	return out, st
}

// ManagerApps serves an app manager through the API (what run.go does; tests that build a Server
// around a real Manager use it too).
func ManagerApps(m *apps.Manager) Apps { return managerApps{m} }

var _ Apps = managerApps{}

// Handlers serves the app routes; robotd's route table names each of its methods.
type Handlers struct {
	apps     Apps
	clients  httpapi.Clients
	log      *slog.Logger
	done     <-chan struct{} // closed when the daemon shuts down: ends the streams
	hubURL   string          // the daemon's hub ("": none), for installs that name a space
	hubToken func() string   // the robot's hub login, else the daemon's own ("": none)
}

// Config holds what New needs.
type Config struct {
	Apps    Apps
	Clients httpapi.Clients // stream slots, and the client's key for its sessions
	Log     *slog.Logger
	Done    <-chan struct{}
	HubURL  string
	// HubToken is the hub token private installs use when the request brings none.
	HubToken func() string
}

// New returns the app routes.
func New(cfg Config) *Handlers {
	h := &Handlers{apps: cfg.Apps, clients: cfg.Clients, log: cfg.Log, done: cfg.Done, hubURL: cfg.HubURL, hubToken: cfg.HubToken}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.hubToken == nil {
		h.hubToken = func() string { return "" }
	}
	return h
}
