package robotd

import (
	"time"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/robotd/appsapi"
	"github.com/robothub/robothub/robotd/daemonapi"
	"github.com/robothub/robothub/robotd/mediaapi"
	"github.com/robothub/robothub/robotd/robotapi"
)

// The daemon's boundary: what the HTTP API needs of the app lifecycle and of the robot, as small
// interfaces, so that the handlers can be tested without building venvs or running Python. Each
// route package states what it needs (appsapi.Apps, daemonapi.Apps, robotapi.Robot, mediaapi.Robot,
// daemonapi.Robot); run.go
// wires the real ones (core/apps.Manager through ManagerApps, core/robot.Robot as it is).

// Apps is the app lifecycle the API serves: what the app routes need (appsapi.Apps) and what the
// daemon's status reads (daemonapi.Apps).
type Apps interface {
	appsapi.Apps
	daemonapi.Apps
}

// Job is one install, update or remove job (appsapi.Job).
type Job = appsapi.Job

// AppOutput is one app run's output (appsapi.AppOutput).
type AppOutput = appsapi.AppOutput

// Robot is the robot the API serves: *robot.Robot, on the simulation, the motor bus emulator or
// the hardware.
type Robot interface {
	robotapi.Robot
	mediaapi.Robot
	daemonapi.Robot
}

var _ Robot = (*robot.Robot)(nil)

// ManagerApps serves an app manager through the API (what run.go does; tests that build a Server
// around a real Manager use it too).
func ManagerApps(m *apps.Manager) Apps { return managerApps{appsapi.ManagerApps(m), m} }

// managerApps is a Manager as both rooms need it: the app routes' view of it (its jobs and outputs
// as interfaces), and the Manager itself for what the daemon's status reads.
type managerApps struct {
	appsapi.Apps
	m *apps.Manager
}

func (a managerApps) SDKVersion() string           { return a.m.SDKVersion() }
func (a managerApps) Slot() apps.SlotInfo          { return a.m.Slot() }
func (a managerApps) Sessions() []apps.SessionInfo { return a.m.Sessions() }
func (a managerApps) VenvDir() string              { return a.m.VenvDir() }
func (a managerApps) StopTimeout() time.Duration   { return a.m.StopTimeout() }
func (a managerApps) Warnings() []string           { return a.m.Warnings() }
