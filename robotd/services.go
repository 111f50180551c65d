package robotd

import (
	"context"
	"time"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/robotd/mediaapi"
	"github.com/robothub/robothub/robotd/robotapi"
)

// The daemon's boundary: what the HTTP API needs of the app lifecycle and of the robot, as small
// interfaces, so that the handlers can be tested without building venvs or running Python. run.go
// wires the real ones (core/apps.Manager through managerApps, core/robot.Robot as it is).

// Apps is the app lifecycle the API serves.
type Apps interface {
	AppJobs
	AppSlot
	AppSessions
	// List is the installed apps; ListAvailable the catalog of kind ("" or installed: the installed ones).
	List() []apps.AppInfo
	ListAvailable(ctx context.Context, kind apps.SourceKind) ([]apps.AppInfo, error)
	RefreshCatalog() // the next ListAvailable fetches the hub's catalog afresh
	CheckUpdates(ctx context.Context, force bool) (*apps.AppUpdates, error)
	StartupApp() string
	SetStartupApp(name string) error // "" clears; an app that is not installed is fault.Refused
	// What the daemon's status reports.
	SDKVersion() string
	Warnings() []string // state that could not be read at start
	VenvDir() string
	StopTimeout() time.Duration
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
	Slot() apps.SlotInfo
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
	Sessions() []apps.SessionInfo
}

// Robot is the robot the API serves: *robot.Robot, on the simulation, the motor bus emulator or
// the hardware.
type Robot interface {
	robotapi.Robot
	mediaapi.Robot
}

var _ Robot = (*robot.Robot)(nil)

// managerApps serves *apps.Manager as Apps: its jobs and outputs are concrete types, which the
// interfaces' methods return as Job and AppOutput (never a typed nil).
type managerApps struct{ *apps.Manager }

var _ Apps = managerApps{}

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
