// Package daemonapi is the robot daemon's own routes, in the public daemon's shapes: its status,
// starting and stopping the robot's control (the HTTP server keeps serving), the robot's display
// name, its hardware id and the app lock (/api/daemon/...), and the robot's hub login with a token
// (/api/hf-auth/...: the token the dashboard's private installs use). robotd's routes.go lists the
// handlers; access/scope.go gives them their scopes.
package daemonapi

import (
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/robot"
)

// Apps is what the daemon's status reads of the app lifecycle (*apps.Manager in the daemon).
type Apps interface {
	StartupApp() string
	SDKVersion() string
	Slot() apps.SlotInfo
	Sessions() []apps.SessionInfo
	VenvDir() string
	StopTimeout() time.Duration
	Warnings() []string // state that could not be read at start
}

// Robot is what the daemon's routes need of the robot (*robot.Robot in the daemon): what its
// status reports, and the control that start, stop and restart turn on and off.
type Robot interface {
	MotorMode() robot.MotorMode
	SetMotorMode(mode robot.MotorMode) error
	HardwareStatus() *robot.HardwareStatus // nil on the simulation
	BackendName() string
	Awake() bool
	WakeUp() *robot.Move
	GotoSleep(disableMotors bool) *robot.Move
}

// Config holds what New needs.
type Config struct {
	Apps  Apps
	Robot Robot
	Log   *slog.Logger
	// What the status reports: the daemon's version, whether it runs as on the Wireless robot, on
	// loopback only, on the simulation, and since when.
	Version      string
	Wireless     bool
	LoopbackOnly bool
	Sim          bool
	Started      time.Time
	// DataDir keeps the robot's name and the hub token it was logged in with ("": not kept).
	DataDir string
	// HubURL is the hub the robot logs in to ("": none).
	HubURL string
}

// Handlers serves the daemon's and the hub login's routes.
type Handlers struct {
	apps         Apps
	robot        Robot
	log          *slog.Logger
	version      string
	wireless     bool
	loopbackOnly bool
	sim          bool
	started      time.Time
	dataDir      string // "": nothing is kept across restarts
	hubURL       string // "": no hub (--hub-url none)

	mu      sync.Mutex
	stopped bool // the robot's control is stopped (/api/daemon/stop)
}

// New returns the daemon's routes.
func New(cfg Config) *Handlers {
	h := &Handlers{apps: cfg.Apps, robot: cfg.Robot, log: cfg.Log, version: cfg.Version, wireless: cfg.Wireless,
		loopbackOnly: cfg.LoopbackOnly, sim: cfg.Sim, started: cfg.Started, dataDir: cfg.DataDir, hubURL: cfg.HubURL}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.started.IsZero() {
		h.started = time.Now()
	}
	return h
}

// file is where a kept value lives in the data dir; "" when there is none.
func file(dataDir, name string) string {
	if dataDir == "" {
		return ""
	}
	return filepath.Join(dataDir, name)
}
