package robotd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/hardware"
	"github.com/robothub/robothub/adapters/hardware/busemu"
	"github.com/robothub/robothub/robotd/cmd/robotdaemon"
)

type motorHealth struct {
	Name           string   `json:"name"`
	State          string   `json:"state"`
	Error          *string  `json:"error"`
	HardwareErrors []string `json:"hardware_errors"`
	TorqueEnabled  *bool    `json:"torque_enabled"`
	TemperatureC   *int     `json:"temperature_c"`
}

// motorsStatus is /api/motors/status.
type motorsStatus struct {
	Mode   string          `json:"mode"`
	Motors map[string]bool `json:"motors"`
	Health []motorHealth   `json:"health"`
}

type hardwareStatus struct {
	Backend  string `json:"backend"`
	Hardware *struct {
		Port        string        `json:"port"`
		Connected   bool          `json:"connected"`
		Error       *string       `json:"error"`
		Reconnects  int           `json:"reconnects"`
		Motors      []motorHealth `json:"motors"`
		ControlLoop struct {
			Ticks       int     `json:"ticks"`
			PeriodP50Ms float64 `json:"period_p50_ms"`
		} `json:"control_loop"`
	} `json:"hardware"`
}

func (d *daemon) hardware() hardwareStatus {
	d.t.Helper()
	var s hardwareStatus
	d.call("GET", "/api/daemon/status", nil, &s)
	return s
}

func (d *daemon) motorState(name string) string {
	d.t.Helper()
	var s struct {
		Health []motorHealth `json:"health"`
	}
	d.call("GET", "/api/motors/status", nil, &s)
	for _, m := range s.Health {
		if m.Name == name {
			return m.State
		}
	}
	return ""
}

func (d *daemon) waitFor(timeout time.Duration, what string, cond func() bool) {
	d.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			d.t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type pose struct{ X, Y, Z, Roll, Pitch, Yaw float64 }

// fullState is the state with whole poses (robotState keeps what the app tests need).
type fullState struct {
	HeadPose       pose       `json:"head_pose"`
	TargetHeadPose pose       `json:"target_head_pose"`
	Antennas       [2]float64 `json:"antennas_position"`
	Awake          bool       `json:"awake"`
	Move           *struct{}  `json:"move"`
}

func (d *daemon) waitFull(timeout time.Duration, what string, cond func(fullState) bool) fullState {
	d.t.Helper()
	var s fullState
	d.waitFor(timeout, what, func() bool {
		s = fullState{}
		d.call("GET", "/api/state/full", nil, &s)
		return cond(s)
	})
	return s
}

func poseClose(p pose, want map[string]float64, tol float64) bool {
	got := map[string]float64{"x": p.X, "y": p.Y, "z": p.Z, "roll": p.Roll, "pitch": p.Pitch, "yaw": p.Yaw}
	for k, v := range got {
		if math.Abs(v-want[k]) > tol {
			return false
		}
	}
	return true
}

// The daemon on --sim=bus: the hardware path (serial port, protocol, kinematics, loop) against the
// emulated motors. It wakes, follows a goto, reports the pose the motors reached, and refuses a
// pose the head cannot take.
func TestDaemonOnTheEmulatedBus(t *testing.T) {
	parallel(t)
	d := startDaemon(t, daemonOptions{args: []string{"--sim=bus", "--no-wake-up-on-start"}})
	st := d.hardware()
	if st.Backend != "emulated-bus" || st.Hardware == nil || !st.Hardware.Connected || len(st.Hardware.Motors) != 9 {
		t.Fatalf("daemon status: %+v", st)
	}
	var s fullState
	if d.call("GET", "/api/state/full", nil, &s); s.Awake || !poseClose(s.HeadPose, map[string]float64{"z": -0.02, "pitch": 0.35}, 3e-3) {
		t.Fatalf("at start: %+v, want asleep in the sleep pose read from the motors", s)
	}
	d.call("POST", "/api/move/play/wake_up", nil, nil)
	d.waitFull(5*time.Second, "woke up", func(s fullState) bool { return s.Awake && s.Move == nil })

	goal := map[string]float64{"x": 0.005, "z": 0.01, "roll": 0.1, "pitch": -0.15, "yaw": 0.3}
	if code := d.call("POST", "/api/move/goto", map[string]any{"head_pose": goal, "body_yaw": 0.2, "duration": 0.5}, nil); code != 200 {
		t.Fatalf("goto: %d", code)
	}
	s = d.waitFull(5*time.Second, "reached the goto's pose", func(s fullState) bool {
		return s.Move == nil && poseClose(s.HeadPose, goal, 3e-3)
	})
	if !poseClose(s.TargetHeadPose, goal, 1e-9) {
		t.Errorf("target %+v, want %v", s.TargetHeadPose, goal)
	}

	d.expectError("POST", "/api/move/goto", map[string]any{"head_pose": map[string]float64{"z": 0.03, "roll": 0.6}, "duration": 1}, 422, "out of the robot's reach")
	d.expectError("POST", "/api/move/set_target", map[string]any{"target_head_pose": map[string]float64{"x": 0.03, "pitch": 0.7}}, 422, "out of the robot's reach")
	if d.call("GET", "/api/state/full", nil, &s); !poseClose(s.TargetHeadPose, goal, 1e-9) || s.Move != nil {
		t.Errorf("a refused pose moved the robot: %+v", s)
	}
	for _, m := range d.hardware().Hardware.Motors {
		if m.State != "ok" {
			t.Errorf("motor %s: %+v", m.Name, m)
		}
	}
}

// Every route that works on --sim answers the same on --sim=bus: same status, same JSON keys.
func TestEmulatedBusAnswersLikeTheSimulation(t *testing.T) {
	parallel(t)
	sim := startDaemon(t, daemonOptions{})
	bus := startDaemon(t, daemonOptions{args: []string{"--sim=bus"}})
	for _, d := range []*daemon{sim, bus} {
		d.waitRobot(5*time.Second, "woke up", func(s robotState) bool { return s.Awake })
	}
	calls := []struct {
		method, path string
		body         any
	}{
		{"GET", "/api/state/full", nil},
		{"GET", "/api/daemon/status", nil},
		{"GET", "/api/motors/status", nil},
		{"POST", "/api/move/set_target", map[string]any{"target_head_pose": map[string]float64{"pitch": 0.1}, "target_antennas": []float64{0.2, -0.2}}},
		{"POST", "/api/move/goto", map[string]any{"head_pose": map[string]float64{"yaw": 0.2}, "duration": 0.2}},
		{"POST", "/api/move/stop", nil},
		{"POST", "/api/move/stop", nil},
		{"POST", "/api/motors/set_mode/gravity_compensation", nil},
		{"POST", "/api/motors/set_mode/enabled", nil},
		{"POST", "/api/audio/start_recording", nil},
		{"POST", "/api/audio/push_sample", map[string]any{"samples": []float32{0.1, 0.2}}},
		{"GET", "/api/audio/sample", nil},
		{"POST", "/api/audio/stop_recording", nil},
		{"POST", "/api/sim/antenna-touch", map[string]any{"antenna": "left", "delta": 0.3}},
		{"GET", "/api/state/present_head_pose", nil},
		{"GET", "/api/state/present_body_yaw", nil},
		{"GET", "/api/state/present_antenna_joint_positions", nil},
		{"POST", "/api/move/look_at_world", map[string]any{"x": 0.5, "y": 0.1, "z": 0.1, "duration": 0.2}},
		{"GET", "/api/move/running", nil},
		{"POST", "/api/move/recording/start", nil},
		{"POST", "/api/move/recording/stop", nil},
		{"POST", "/api/motors/torque", map[string]any{"ids": []string{"left_antenna"}, "on": false}},
		{"GET", "/api/motors/status", nil},
		{"POST", "/api/motors/torque", map[string]any{"on": true}},
		{"POST", "/api/motors/automatic_body_yaw", map[string]any{"enabled": false}},
		{"GET", "/api/camera/specs", nil},
		{"POST", "/api/move/look_at_image", map[string]any{"u": 100, "v": 100, "duration": 0.2}},
		{"POST", "/api/move/play/goto_sleep", nil},
		{"POST", "/api/move/play/wake_up", nil},
	}
	keys := func(v any) string {
		m, ok := v.(map[string]any)
		if !ok {
			return "not an object"
		}
		var k []string
		for key := range m {
			k = append(k, key)
		}
		sort.Strings(k)
		return strings.Join(k, ",")
	}
	for _, c := range calls {
		var a, b any
		ca, cb := sim.call(c.method, c.path, c.body, &a), bus.call(c.method, c.path, c.body, &b)
		if ca != cb || keys(a) != keys(b) {
			t.Errorf("%s %s: --sim %d {%s}, --sim=bus %d {%s}", c.method, c.path, ca, keys(a), cb, keys(b))
		}
	}
}

// The daemon on a serial port, as on the robot (no --sim): a motor that goes silent and a cable
// pulled out and plugged back are reported and survived.
//
// One test at a time: beside 3 others under -parallel 4, with both cores busy, the lost port
// went unreported within the 3 s it waits.
func TestDaemonSurvivesASilentMotorAndAnUnpluggedPort(t *testing.T) {
	emu, err := busemu.Start(busemu.Options{Config: hardware.DefaultConfig(), Asleep: true, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	d := startDaemon(t, daemonOptions{args: []string{"--sim=false", "--serialport", emu.Path(), "--bus-timeout", emulatorBusTimeout}})
	d.waitRobot(5*time.Second, "woke up", func(s robotState) bool { return s.Awake })
	if st := d.hardware(); st.Backend != "hardware" || st.Hardware.Port != emu.Path() {
		t.Fatalf("status: %+v", st)
	}

	emu.SetSilent(14, true) // stewart_4
	d.waitFor(3*time.Second, "stewart_4 is reported silent", func() bool { return d.motorState("stewart_4") == "silent" })
	if code := d.call("POST", "/api/move/goto", map[string]any{"antennas": []float64{0.6, -0.6}, "duration": 0.3}, nil); code != 200 {
		t.Fatalf("goto with a silent leg: %d", code)
	}
	d.waitRobot(3*time.Second, "the antennas moved with a leg silent", func(s robotState) bool { return math.Abs(s.Antennas[0]-0.6) < 3e-3 })
	emu.SetSilent(14, false)
	d.waitFor(3*time.Second, "stewart_4 answers again", func() bool { return d.motorState("stewart_4") == "ok" })

	// A motor that shuts itself down after a hardware error is reported as it says: torque off.
	emu.RaiseHardwareError(17, 0x20) // overload, in the right antenna's shutdown mask
	var ms motorsStatus
	d.waitFor(3*time.Second, "the right antenna reports its overload and its torque off", func() bool {
		ms = motorsStatus{}
		d.call("GET", "/api/motors/status", nil, &ms)
		return !ms.Motors["right_antenna"] && d.motorState("right_antenna") == "hardware_error"
	})
	if ms.Mode != "enabled" || !ms.Motors["left_antenna"] {
		t.Errorf("motors status %+v: want the mode enabled and the other motors on", ms)
	}
	for _, h := range ms.Health {
		if h.Name == "right_antenna" && (h.TorqueEnabled == nil || *h.TorqueEnabled || len(h.HardwareErrors) != 1 || h.HardwareErrors[0] != "overload error") {
			t.Errorf("right antenna's health %+v: want its torque off and an overload error", h)
		}
	}

	emu.Unplug()
	d.waitFor(3*time.Second, "the port is reported lost", func() bool {
		h := d.hardware().Hardware
		return !h.Connected && h.Error != nil
	})
	// A move the robot cannot make now is refused, naming the port, not answered 200 and lost.
	d.expectError("POST", "/api/move/goto", map[string]any{"head_pose": map[string]float64{"yaw": 0.3}, "duration": 0.3}, 503, "the motor bus on "+emu.Path()+" is not connected")
	if err := emu.Replug(); err != nil {
		t.Fatal(err)
	}
	d.waitFor(5*time.Second, "the port is reopened", func() bool {
		h := d.hardware().Hardware
		return h.Connected && h.Reconnects == 1
	})
	goal := map[string]float64{"pitch": -0.2}
	d.call("POST", "/api/move/goto", map[string]any{"head_pose": goal, "duration": 0.3}, nil)
	d.waitFull(3*time.Second, "the head moved after the port came back", func(s fullState) bool { return poseClose(s.HeadPose, goal, 3e-3) })
}

func TestDaemonWithoutAMotorBus(t *testing.T) {
	dir := t.TempDir()
	err := robotdaemon.Run(context.Background(), []string{"robot-daemon", "--port", "0", "--data-dir", dir, "--hub-url", "none"}, os.Getenv, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "1a86:55d3") || !strings.Contains(err.Error(), "--serialport") {
		t.Fatalf("err = %v, want it to say which adapter it looked for and how to name a port", err)
	}
	err = robotdaemon.Run(context.Background(), []string{"robot-daemon", "--sim=maybe", "--data-dir", dir}, os.Getenv, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--sim=bus") {
		t.Fatalf("--sim=maybe: %v", err)
	}
}

// --hardware-config names a file without end (/dev/zero) or far too big: the built daemon refuses it
// at once, naming the file and the cap, instead of reading until the kernel kills it.
func TestHardwareConfigWithoutEndIsRefused(t *testing.T) {
	bin, err := daemonBinary()
	if err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, bytes.Repeat([]byte("# a comment line of a config that is far too big\n"), 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	// The regular file first: a daemon without the cap reads it, and fails without naming the cap,
	// before it is given a file without end.
	for _, path := range []string{big, "/dev/zero"} {
		cmd := exec.Command(bin, "--hardware-config", path, "--serialport", "/dev/null", "--port", "0",
			"--data-dir", t.TempDir(), "--hub-url", "none")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("--hardware-config %s: still running after 20 s", path)
		}
		want := "hardware config " + path + ": larger than 1024 KiB"
		if err == nil || !strings.Contains(stderr.String(), want) {
			t.Fatalf("--hardware-config %s: %v, stderr %q; want exit 1 saying %q", path, err, stderr.String(), want)
		}
	}
}

// emulatorBusTimeout is the bus slack of a daemon driving an emulator that runs in the test's own
// process: under -race on a loaded machine, that process answers later than a motor does, and the
// default 5 ms made every motor flap between silent and answering (make test beside two busy loops).
const emulatorBusTimeout = "50ms"

// A daemon setting up its motor bus answers its status at once, saying so (the anchor's state
// "starting"), instead of leaving the client in the listen queue until the bus is up; /healthz
// answers 503 naming what is being set up (other requests wait for the daemon to run). Here the
// bus's motors are silent: the setup lasts until the daemon gives up on them.
func TestStatusAnswersWhileTheMotorBusIsSetUp(t *testing.T) {
	emu, err := busemu.Start(busemu.Options{Config: hardware.DefaultConfig(), Asleep: true, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	for _, m := range hardware.DefaultConfig().Motors {
		emu.SetSilent(m.ID, true)
	}
	port := freePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	done := make(chan error, 1)
	go func() {
		done <- robotdaemon.Run(context.Background(), []string{"robot-daemon", "--serialport", emu.Path(), "--port", strconv.Itoa(port),
			"--data-dir", t.TempDir(), "--hub-url", "none", "--no-media", "--no-auth"}, os.Getenv, io.Discard, io.Discard)
	}()
	step := "setting up the motor bus on " + emu.Path()
	var statuses, refusals int
	for running := true; running; {
		select {
		case err = <-done:
			running = false
			continue
		case <-time.After(10 * time.Millisecond):
		}
		var st struct {
			State         string          `json:"state"`
			Setup         string          `json:"setup"`
			Backend       string          `json:"backend"`
			BackendStatus json.RawMessage `json:"backend_status"`
		}
		if code, body := get(t, url+"/api/daemon/status"); code == 200 {
			if json.Unmarshal(body, &st) != nil || st.State != "starting" || st.Setup != step || st.Backend != "hardware" || string(st.BackendStatus) != "null" {
				t.Fatalf("status while the bus is set up: %s", body)
			}
			statuses++
		}
		if code, body := get(t, url+"/healthz"); code == 503 {
			if !strings.Contains(string(body), "robot-daemon is starting ("+step+")") {
				t.Fatalf("/healthz while the bus is set up: %s", body)
			}
			refusals++
		}
	}
	if err == nil || !strings.Contains(err.Error(), "no motor answered on "+emu.Path()) {
		t.Fatalf("the daemon ended with %v, want no motor answered", err)
	}
	if statuses == 0 || refusals == 0 {
		t.Fatalf("while the bus was set up: %d statuses, %d refusals answered; want both", statuses, refusals)
	}
	t.Logf("%d statuses answered while the motor bus was set up", statuses)
}

// get answers a GET's status and body, checked against docs/robot-api.openapi.json; 0 when the
// daemon does not answer.
func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	checkOpenAPI(t, req, resp.StatusCode, resp.Header, body)
	return resp.StatusCode, body
}
