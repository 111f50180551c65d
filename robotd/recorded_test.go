package robotd_test

import (
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/hubtest"

	hubclient "github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/hubemu/localhub"
	"github.com/robothub/robothub/robotd"
)

// movesHub serves a local hub whose one dataset, local/moves, is our own move library
// (core/robot/testdata/moves), as the public hub serves the dances and emotions libraries.
func movesHub(t testing.TB) *hubtest.Hub {
	t.Helper()
	dir := t.TempDir()
	src, err := filepath.Abs(filepath.Join("..", "core", "robot", "testdata", "moves"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "local"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(src, filepath.Join(dir, "local", "moves")); err != nil {
		t.Fatal(err)
	}
	return hubtest.Start(t, localhub.Config{DatasetsDir: dir})
}

// A robot plays a move of a library on the hub through the public daemon's routes: the list
// names the dataset's moves, the play answers a uuid, and the head nods 15° and comes back within
// the move's 2 s.
func TestRecordedMoveFromAHubDatasetPlaysOnTheRobot(t *testing.T) {
	parallel(t)
	hubSrv := movesHub(t)
	d := startServer(t, serverOptions{moves: robotd.NewHubMoveLibraries(newHubClient(t, hubSrv.URL), t.TempDir(), slog.New(slog.DiscardHandler))})
	d.waitRobot(10*time.Second, "awake and still", func(s robotState) bool { return s.Awake && s.Move == nil })

	var moves []string
	if code := d.call("GET", "/api/move/recorded-move-datasets/list/local/moves", nil, &moves); code != 200 {
		t.Fatalf("list: %d", code)
	}
	if want := []string{"antenna_wave", "look_around", "nod", "ramp"}; !slices.Equal(moves, want) {
		t.Fatalf("moves %v, want %v", moves, want)
	}
	var started struct {
		UUID     string  `json:"uuid"`
		Duration float64 `json:"duration"`
	}
	start := time.Now()
	if code := d.call("POST", "/api/move/play/recorded-move-dataset/local/moves/nod", nil, &started); code != 200 || started.UUID == "" {
		t.Fatalf("play: %d %+v", code, started)
	}
	if started.Duration != 2 {
		t.Fatalf("the nod lasts %v s, want its recording's 2 s", started.Duration)
	}
	peak := 0.0
	s := d.waitRobot(5*time.Second, "the nod to end", func(s robotState) bool {
		peak = math.Max(peak, s.HeadPose.Pitch)
		return s.Move == nil
	})
	took := time.Since(start)
	if peak < 14*math.Pi/180 || peak > 15.5*math.Pi/180 {
		t.Fatalf("the head pitched at most %.1f°, want the nod's 15°", peak*180/math.Pi)
	}
	if took < 2*time.Second || math.Abs(s.HeadPose.Pitch) > 0.01 {
		t.Fatalf("the nod ended after %v with the pitch at %.3f rad: want 2 s and back level", took, s.HeadPose.Pitch)
	}

	var got struct {
		Move struct {
			Description string    `json:"description"`
			Time        []float64 `json:"time"`
		} `json:"move"`
		SoundPath *string `json:"sound_path"`
	}
	if code := d.call("GET", "/api/move/recorded-move-datasets/move/local/moves/nod", nil, &got); code != 200 {
		t.Fatalf("get: %d", code)
	}
	if got.Move.Description != "Nods twice, yes yes." || len(got.Move.Time) != 101 || got.SoundPath == nil || filepath.Base(*got.SoundPath) != "nod.wav" {
		t.Fatalf("move %+v, sound %v", got.Move.Description, got.SoundPath)
	}

	d.expectError("POST", "/api/move/play/recorded-move-dataset/local/moves/moonwalk", nil, 404, "move moonwalk not found in recorded moves library local/moves")
	d.expectError("GET", "/api/move/recorded-move-datasets/list/local/nothing", nil, 404, "no such dataset")
	d.expectError("GET", "/api/move/recorded-move-datasets/list/local/bad%20name", nil, 422, "not a dataset ID")
}

// The anchor declares the dataset of its recorded-move routes as {dataset_name:path}: a name of one
// segment, one with an encoded slash, or one of three segments reaches the handler, which answers
// for the dataset (the hub has none of that name; a malformed ID), not the router's bare 404.
func TestRecordedMoveRoutesTakeAnyDatasetName(t *testing.T) {
	parallel(t)
	hubSrv := movesHub(t)
	d := startServer(t, serverOptions{moves: robotd.NewHubMoveLibraries(newHubClient(t, hubSrv.URL), t.TempDir(), slog.New(slog.DiscardHandler))})
	d.waitRobot(10*time.Second, "awake and still", func(s robotState) bool { return s.Awake && s.Move == nil })

	var moves []string
	if code := d.call("GET", "/api/move/recorded-move-datasets/list/local%2Fmoves", nil, &moves); code != 200 || !slices.Contains(moves, "nod") {
		t.Fatalf("list of local%%2Fmoves: %d %v", code, moves)
	}
	var started struct {
		UUID string `json:"uuid"`
	}
	if code := d.call("POST", "/api/move/play/recorded-move-dataset/local%2Fmoves/nod", nil, &started); code != 200 || started.UUID == "" {
		t.Fatalf("play of local%%2Fmoves/nod: %d %+v", code, started)
	}
	d.waitRobot(5*time.Second, "the nod to end", func(s robotState) bool { return s.Move == nil })

	hub := "no such dataset on the hub " + hubSrv.URL
	d.expectError("GET", "/api/move/recorded-move-datasets/list/moves", nil, 404, "move library moves: "+hub)
	d.expectError("POST", "/api/move/play/recorded-move-dataset/moves/nod", nil, 404, "move library moves: "+hub)
	d.expectError("GET", "/api/move/recorded-move-datasets/move/moves/nod", nil, 404, "move library moves: "+hub)
	d.expectError("GET", "/api/move/recorded-move-datasets/list/local/moves/extra", nil, 422, `dataset "local/moves/extra" is not a dataset ID`)
	d.expectError("POST", "/api/move/play/recorded-move-dataset/local/moves/extra/nod", nil, 422, `dataset "local/moves/extra" is not a dataset ID`)
	d.expectError("POST", "/api/move/play/recorded-move-dataset/nod", nil, 404, "name a dataset and a move")
	d.expectError("POST", "/api/move/play/recorded-move-dataset/local/moves/a%2Fb", nil, 404, "move a/b not found in recorded moves library local/moves")
}

// The daemon downloads the libraries it is told to preload at start into its data dir, and a
// daemon started later, with the hub gone, still plays them from there.
func TestMoveLibrariesArePreloadedAndServedOfflineAfterwards(t *testing.T) {
	parallel(t)
	hubSrv := movesHub(t)
	dataDir := t.TempDir()
	d := startDaemon(t, daemonOptions{dataDir: dataDir, args: []string{"--hub-url", hubSrv.URL, "--preload-moves", "local/moves"}})
	d.waitLog(10*time.Second, "move library ready")
	d.stop()
	hubSrv.Close()

	d = startDaemon(t, daemonOptions{dataDir: dataDir, args: []string{"--hub-url", hubSrv.URL, "--preload-moves", "none"}})
	var moves []string
	if code := d.call("GET", "/api/move/recorded-move-datasets/list/local/moves", nil, &moves); code != 200 || !slices.Contains(moves, "nod") {
		t.Fatalf("offline list: %d %v", code, moves)
	}
	if !strings.Contains(d.log.String(), "using the move library downloaded before") {
		t.Fatalf("the daemon did not say it used its cache:\n%s", d.log.String())
	}
	d.expectError("GET", "/api/move/recorded-move-datasets/list/local/never", nil, 503, "cannot be reached")
}

func newHubClient(t testing.TB, url string) *hubclient.Client {
	t.Helper()
	c, err := hubclient.New(url)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitLog waits until the daemon's log holds text.
func (d *daemon) waitLog(timeout time.Duration, text string) {
	d.t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(d.log.String(), text) {
		if time.Now().After(deadline) {
			d.t.Fatalf("the daemon's log never said %q:\n%s", text, d.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An app plays moves itself as the public SDK's do: RecordedMoves reads a library (through the
// daemon, which downloaded it from the hub), Robot.play_move plays a recorded move and a GotoMove.
// The robot nods by the recording's 15° and ends where the goto meant: yaw 20°, antennas ±0.5 rad.
func TestSDKPlaysRecordedAndGotoMoves(t *testing.T) {
	parallel(t)
	for _, m := range []string{"numpy", "scipy"} {
		if err := exec.Command(systemPython, "-c", "import "+m).Run(); err != nil {
			t.Fatalf("%s cannot import %s: install Debian's python3-%s (%v)", systemPython, m, m, err)
		}
	}
	hubSrv := movesHub(t)
	d := startDaemon(t, daemonOptions{args: []string{"--hub-url", hubSrv.URL, "--preload-moves", "none"}})
	d.waitRobot(10*time.Second, "awake and still", func(s robotState) bool { return s.Awake && s.Move == nil })
	path := filepath.Join(t.TempDir(), "dance.py")
	if err := os.WriteFile(path, []byte(`import numpy as np
from robot_sdk import Robot
from robot_sdk.motion.goto import GotoMove
from robot_sdk.motion.recorded_move import RecordedMoves
from robot_sdk.utils import create_head_pose
from robot_sdk.utils.interpolation import InterpolationTechnique

moves = RecordedMoves("local/moves")
print("moves", " ".join(sorted(moves.list_moves())))
nod = moves.get("nod")
print("nod", nod.description, round(nod.duration, 2), nod.sound_path.name)
try:
    moves.get("moonwalk")
except ValueError as e:
    print("missing:", e)
with Robot() as robot:
    robot.play_move(nod, initial_goto_duration=0.5)
    print("nodded", flush=True)
    head, antennas, yaw = nod.evaluate(0.5)
    assert head.shape == (4, 4) and antennas.shape == (2,)
    start = robot.get_current_head_pose()
    goto = GotoMove(start, create_head_pose(yaw=20, degrees=True), np.array([0.0, 0.0]), np.array([0.5, -0.5]),
                    0.0, None, 1.0, InterpolationTechnique.MIN_JERK)
    robot.play_move(goto)
print("done")
`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := runScript(t, d, d.venv, path)
	peak := 0.0
	waitFor(t, 60*time.Second, "the nod played", s, func() bool {
		peak = math.Max(peak, d.robot().HeadPose.Pitch)
		return s.stdout.has(regexp.MustCompile(`^nodded$`))
	})
	s.wait(t, 30*time.Second)
	out := s.stdout.String()
	for _, want := range []string{"moves antenna_wave look_around nod ramp", "nod Nods twice, yes yes. 2.0 nod.wav",
		"missing: Move moonwalk not found in recorded moves library local/moves", "done"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the script did not print %q:\n%s", want, out)
		}
	}
	// Sampled every few ms by the test: the peak is within a degree of the recording's 15°.
	if peak < 14*math.Pi/180 || peak > 15.5*math.Pi/180 {
		t.Fatalf("the head pitched at most %.1f° while the app played the nod, want 15°", peak*180/math.Pi)
	}
	st := d.robot()
	if math.Abs(st.TargetHead.Yaw-20*math.Pi/180) > 1e-3 || math.Abs(st.TargetAntennas[0]-0.5) > 1e-3 || math.Abs(st.TargetAntennas[1]+0.5) > 1e-3 {
		t.Fatalf("after the goto: yaw %.2f°, antennas %v; want 20°, [0.5 -0.5]", st.TargetHead.Yaw*180/math.Pi, st.TargetAntennas)
	}
}

// Playback timing error of a recorded move played through the daemon: the ramp turns the head at
// 10°/s, so its commanded yaw tells which moment of the recording the robot is at; the error is how
// far that moment is from the time since the play was asked (the state's daemon-side timestamp
// minus the client's clock before the request; one machine, one clock). Sampled every 2 ms over
// the 4 s move. Target: p99 ≤ 20 ms (two control periods: the target is set once a period).
func BenchmarkRecordedMovePlayback(b *testing.B) {
	hubSrv := movesHub(b)
	d := startServer(b, serverOptions{moves: robotd.NewHubMoveLibraries(newHubClient(b, hubSrv.URL), b.TempDir(), slog.New(slog.DiscardHandler))})
	d.waitRobot(10*time.Second, "awake and still", func(s robotState) bool { return s.Awake && s.Move == nil })
	var moves []string
	d.call("GET", "/api/move/recorded-move-datasets/list/local/moves", nil, &moves) // downloaded before the clock runs
	const rate = 10 * math.Pi / 180                                                 // the ramp's yaw, rad/s
	var errs []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if code := d.call("POST", "/api/move/play/recorded-move-dataset/local/moves/ramp", nil, nil); code != 200 {
			b.Fatalf("play: %d", code)
		}
		for {
			s := d.robot()
			if s.Move == nil {
				break
			}
			at := time.Duration(s.TargetHead.Yaw / rate * float64(time.Second))
			if at > 20*time.Millisecond && at < 3980*time.Millisecond { // not held at either end
				e := s.Timestamp.Sub(start) - at
				errs = append(errs, max(e, -e))
			}
			time.Sleep(2 * time.Millisecond) // the sampling period, not a wait for an event
		}
		d.waitRobot(5*time.Second, "the move to end", func(s robotState) bool { return s.Move == nil })
	}
	b.StopTimer()
	if len(errs) < 100 {
		b.Fatalf("only %d samples", len(errs))
	}
	percentiles(b, "timing-error", errs)
}
