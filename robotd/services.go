package robotd

import (
	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/robotd/appsapi"
	"github.com/robothub/robothub/robotd/mediaapi"
	"github.com/robothub/robothub/robotd/robotapi"
)

// The daemon's boundary: what the HTTP API needs of the app lifecycle and of the robot, as small
// interfaces, so that the handlers can be tested without building venvs or running Python. Each
// route package states what it needs (appsapi.Apps, robotapi.Robot, mediaapi.Robot); run.go
// wires the real ones (core/apps.Manager through ManagerApps, core/robot.Robot as it is).

// Apps is the app lifecycle the API serves (appsapi.Apps).
type Apps = appsapi.Apps

// Job is one install, update or remove job (appsapi.Job).
type Job = appsapi.Job

// AppOutput is one app run's output (appsapi.AppOutput).
type AppOutput = appsapi.AppOutput

// Robot is the robot the API serves: *robot.Robot, on the simulation, the motor bus emulator or
// the hardware.
type Robot interface {
	robotapi.Robot
	mediaapi.Robot
}

var _ Robot = (*robot.Robot)(nil)

// ManagerApps serves an app manager through the API (what run.go does; tests that build a Server
// around a real Manager use it too).
func ManagerApps(m *apps.Manager) Apps { return appsapi.ManagerApps(m) }
