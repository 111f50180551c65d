package robotapi_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/internal/testkit/apitest"
	"github.com/robothub/robothub/robotd/robotapi"
)

// fakeRobot is the robot as the routes see it. It records what it was asked, and refuses what the
// test sets it to refuse, as core/robot does (with a fault kind).
type fakeRobot struct {
	mu        sync.Mutex
	state     robot.State
	awake     bool
	mode      robot.MotorMode
	torque    map[string]bool
	autoYaw   bool
	targets   []robot.Target
	gotos     []string // "<duration> <interpolation>"
	refuse    error    // SetTarget and Goto answer it when set
	sleeps    []bool   // GotoSleep's disableMotors
	played    []string
	stopped   []string
	pushed    []string
	recording bool
	wobbling  bool
	tracking  float64
	trackErr  error
	seq       int
}

var _ robotapi.Robot = (*fakeRobot)(nil)

func newFakeRobot() *fakeRobot {
	return &fakeRobot{mode: robot.MotorsEnabled, torque: map[string]bool{"body_rotation": true}, awake: true,
		state: robot.State{HeadPose: robot.HeadPose{Z: 0.01, Yaw: 0.2}, Antennas: [2]float64{0.1, -0.1}, BodyYaw: 0.3, ControlMode: robot.MotorsEnabled, Backend: "sim"}}
}

func (r *fakeRobot) move(kind string) *robot.Move {
	r.seq++
	return &robot.Move{ID: fmt.Sprintf("%s-%d", kind, r.seq), Kind: kind}
}

func (r *fakeRobot) State() robot.State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

func (r *fakeRobot) Awake() bool                           { return r.awake }
func (r *fakeRobot) BackendName() string                   { return "sim" }
func (r *fakeRobot) HardwareStatus() *robot.HardwareStatus { return nil }

func (r *fakeRobot) AutomaticBodyYaw() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.autoYaw
}

func (r *fakeRobot) SetTarget(t robot.Target) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refuse != nil {
		return r.refuse
	}
	r.targets = append(r.targets, t)
	return nil
}

func (r *fakeRobot) Goto(t robot.Target, d time.Duration, interp robot.Interpolation) (*robot.Move, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refuse != nil {
		return nil, r.refuse
	}
	r.targets = append(r.targets, t)
	r.gotos = append(r.gotos, fmt.Sprintf("%s %s", d, interp))
	return r.move("goto"), nil
}

func (r *fakeRobot) WakeUp() *robot.Move {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.move("wake_up")
}

func (r *fakeRobot) GotoSleep(disableMotors bool) *robot.Move {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sleeps = append(r.sleeps, disableMotors)
	return r.move("goto_sleep")
}

func (r *fakeRobot) PlayRecorded(m *robot.RecordedMove, kind string) (*robot.Move, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.played = append(r.played, kind+" "+m.Description)
	return r.move(kind), nil
}

func (r *fakeRobot) StopMove(uuid string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if uuid != "" && !strings.HasPrefix(uuid, "goto-") {
		return fault.NotFoundf("no running move %s", uuid)
	}
	r.stopped = append(r.stopped, uuid)
	return nil
}

func (r *fakeRobot) LookAtImage(u, v float64) (robot.HeadPose, error) {
	if u < 0 || v < 0 {
		return robot.HeadPose{}, fault.Invalidf("pixel (%g, %g) is outside the image", u, v)
	}
	return robot.HeadPose{Pitch: v / 1000, Yaw: -u / 1000}, nil
}

func (r *fakeRobot) SetAutomaticBodyYaw(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.autoYaw = on
}

func (r *fakeRobot) StartMotionRecording() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recording = true
}

func (r *fakeRobot) StopMotionRecording() ([]robot.MotionFrame, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.recording {
		return nil, fault.Refusedf("no motion recording is running: start one first")
	}
	r.recording = false
	return []robot.MotionFrame{{}}, nil
}

func (r *fakeRobot) PushAntenna(index int, delta float64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pushed = append(r.pushed, fmt.Sprintf("%d %g", index, delta))
	return nil
}

func (r *fakeRobot) SetWobbling(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wobbling = on
}

func (r *fakeRobot) StartTracking(weight float64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.trackErr != nil {
		return r.trackErr
	}
	if weight < 0 || weight > 1 {
		return fault.Invalidf("weight: %g is not between 0 and 1", weight)
	}
	r.tracking = weight
	return nil
}

func (r *fakeRobot) StopTracking() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tracking = 0
}

func (r *fakeRobot) TrackedFace() robot.FaceTarget { return robot.FaceTarget{} }

func (r *fakeRobot) MotorMode() robot.MotorMode {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mode
}

func (r *fakeRobot) SetMotorMode(m robot.MotorMode) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mode = m
	return nil
}

func (r *fakeRobot) MotorTorque() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]bool{}
	for k, v := range r.torque {
		out[k] = v
	}
	return out
}

func (r *fakeRobot) SetMotorTorque(ids []string, on bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if !strings.HasPrefix(id, "stewart_") && id != "body_rotation" {
			return fault.Invalidf("ids: no motor %q", id)
		}
	}
	for _, id := range ids {
		r.torque[id] = on
	}
	return nil
}

// libraries serve one move library, the one core/robot's tests use (nod, with its sound, and
// others), as alice/moves.
type libraries struct{}

func (libraries) Library(_ context.Context, dataset string) (*robot.MoveLibrary, error) {
	if dataset != "alice/moves" {
		return nil, fault.NotFoundf("dataset %s not found on the hub", dataset)
	}
	const dir = "../../core/robot/testdata/moves"
	return robot.OpenMoveLibrary(dataset, os.DirFS(dir), dir)
}

type daemon struct {
	*apitest.Server
	robot *fakeRobot
	done  chan struct{}
}

// serve serves the robot's routes as robotd's route table does; moves may be nil (no libraries).
func serve(t *testing.T, moves robotapi.MoveLibraries) *daemon {
	t.Helper()
	d := &daemon{robot: newFakeRobot(), done: make(chan struct{})}
	h := robotapi.New(robotapi.Config{Robot: d.robot, Moves: moves, Clients: &apitest.Clients{}, Done: d.done})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/state/full", h.FullState)
	mux.HandleFunc("GET /api/state/stream", h.StateStream)
	mux.HandleFunc("POST /api/move/set_target", h.SetTarget)
	mux.HandleFunc("POST /api/move/goto", h.Goto)
	mux.HandleFunc("POST /api/move/play/wake_up", h.WakeUp)
	mux.HandleFunc("POST /api/move/play/goto_sleep", h.GotoSleep)
	mux.HandleFunc("POST /api/move/stop", h.StopMove)
	mux.HandleFunc("GET /api/move/recorded-move-datasets/list/{dataset_name...}", h.ListRecordedMoves)
	mux.HandleFunc("POST /api/move/play/recorded-move-dataset/{dataset_and_move...}", h.PlayRecordedMove)
	mux.HandleFunc("GET /api/move/recorded-move-datasets/move/{dataset_and_move...}", h.GetRecordedMove)
	mux.HandleFunc("GET /api/motors/status", h.MotorStatus)
	mux.HandleFunc("POST /api/motors/set_mode/{mode}", h.SetMotorMode)
	mux.HandleFunc("POST /api/sim/antenna-touch", h.AntennaTouch)
	mux.HandleFunc("GET /api/state/present_head_pose", h.PresentHeadPose)
	mux.HandleFunc("GET /api/state/present_body_yaw", h.PresentBodyYaw)
	mux.HandleFunc("GET /api/state/present_antenna_joint_positions", h.PresentAntennas)
	mux.HandleFunc("GET /api/move/running", h.RunningMoves)
	mux.HandleFunc("POST /api/move/look_at_world", h.LookAtWorld)
	mux.HandleFunc("POST /api/move/look_at_image", h.LookAtImage)
	mux.HandleFunc("POST /api/move/recording/start", h.StartMotionRecording)
	mux.HandleFunc("POST /api/move/recording/stop", h.StopMotionRecording)
	mux.HandleFunc("POST /api/motors/torque", h.SetTorque)
	mux.HandleFunc("POST /api/motors/automatic_body_yaw", h.AutomaticBodyYaw)
	mux.HandleFunc("POST /api/media/wobbling/enable", h.Wobbling(true))
	mux.HandleFunc("POST /api/media/wobbling/disable", h.Wobbling(false))
	mux.HandleFunc("POST /api/media/tracking/enable", h.TrackingEnable)
	mux.HandleFunc("POST /api/media/tracking/disable", h.TrackingDisable)
	mux.HandleFunc("GET /api/media/tracking/face", h.TrackedFace)
	mux.HandleFunc("GET /api/kinematics/info", h.KinematicsInfo)
	mux.HandleFunc("GET /api/kinematics/urdf", h.URDF)
	mux.HandleFunc("GET /api/kinematics/stl/{filename}", h.STL)
	d.Server = apitest.Serve(t, mux)
	return d
}
