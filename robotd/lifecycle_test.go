package robotd_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/core/robot"
)

// Spec state table, rows 1 and 2: a start request with the slot free runs the app with a
// connected Robot; a stop request sends SIGINT, the app exits gracefully, the robot returns to
// its default position.
func TestStartThenStopApp(t *testing.T) {
	d := startDaemon(t, daemonOptions{})
	d.install("coop_app")
	d.waitRobot(5*time.Second, "woke up", func(s robotState) bool { return s.Awake })

	var st appStatus
	if code := d.call("POST", "/api/apps/start-app/coop_app", nil, &st); code != 200 || st.Info.Name != "coop_app" || st.State != "starting" {
		t.Fatalf("start-app: %d %+v", code, st)
	}
	d.waitState(10*time.Second, "running")
	if s := d.daemonStatus(); s.Slot.State != "local_app" || s.Slot.Holder != "coop_app" {
		t.Fatalf("slot while the app runs: %+v", s.Slot)
	}
	// The app drives the robot through the SDK: head yaw 10°, antennas waving.
	d.waitRobot(5*time.Second, "followed the app", func(s robotState) bool {
		return math.Abs(s.TargetHead.Yaw-10*math.Pi/180) < 1e-6 && math.Abs(s.TargetAntennas[0]) > 0.05
	})

	start := time.Now()
	if state, errText := d.stopApp(); state != "done" || errText != "" {
		t.Fatalf("stop-current-app: the app ended %s %q, want done", state, errText)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("stopping a cooperative app took %v", took)
	}
	if !strings.Contains(d.log.String(), "coop_app stopping") {
		t.Error("the app did not run its graceful exit path (no 'coop_app stopping' in its output)")
	}
	if st := d.status(); st != nil {
		t.Fatalf("current-app-status after stop: %+v, want null as the anchor daemon answers", st)
	}
	if s := d.daemonStatus(); s.Slot.State != "free" {
		t.Fatalf("slot after stop: %+v", s.Slot)
	}
	// The default pose is the public robot's init pose: antennas at ±0.1745 rad (robot.DefaultPose).
	d.waitRobot(3*time.Second, "returned to its default pose", func(s robotState) bool {
		return s.Move == nil && s.TargetAntennas == robot.DefaultPose.Antennas && s.TargetHead.Yaw == 0 && s.Awake
	})
	d.expectError("POST", "/api/apps/stop-current-app", nil, 400, "No app is currently running")
}

// Spec state table, row 3: a start request while an app runs is refused, and the running app
// keeps running. 100 concurrent start requests start exactly one app. They go through the
// owner's socket: over TCP, loopback is one address, which may hold 64 connections at once.
func TestConcurrentStartsRunExactlyOneApp(t *testing.T) {
	d := startDaemon(t, daemonOptions{})
	d.install("coop_app", "webui_app")
	owner := ownerSocketClient(filepath.Join(d.dataDir, "daemon.sock"))

	const n = 100
	codes := make([]int, n)
	details := make([]string, n)
	var wg sync.WaitGroup
	startLine := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-startLine
			var body struct {
				Detail string `json:"detail"`
				State  string `json:"state"`
			}
			name := []string{"coop_app", "webui_app"}[i%2]
			resp, err := owner.Post("http://localhost/api/apps/start-app/"+name, "application/json", nil)
			if err != nil {
				details[i] = err.Error()
				return
			}
			defer resp.Body.Close()
			_ = json.NewDecoder(resp.Body).Decode(&body)
			codes[i], details[i] = resp.StatusCode, body.Detail
		}()
	}
	close(startLine)
	wg.Wait()
	started := 0
	for i, code := range codes {
		switch {
		case code == 200:
			started++
		case code == 400 && strings.HasPrefix(details[i], "An app is already running: "):
		default:
			t.Errorf("request %d: %d %q", i, code, details[i])
		}
	}
	if started != 1 {
		t.Fatalf("%d start requests succeeded, want exactly 1", started)
	}
	running := d.waitState(10*time.Second, "running")
	if pids := groupPIDs(d.runningPID()); len(pids) != 1 {
		t.Fatalf("the app's process group has %d processes: %v", len(pids), pids)
	}
	if n := d.countAppProcesses(); n != 1 {
		t.Fatalf("%d app processes run, want 1", n)
	}

	other := map[string]string{"coop_app": "webui_app", "webui_app": "coop_app"}[running.Info.Name]
	d.expectError("POST", "/api/apps/start-app/"+other, nil, 400, "An app is already running")
	if st := d.status(); st.State != "running" || st.Info.Name != running.Info.Name {
		t.Fatalf("a refused start changed the running app: %+v", st)
	}
	d.call("POST", "/api/apps/stop-current-app", nil, nil)
}

// countAppProcesses counts the processes running a test app module with d's venv: those of its
// apps, not of other tests' daemons.
func (d *daemon) countAppProcesses() int {
	python := filepath.Join(d.venv, "bin", "python") + " "
	n := 0
	for _, pid := range allPIDs() {
		cmdline := readCmdline(pid)
		if strings.HasPrefix(cmdline, python) && (strings.Contains(cmdline, "-m coop_app.main") || strings.Contains(cmdline, "-m webui_app.main")) {
			n++
		}
	}
	return n
}

// Spec state table, row 4: an antenna touch on an asleep robot with a free slot wakes it and
// starts the startup app; it never replaces a running app.
func TestAntennaTouchWakesRobotAndStartsStartupApp(t *testing.T) {
	d := startDaemon(t, daemonOptions{args: []string{"--startup-app", "coop_app", "--no-wake-up-on-start"}})
	d.install("coop_app", "webui_app")
	d.waitTouchDetectorArmed()
	if s := d.robot(); s.Awake || s.ControlMode != "disabled" {
		t.Fatalf("with --no-wake-up-on-start the robot is awake=%v motors=%s", s.Awake, s.ControlMode)
	}
	if st := d.status(); st != nil {
		t.Fatalf("an app started without a touch: %+v", st)
	}

	// A running app holds the slot: the touch neither wakes the robot nor starts the startup app.
	if code := d.call("POST", "/api/apps/start-app/webui_app", nil, nil); code != 200 {
		t.Fatalf("start webui_app: %d", code)
	}
	d.waitState(10*time.Second, "running")
	// Asleep, the antennas rest folded at ±3.05 rad, near their ±π limits: a touch pushes them
	// inwards (left down, right up), or the push is clamped to nothing.
	d.call("POST", "/api/sim/antenna-touch", map[string]any{"antenna": "left", "delta": -0.6}, nil)
	d.waitFor(5*time.Second, "the touch, refused for the busy slot", func() bool {
		return strings.Contains(d.log.String(), "antenna touch: the slot is busy")
	})
	if st, s := d.status(), d.robot(); st == nil || st.Info.Name != "webui_app" || s.Awake {
		t.Fatalf("a touch while an app runs: current app %+v, awake=%v; want webui_app still, asleep", st, s.Awake)
	}
	d.stopApp()
	// Put the antenna back by hand, then touch the other one: each antenna arms on its own, so the
	// touch counts whether or not the loop has seen the left back at rest yet.
	rest := d.robot().Antennas[1] + 0.6
	d.call("POST", "/api/sim/antenna-touch", map[string]any{"antenna": "left", "delta": 0.6}, nil)
	d.waitRobot(5*time.Second, "the left antenna back at rest", func(s robotState) bool { return math.Abs(s.Antennas[1]-rest) < 1e-9 })
	d.call("POST", "/api/sim/antenna-touch", map[string]any{"antenna": "right", "delta": 0.5}, nil)

	st := d.waitState(10*time.Second, "running")
	if st.Info.Name != "coop_app" {
		t.Fatalf("the touch started %s, want the startup app coop_app", st.Info.Name)
	}
	if s := d.robot(); !s.Awake {
		t.Fatal("the startup app runs but the robot is not awake")
	}

	d.call("POST", "/api/apps/stop-current-app", nil, nil)
}

// waitTouchDetectorArmed waits until the robot's touch detector has settled on the resting
// antennas: core/robot arms it once no target has been commanded for its settle time (500 ms),
// and with --no-wake-up-on-start the last one is the daemon's start. The robot's clock (the
// state's timestamp, one loop step old at most) says when that time has passed.
func (d *daemon) waitTouchDetectorArmed() {
	d.t.Helper()
	var status struct {
		StartedAt time.Time `json:"started_at"`
	}
	d.call("GET", "/api/daemon/status", nil, &status)
	const touchSettle, loopStep = 500 * time.Millisecond, 20 * time.Millisecond
	d.waitRobot(10*time.Second, "the touch detector armed", func(s robotState) bool {
		return s.Timestamp.Sub(status.StartedAt) > touchSettle+2*loopStep
	})
}

// With --startup-app and no --no-wake-up-on-start, the app starts once the robot has woken up.
func TestStartupAppStartsAfterWakeUp(t *testing.T) {
	dataDir := t.TempDir()
	d := startDaemon(t, daemonOptions{dataDir: dataDir})
	d.install("webui_app")
	d.stop()

	d = startDaemon(t, daemonOptions{dataDir: dataDir, args: []string{"--startup-app", "webui_app"}})
	st := d.waitState(10*time.Second, "starting", "running")
	if st.Info.Name != "webui_app" {
		t.Fatalf("started %s", st.Info.Name)
	}
	if s := d.robot(); !s.Awake {
		t.Fatal("the startup app started before the robot woke up")
	}
	d.call("POST", "/api/apps/stop-current-app", nil, nil)
}

// A crashed app reports error with its exit code and last stderr lines, and frees the slot.
func TestCrashedAppFreesTheSlot(t *testing.T) {
	parallel(t)
	d := startDaemon(t, daemonOptions{})
	d.install("crash_app", "coop_app")
	if code := d.call("POST", "/api/apps/start-app/crash_app", nil, nil); code != 200 {
		t.Fatalf("start crash_app: %d", code)
	}
	st := d.waitState(10*time.Second, "error")
	if st.Error == nil || !strings.Contains(*st.Error, "App exited with code 1") ||
		!strings.Contains(*st.Error, "RuntimeError: crash_app cannot start: calibration file missing") {
		t.Fatalf("error status: %+v", st.Error)
	}
	if s := d.daemonStatus(); s.Slot.State != "free" {
		t.Fatalf("slot after a crash: %+v", s.Slot)
	}
	// No stop needed: another app starts right away.
	if code := d.call("POST", "/api/apps/start-app/coop_app", nil, nil); code != 200 {
		t.Fatalf("start after a crash: %d", code)
	}
	d.waitState(10*time.Second, "running")
	d.call("POST", "/api/apps/stop-current-app", nil, nil)
}

// Stopping a crashed app acknowledges the crash, as the anchor's stop does (it accepts an app in
// error): 200 null, the error is logged and cleared, and current-app-status answers null.
func TestStoppingACrashedAppClearsItsError(t *testing.T) {
	parallel(t)
	d := startDaemon(t, daemonOptions{})
	d.install("crash_app")
	if code := d.call("POST", "/api/apps/start-app/crash_app", nil, nil); code != 200 {
		t.Fatalf("start crash_app: %d", code)
	}
	d.waitState(10*time.Second, "error")
	state, errText := d.stopApp()
	if state != "error" || !strings.Contains(errText, "calibration file missing") {
		t.Fatalf("stop of a crashed app logged %s %q, want error with its cause", state, errText)
	}
	if st := d.status(); st != nil {
		t.Fatalf("current-app-status after stopping a crashed app: %+v, want null", st)
	}
	d.expectError("POST", "/api/apps/stop-current-app", nil, 400, "No app is currently running")
}

// An app that ignores SIGINT, and the child it spawned, are killed after the stop timeout.
func TestStubbornAppAndChildKilledAfterStopTimeout(t *testing.T) {
	d := startDaemon(t, daemonOptions{})
	d.install("stubborn_app")
	d.call("POST", "/api/apps/start-app/stubborn_app", nil, nil)
	d.waitState(10*time.Second, "running")
	pgid := d.runningPID()
	var pids []int
	deadline := time.Now().Add(10 * time.Second)
	for len(pids) < 2 && time.Now().Before(deadline) {
		pids = groupPIDs(pgid)
		time.Sleep(20 * time.Millisecond)
	}
	if len(pids) < 2 {
		t.Fatalf("stubborn_app did not spawn its child: group %v", pids)
	}

	start := time.Now()
	state, errText := d.stopApp()
	took := time.Since(start)
	if took < time.Second || took > 3*time.Second {
		t.Errorf("stop took %v with a 1s stop timeout", took)
	}
	if state != "error" || !strings.Contains(errText, "did not exit within 1s of SIGINT") {
		t.Fatalf("how a forced stop ended: %s %q", state, errText)
	}
	for _, pid := range pids {
		if processAlive(pid) {
			t.Errorf("process %d of the app's group survived the stop", pid)
		}
	}
}

// A cooperative app that leaves a child behind: the child is killed with the group.
func TestChildOfCooperativeAppIsKilled(t *testing.T) {
	d := startDaemon(t, daemonOptions{})
	d.install("parent_app")
	d.call("POST", "/api/apps/start-app/parent_app", nil, nil)
	d.waitState(10*time.Second, "running")
	pgid := d.runningPID()
	var pids []int
	for deadline := time.Now().Add(10 * time.Second); len(pids) < 2 && time.Now().Before(deadline); {
		pids = groupPIDs(pgid)
		time.Sleep(20 * time.Millisecond)
	}
	if len(pids) < 2 {
		t.Fatalf("parent_app did not spawn its child: %v", pids)
	}
	start := time.Now()
	if state, _ := d.stopApp(); state != "done" || time.Since(start) > 900*time.Millisecond {
		t.Fatalf("parent_app stop: %s after %v (it exits on SIGINT)", state, time.Since(start))
	}
	// The stop killed the group; the kernel takes a moment to end a killed process.
	d.waitFor(5*time.Second, "the app and its child gone", func() bool {
		return !slices.ContainsFunc(pids, processAlive)
	})
}

// A broken package fails its install job with pip's log, and the installed version still starts.
func TestBrokenInstallKeepsWorkingVersion(t *testing.T) {
	parallel(t)
	d := startDaemon(t, daemonOptions{})
	d.install("coop_app")
	var created struct {
		JobID string `json:"job_id"`
	}
	d.call("POST", "/api/apps/install", map[string]string{"url": testdataApp("coop_app_broken")}, &created)
	j := d.waitJob(created.JobID)
	if j.Status != "failed" || j.Error == nil || !strings.Contains(*j.Error, "building the package failed") {
		t.Fatalf("broken install: %s %v", j.Status, j.Error)
	}
	logs := strings.Join(j.Logs, "\n")
	if !strings.Contains(logs, "pip") && !strings.Contains(strings.ToLower(logs), "error") {
		t.Fatalf("the job log lacks pip's output:\n%s", logs)
	}
	if v := d.list()["coop_app"].Extra.Version; v != "1.0.0" {
		t.Fatalf("coop_app version after the failed upgrade: %q", v)
	}
	d.call("POST", "/api/apps/start-app/coop_app", nil, nil)
	if st := d.waitState(10*time.Second, "running"); st.Info.Extra.Version != "1.0.0" {
		t.Fatalf("running %+v", st.Info)
	}
	d.call("POST", "/api/apps/stop-current-app", nil, nil)
}

// The job log stream sends the log lines then the final status.
func TestJobLogStream(t *testing.T) {
	parallel(t)
	d := startDaemon(t, daemonOptions{})
	var created struct {
		JobID string `json:"job_id"`
	}
	d.call("POST", "/api/apps/install", map[string]string{"url": testdataApp("not_an_app")}, &created)
	resp, err := d.get("/api/apps/job-log/" + created.JobID)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := readEvents(t, resp, 0, 30*time.Second)
	last := events[len(events)-1]
	if last.event != "status" || !strings.Contains(last.data, `"status":"failed"`) || !strings.Contains(last.data, "declares no entry point in group robot_apps") {
		t.Fatalf("last event %+v", last)
	}
	if events[0].event != "log" || !strings.HasPrefix(events[0].data, "Installing from ") {
		t.Fatalf("first event %+v", events[0])
	}
	d.expectError("GET", "/api/apps/job-log/doesnotexist", nil, 404, "Job doesnotexist not found")
}

// holdScript attaches to a process with ptrace and never waits for it: until the tracer exits,
// the process is not reaped, even after SIGKILL (as a process stuck in the kernel would not be).
const holdScript = `
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(0x4206, int(sys.argv[1]), None, None) != 0:  # PTRACE_SEIZE
    print("ptrace refused, errno", ctypes.get_errno(), flush=True)
    sys.exit(3)
print("attached", flush=True)
time.sleep(60)
`

// An app that outlives SIGKILL: the stop answers 503 naming the app and its PID instead of hanging,
// the slot stays taken while the process lives, and frees itself once it is reaped.
func TestStopOfAnAppStuckAfterSIGKILL(t *testing.T) {
	parallel(t)
	d := startDaemon(t, daemonOptions{})
	d.install("stubborn_app", "coop_app")
	d.call("POST", "/api/apps/start-app/stubborn_app", nil, nil)
	d.waitState(10*time.Second, "running")
	pid := d.runningPID()

	tracer := exec.Command("python3", "-c", holdScript, strconv.Itoa(pid))
	out, err := tracer.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tracer.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tracer.Process.Kill(); _ = tracer.Wait() }()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "attached" {
		t.Skipf("cannot hold the app with ptrace here: %q", line)
	}

	start := time.Now()
	var body struct{ Detail string }
	code := d.call("POST", "/api/apps/stop-current-app", nil, &body)
	took := time.Since(start)
	want := fmt.Sprintf("App stubborn_app (PID %d) has not exited 5s after SIGKILL", pid)
	if code != http.StatusServiceUnavailable || !strings.Contains(body.Detail, want) {
		t.Fatalf("stop of an app held after SIGKILL: %d %q, want 503 with %q", code, body.Detail, want)
	}
	if took > 10*time.Second {
		t.Errorf("the stop answered after %v (stop timeout 1s, then 5s after SIGKILL)", took)
	}
	d.expectError("POST", "/api/apps/start-app/coop_app", nil, http.StatusBadRequest, "An app is already running")

	_ = tracer.Process.Kill() // the kernel reaps the app now
	_ = tracer.Wait()
	d.waitState(10*time.Second, "error")
	if code := d.call("POST", "/api/apps/start-app/coop_app", nil, nil); code != http.StatusOK {
		t.Fatalf("start after the stuck app was reaped: %d", code)
	}
	d.waitState(10*time.Second, "running")
}
