package robotapi_test

import (
	"bufio"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/robot"
)

func TestFullStateAndPresentState(t *testing.T) {
	d := serve(t, nil)
	code, st := d.Object(t, "GET", "/api/state/full", "")
	head, _ := st["head_pose"].(map[string]any)
	if code != http.StatusOK || head["z"] != 0.01 || head["yaw"] != 0.2 || st["body_yaw"] != 0.3 || st["automatic_body_yaw"] != false {
		t.Fatalf("full state: %d %v", code, st)
	}
	_, st = d.Object(t, "GET", "/api/state/full?use_pose_matrix=true", "")
	m, _ := st["head_pose"].(map[string]any)["m"].([]any)
	if len(m) != 16 || m[11] != 0.01 || m[15] != 1.0 {
		t.Fatalf("head_pose as a matrix: %v, want 16 numbers with z at [11]", st["head_pose"])
	}
	d.Refused(t, "GET", "/api/state/full?use_pose_matrix=yes!", "", 422, "use_pose_matrix: must be true or false")

	if _, data := d.Call(t, "GET", "/api/state/present_body_yaw", ""); strings.TrimSpace(string(data)) != "0.3" {
		t.Fatalf("present_body_yaw: %s", data)
	}
	if _, data := d.Call(t, "GET", "/api/state/present_antenna_joint_positions", ""); strings.TrimSpace(string(data)) != "[0.1,-0.1]" {
		t.Fatalf("present_antenna_joint_positions: %s", data)
	}
	if _, p := d.Object(t, "GET", "/api/state/present_head_pose", ""); p["z"] != 0.01 {
		t.Fatalf("present_head_pose: %v", p)
	}
	if _, p := d.Object(t, "GET", "/api/state/present_head_pose?use_pose_matrix=true", ""); len(p["m"].([]any)) != 16 {
		t.Fatalf("present_head_pose as a matrix: %v", p)
	}
	if _, data := d.Call(t, "GET", "/api/move/running", ""); strings.TrimSpace(string(data)) != "[]" {
		t.Fatalf("running with no move: %s, want []", data)
	}
	d.robot.mu.Lock()
	d.robot.state.Move = &robot.MoveInfo{UUID: "goto-7"}
	d.robot.mu.Unlock()
	if _, data := d.Call(t, "GET", "/api/move/running", ""); strings.TrimSpace(string(data)) != `[{"uuid":"goto-7"}]` {
		t.Fatalf("running: %s", data)
	}
}

func TestSetTarget(t *testing.T) {
	d := serve(t, nil)
	code, out := d.Object(t, "POST", "/api/move/set_target", `{"target_head_pose": {"z": 0.02, "yaw": 0.1}, "target_antennas": [0.5, -0.5], "target_body_yaw": 0.4}`)
	if code != http.StatusOK || out["status"] != "ok" {
		t.Fatalf("set_target: %d %v", code, out)
	}
	got := d.robot.targets[0]
	if got.Head == nil || got.Head.Z != 0.02 || got.Head.Yaw != 0.1 || *got.Antennas != [2]float64{0.5, -0.5} || *got.BodyYaw != 0.4 {
		t.Fatalf("the robot was given %+v", got)
	}
	// A pose as a 4x4 matrix: a translation of 3 cm up.
	if code, _ := d.Object(t, "POST", "/api/move/set_target", `{"target_head_pose": {"m": [1,0,0,0, 0,1,0,0, 0,0,1,0.03, 0,0,0,1]}}`); code != http.StatusOK {
		t.Fatalf("set_target with a matrix: %d", code)
	}
	if h := d.robot.targets[1].Head; h == nil || math.Abs(h.Z-0.03) > 1e-9 || d.robot.targets[1].Antennas != nil {
		t.Fatalf("the robot was given %+v", d.robot.targets[1])
	}
	for _, c := range []struct{ body, text string }{
		{``, "body: a JSON object is required"},
		{`{"target_antennas": [0.1, 0.2, 0.3]}`, "target_antennas: expected 2 angles in radians [right, left], got 3"},
		{`{"target_head_pose": {"z": 0.01, "q": 1}}`, `body: pose: unknown pose field "q": a pose is {x, y, z, roll, pitch, yaw}`},
		{`{"target_head_pose": {"z": "up"}}`, "body: pose: z: expected a number"},
		{`{"target_head_pose": {"m": [1, 2, 3]}}`, "body: pose: m: expected 16 numbers, a 4x4 homogeneous matrix row by row"},
		{`{"target_head_pose": {"m": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1], "z": 0}}`, "body: pose: a pose has either m (a 4x4 matrix) or x, y, z, roll, pitch, yaw, not both"},
		{`{"target_head_pose": [0, 0, 0]}`, "body: pose: a pose is a JSON object"},
		{`{"target_body_yaw": "left"}`, "body: field target_body_yaw: expected float64"},
	} {
		d.Refused(t, "POST", "/api/move/set_target", c.body, 422, c.text)
	}
	if len(d.robot.targets) != 2 {
		t.Fatalf("refused requests reached the robot: %+v", d.robot.targets[2:])
	}
	d.robot.refuse = fault.Refusedf("the motors are disabled: enable them first (/api/motors/set_mode/enabled)")
	d.Refused(t, "POST", "/api/move/set_target", `{"target_body_yaw": 0}`, 400, "the motors are disabled")
}

func TestGoto(t *testing.T) {
	d := serve(t, nil)
	code, out := d.Object(t, "POST", "/api/move/goto", `{"head_pose": {"pitch": 0.1}, "antennas": [0, 0], "duration": 1.5, "interpolation": "linear"}`)
	if code != http.StatusOK || out["uuid"] != "goto-1" || out["duration"] != 1.5 {
		t.Fatalf("goto: %d %v", code, out)
	}
	if d.robot.gotos[0] != "1.5s linear" {
		t.Fatalf("the robot was asked %q", d.robot.gotos)
	}
	for _, c := range []struct{ body, text string }{
		{`{"head_pose": {"pitch": 0.1}}`, "body: field duration is required (seconds)"},
		{`{"duration": 0}`, "duration: must be more than 0 and at most 60 seconds"},
		{`{"duration": 61}`, "duration: must be more than 0 and at most 60 seconds"},
		{`{"duration": -1}`, "duration: must be more than 0 and at most 60 seconds"},
		{`{"duration": 1, "interpolation": "bouncy"}`, `interpolation "bouncy" is not one of linear, minjerk, ease_in_out, cartoon`},
		{`{"duration": 1, "antennas": [1]}`, "antennas: expected 2 angles in radians [right, left], got 1"},
	} {
		d.Refused(t, "POST", "/api/move/goto", c.body, 422, c.text)
	}
	if len(d.robot.gotos) != 1 {
		t.Fatalf("refused requests reached the robot: %q", d.robot.gotos)
	}
	d.robot.refuse = fault.Invalidf("head_pose: the head cannot reach this pose")
	d.Refused(t, "POST", "/api/move/goto", `{"head_pose": {"z": 1}, "duration": 1}`, 422, "the head cannot reach this pose")
}

func TestWakeUpSleepAndStop(t *testing.T) {
	d := serve(t, nil)
	if code, out := d.Object(t, "POST", "/api/move/play/wake_up", ""); code != http.StatusOK || out["uuid"] != "wake_up-1" {
		t.Fatalf("wake_up: %d %v", code, out)
	}
	// The daemon's own route lays the motors limp unless asked not to, as the public one does.
	d.Object(t, "POST", "/api/move/play/goto_sleep", "")
	d.Object(t, "POST", "/api/move/play/goto_sleep?disable_motors=false", "")
	d.Object(t, "POST", "/api/move/play/goto_sleep?disable_motors=true", "")
	d.Refused(t, "POST", "/api/move/play/goto_sleep?disable_motors=later", "", 422, "disable_motors: must be true or false")
	if !slices.Equal(d.robot.sleeps, []bool{true, false, true}) {
		t.Fatalf("goto_sleep's disable_motors: %v", d.robot.sleeps)
	}

	_, out := d.Object(t, "POST", "/api/move/goto", `{"duration": 2}`)
	if code, st := d.Object(t, "POST", "/api/move/stop", `{"uuid": "`+out["uuid"].(string)+`"}`); code != http.StatusOK || st["status"] != "stopped" {
		t.Fatalf("stop: %d %v", code, st)
	}
	// No body stops whatever runs, as the SDK's first versions asked.
	if code, _ := d.Object(t, "POST", "/api/move/stop", ""); code != http.StatusOK {
		t.Fatalf("stop without a body: %d", code)
	}
	d.Refused(t, "POST", "/api/move/stop", `{"uuid": "nope"}`, 404, "no running move nope")
	d.Refused(t, "POST", "/api/move/stop", `{"uuid": 5}`, 422, "body: field uuid: expected string")
}

func TestMotors(t *testing.T) {
	d := serve(t, nil)
	code, st := d.Object(t, "GET", "/api/motors/status", "")
	if v, ok := st["health"]; code != http.StatusOK || st["mode"] != "enabled" || !ok || v != nil {
		t.Fatalf("motors status: %d %v; want enabled with health null on the simulation", code, st)
	}
	if code, out := d.Object(t, "POST", "/api/motors/set_mode/gravity_compensation", ""); code != http.StatusOK || out["mode"] != "gravity_compensation" {
		t.Fatalf("set_mode: %d %v", code, out)
	}
	d.Refused(t, "POST", "/api/motors/set_mode/floppy", "", 422, `motor mode "floppy" is not one of enabled, disabled, gravity_compensation`)
	if d.robot.MotorMode() != robot.MotorsGravityCompensation {
		t.Fatalf("mode %s after a refused one", d.robot.MotorMode())
	}

	code, out := d.Object(t, "POST", "/api/motors/torque", `{"ids": ["stewart_1"], "on": false}`)
	if motors, _ := out["motors"].(map[string]any); code != http.StatusOK || motors["stewart_1"] != false || motors["body_rotation"] != true {
		t.Fatalf("torque: %d %v", code, out)
	}
	d.Refused(t, "POST", "/api/motors/torque", `{"ids": ["stewart_1"]}`, 422, "body: field on is required (true or false); ids names motors among")
	d.Refused(t, "POST", "/api/motors/torque", `{"ids": ["elbow"], "on": true}`, 422, `ids: no motor "elbow"`)
	if d.robot.MotorTorque()["stewart_1"] != false {
		t.Fatal("a refused torque request changed the torque")
	}

	if code, out := d.Object(t, "POST", "/api/motors/automatic_body_yaw", `{"enabled": true}`); code != http.StatusOK || out["automatic_body_yaw"] != true || !d.robot.AutomaticBodyYaw() {
		t.Fatalf("automatic_body_yaw: %d %v", code, out)
	}
	d.Refused(t, "POST", "/api/motors/automatic_body_yaw", `{}`, 422, "body: field enabled is required (true or false)")
	if !d.robot.AutomaticBodyYaw() {
		t.Fatal("a refused request turned automatic body yaw off")
	}
}

func TestAntennaTouch(t *testing.T) {
	d := serve(t, nil)
	if code, out := d.Object(t, "POST", "/api/sim/antenna-touch", `{"antenna": "left"}`); code != http.StatusOK || out["status"] != "pushed" {
		t.Fatalf("antenna-touch: %d %v", code, out)
	}
	d.Object(t, "POST", "/api/sim/antenna-touch", `{"antenna": "right", "delta": -0.2}`)
	d.Refused(t, "POST", "/api/sim/antenna-touch", `{"antenna": "middle"}`, 422, "antenna: must be left or right")
	if !slices.Equal(d.robot.pushed, []string{"1 0.5", "0 -0.2"}) {
		t.Fatalf("pushed %q", d.robot.pushed)
	}
}

func TestLookAt(t *testing.T) {
	d := serve(t, nil)
	code, out := d.Object(t, "POST", "/api/move/look_at_world", `{"x": 0.5, "y": 0, "z": 0}`)
	if m, _ := out["m"].([]any); code != http.StatusOK || out["uuid"] != "goto-1" || len(m) != 16 {
		t.Fatalf("look_at_world: %d %v", code, out)
	}
	if d.robot.gotos[0] != "1s minjerk" {
		t.Fatalf("the robot was asked %q, want a one-second minjerk move by default", d.robot.gotos)
	}
	// duration 0 sets the target at once; perform_movement false only computes the pose.
	if _, out := d.Object(t, "POST", "/api/move/look_at_world", `{"x": 0.5, "y": 0.1, "z": 0, "duration": 0}`); out["uuid"] != nil || len(d.robot.targets) != 2 || len(d.robot.gotos) != 1 {
		t.Fatalf("at once: %v, %d targets, %d moves", out, len(d.robot.targets), len(d.robot.gotos))
	}
	if _, out := d.Object(t, "POST", "/api/move/look_at_world", `{"x": 0.5, "y": 0.1, "z": 0, "perform_movement": false}`); out["uuid"] != nil || len(d.robot.targets) != 2 {
		t.Fatalf("without moving: %v, %d targets", out, len(d.robot.targets))
	}
	d.Refused(t, "POST", "/api/move/look_at_world", `{"x": 0.5, "y": 0}`, 422, "body: fields x, y and z are required: the point to look at, in metres")
	d.Refused(t, "POST", "/api/move/look_at_world", `{"x": 0.5, "y": 0, "z": 0, "duration": 90}`, 422, "duration: must be 0 (at once) or more, at most 60 seconds")

	code, out = d.Object(t, "POST", "/api/move/look_at_image", `{"u": 100, "v": 50, "perform_movement": false}`)
	if hp, _ := out["head_pose"].(map[string]any); code != http.StatusOK || hp["yaw"] != -0.1 || hp["pitch"] != 0.05 {
		t.Fatalf("look_at_image: %d %v", code, out)
	}
	d.Refused(t, "POST", "/api/move/look_at_image", `{"u": 100}`, 422, "body: fields u and v are required: the pixel to look at")
	d.Refused(t, "POST", "/api/move/look_at_image", `{"u": -1, "v": 0}`, 422, "pixel (-1, 0) is outside the image")
	if len(d.robot.targets) != 2 || len(d.robot.gotos) != 1 {
		t.Fatal("refused look-ats moved the robot")
	}
}

func TestMotionRecording(t *testing.T) {
	d := serve(t, nil)
	d.Refused(t, "POST", "/api/move/recording/stop", "", 400, "no motion recording is running")
	if code, out := d.Object(t, "POST", "/api/move/recording/start", ""); code != http.StatusOK || out["status"] != "recording" {
		t.Fatalf("start: %d %v", code, out)
	}
	if code, out := d.Object(t, "POST", "/api/move/recording/stop", ""); code != http.StatusOK || len(out["frames"].([]any)) != 1 {
		t.Fatalf("stop: %d %v", code, out)
	}
}

func TestWobblingAndTracking(t *testing.T) {
	d := serve(t, nil)
	if code, out := d.Object(t, "POST", "/api/media/wobbling/enable", ""); code != http.StatusOK || out["wobbling"] != "enabled" || !d.robot.wobbling {
		t.Fatalf("wobbling on: %d %v", code, out)
	}
	if _, out := d.Object(t, "POST", "/api/media/wobbling/disable", ""); out["wobbling"] != "disabled" || d.robot.wobbling {
		t.Fatalf("wobbling off: %v", out)
	}
	if code, out := d.Object(t, "POST", "/api/media/tracking/enable", ""); code != http.StatusOK || out["enabled"] != true || d.robot.tracking != 1 {
		t.Fatalf("tracking with the default weight: %d %v, weight %g", code, out, d.robot.tracking)
	}
	if code, _ := d.Object(t, "POST", "/api/media/tracking/enable", `{"weight": 0.25}`); code != http.StatusOK || d.robot.tracking != 0.25 {
		t.Fatalf("tracking weight %g", d.robot.tracking)
	}
	d.Refused(t, "POST", "/api/media/tracking/enable", `{"weight": "half"}`, 422, "body: field weight: expected float64")
	d.Refused(t, "POST", "/api/media/tracking/enable", `{"weight": 2}`, 422, "weight: 2 is not between 0 and 1")
	if d.robot.tracking != 0.25 {
		t.Fatalf("refused requests changed the weight to %g", d.robot.tracking)
	}
	if _, out := d.Object(t, "POST", "/api/media/tracking/disable", ""); out["enabled"] != false || d.robot.tracking != 0 {
		t.Fatalf("tracking off: %v", out)
	}
	d.robot.trackErr = fault.Unavailablef("the face detector is loading")
	d.Refused(t, "POST", "/api/media/tracking/enable", "", 503, "the face detector is loading")
	if _, out := d.Object(t, "GET", "/api/media/tracking/face", ""); out["detected"] != false {
		t.Fatalf("face: %v", out)
	}
}

func TestStateStream(t *testing.T) {
	d := serve(t, nil)
	for _, q := range []string{"0", "51", "fast", "NaN"} {
		d.Refused(t, "GET", "/api/state/stream?frequency="+q, "", 422, "frequency: must be a number more than 0 and at most 50")
	}
	resp, err := d.Client().Get(d.URL + "/api/state/stream?frequency=50")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	var states int
	for sc.Scan() && states < 3 {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var st robot.State
			if err := json.Unmarshal([]byte(data), &st); err != nil || st.BodyYaw != 0.3 {
				t.Fatalf("event %q: %v", data, err)
			}
			states++
		}
	}
	if states != 3 {
		t.Fatalf("%d states before the stream ended: %v", states, sc.Err())
	}
	// The daemon shutting down ends the stream.
	close(d.done)
	ended := make(chan struct{})
	go func() {
		for sc.Scan() {
		}
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream went on after the daemon shut down")
	}
}

func TestRecordedMoves(t *testing.T) {
	d := serve(t, nil)
	d.Refused(t, "GET", "/api/move/recorded-move-datasets/list/alice/moves", "", 404, "move library alice/moves: this daemon serves no move libraries")

	d = serve(t, libraries{})
	code, data := d.Call(t, "GET", "/api/move/recorded-move-datasets/list/alice/moves", "")
	var names []string
	if code != http.StatusOK || json.Unmarshal(data, &names) != nil || !slices.Contains(names, "nod") || !slices.IsSorted(names) {
		t.Fatalf("list: %d %s", code, data)
	}
	// The dataset's slash may come escaped.
	if code, _ := d.Call(t, "GET", "/api/move/recorded-move-datasets/list/alice%2Fmoves", ""); code != http.StatusOK {
		t.Fatalf("list of alice%%2Fmoves: %d", code)
	}
	d.Refused(t, "GET", "/api/move/recorded-move-datasets/list/bob/moves", "", 404, "dataset bob/moves not found on the hub")

	code, out := d.Object(t, "POST", "/api/move/play/recorded-move-dataset/alice/moves/nod", "")
	if code != http.StatusOK || out["uuid"] != "recorded_move-1" {
		t.Fatalf("play: %d %v", code, out)
	}
	if len(d.robot.played) != 1 || !strings.HasPrefix(d.robot.played[0], "recorded_move ") {
		t.Fatalf("played %q", d.robot.played)
	}
	d.Refused(t, "POST", "/api/move/play/recorded-move-dataset/alice/moves/shrug", "", 404, "move shrug not found in recorded moves library alice/moves (it has ")
	d.Refused(t, "POST", "/api/move/play/recorded-move-dataset/nod", "", 404, "name a dataset and a move: /api/move/play/recorded-move-dataset/<dataset>/<move>")
	if len(d.robot.played) != 1 {
		t.Fatalf("refused plays reached the robot: %q", d.robot.played)
	}

	code, out = d.Object(t, "GET", "/api/move/recorded-move-datasets/move/alice/moves/nod", "")
	move, _ := out["move"].(map[string]any)
	sound, _ := out["sound_path"].(string)
	if code != http.StatusOK || move["time"] == nil || !strings.HasSuffix(sound, "nod.wav") {
		t.Fatalf("get nod: %d %v", code, out)
	}
	if _, out := d.Object(t, "GET", "/api/move/recorded-move-datasets/move/alice/moves/ramp", ""); out["sound_path"] != nil {
		t.Fatalf("a move without sound: sound_path %v, want null", out["sound_path"])
	}
}

func TestKinematics(t *testing.T) {
	d := serve(t, nil)
	code, out := d.Object(t, "GET", "/api/kinematics/info", "")
	if info, _ := out["info"].(map[string]any); code != http.StatusOK || len(info["legs"].([]any)) != 6 || len(info["head_joints"].([]any)) != 7 {
		t.Fatalf("info: %d %v", code, out)
	}
	if _, out := d.Object(t, "GET", "/api/kinematics/urdf", ""); !strings.Contains(out["urdf"].(string), `<mesh filename="package://assets/head.stl"/>`) {
		t.Fatalf("urdf: %v", out)
	}
	resp, err := d.Client().Get(d.URL + "/api/kinematics/stl/head.stl")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// A binary STL of a box: 80 header bytes, the count, 12 triangles of 50 bytes.
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "model/stl" || resp.ContentLength != 80+4+12*50 {
		t.Fatalf("stl: %d %s %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), resp.ContentLength)
	}
	d.Refused(t, "GET", "/api/kinematics/stl/arm.stl", "", 404, `no mesh "arm.stl": the robot's meshes are antenna.stl, body.stl, head.stl`)
}
