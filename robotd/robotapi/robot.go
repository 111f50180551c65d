// Package robotapi is the robot daemon's routes that read and move the robot: its state and state
// stream, targets and moves, look-at, motion recording, motors and torque, the speech wobble and
// head tracking, recorded moves from the move libraries, and the kinematics and 3D description.
// The handlers take the robot through the small Robot interface; robotd's routes.go lists them.
package robotapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/robotd/httpapi"
)

// RobotState is what the robot reports.
type RobotState interface {
	State() robot.State
	Awake() bool
	BackendName() string
	HardwareStatus() *robot.HardwareStatus // nil on the simulation
	AutomaticBodyYaw() bool
}

// RobotMotion moves the robot.
type RobotMotion interface {
	SetTarget(t robot.Target) error
	Goto(t robot.Target, d time.Duration, interp robot.Interpolation) (*robot.Move, error)
	WakeUp() *robot.Move
	GotoSleep(disableMotors bool) *robot.Move
	PlayRecorded(m *robot.RecordedMove, kind string) (*robot.Move, error)
	StopMove(uuid string) error
	LookAtImage(u, v float64) (robot.HeadPose, error)
	SetAutomaticBodyYaw(enabled bool)
	StartMotionRecording()
	StopMotionRecording() ([]robot.MotionFrame, error)
	PushAntenna(index int, delta float64) error
	SetWobbling(on bool)
	StartTracking(weight float64) error
	StopTracking()
	TrackedFace() robot.FaceTarget
}

// RobotMotors switches the motors.
type RobotMotors interface {
	MotorMode() robot.MotorMode
	SetMotorMode(mode robot.MotorMode) error
	MotorTorque() map[string]bool
	SetMotorTorque(ids []string, on bool) error
}

// MoveLibraries finds move libraries (datasets on the hub) by their dataset ID, owner/name.
type MoveLibraries interface {
	Library(ctx context.Context, dataset string) (*robot.MoveLibrary, error)
}

// Robot is what these routes need of the robot (*robot.Robot in the daemon).
type Robot interface {
	RobotState
	RobotMotion
	RobotMotors
}

// Handlers serves the robot's routes; robotd's route table names each of its methods.
type Handlers struct {
	robot   Robot
	moves   MoveLibraries
	clients httpapi.Clients
	log     *slog.Logger
	done    <-chan struct{} // closed when the daemon shuts down: ends the streams
}

// Config holds what New needs.
type Config struct {
	Robot Robot
	// Moves finds the recorded moves' libraries (nil: none, every library is not found).
	Moves   MoveLibraries
	Clients httpapi.Clients // stream slots for the state stream
	Log     *slog.Logger
	Done    <-chan struct{}
}

// New returns the robot's routes.
func New(cfg Config) *Handlers {
	h := &Handlers{robot: cfg.Robot, moves: cfg.Moves, clients: cfg.Clients, log: cfg.Log, done: cfg.Done}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h
}
