package robotd_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/robotd"
)

func TestBadRequestsGetClearErrors(t *testing.T) {
	d := startServer(t, serverOptions{})
	d.install("coop_app")

	// Unknown apps and jobs: 404, with nothing run or removed.
	d.expectError("POST", "/api/apps/start-app/nope", nil, 404, "App 'nope' is not installed")
	d.expectError("POST", "/api/apps/start-app/coop_app%3Brm%20-rf", nil, 404, "is not installed")
	d.expectError("POST", "/api/apps/start-app/..%2F..%2Fetc", nil, 404, "is not installed")
	d.expectError("POST", "/api/apps/remove/nope", nil, 404, "App 'nope' is not installed")
	d.expectError("PUT", "/api/apps/startup-app", map[string]any{"startup_app": "nope"}, 400, "App 'nope' is not installed")
	d.expectError("GET", "/api/apps/job-status/0123abcd", nil, 404, "Job 0123abcd not found")
	if st := d.status(); st != nil {
		t.Fatalf("a refused start left a status: %+v", st)
	}

	// Malformed bodies: 422 naming what is wrong.
	d.expectError("POST", "/api/apps/install", `{"url": `, 422, "body: invalid JSON")
	d.expectError("POST", "/api/apps/install", `[1, 2]`, 422, "body: expected a JSON object")
	d.expectError("POST", "/api/apps/install", `{"url": 42}`, 422, "body: field url: expected string")
	d.expectError("POST", "/api/apps/install", `{}`, 422, "body: field url is required")
	d.expectError("POST", "/api/apps/install", ``, 422, "body: a JSON object is required")
	d.expectError("POST", "/api/apps/install", map[string]string{"url": "not a url"}, 422, "url: must not contain spaces")
	d.expectError("POST", "/api/apps/install", map[string]string{"url": "/does/not/exist"}, 422, "is not a directory on the robot")
	d.expectError("PUT", "/api/apps/startup-app", `{"startup_app": 3}`, 422, "field startup_app: expected an installed app's name, or null to clear")
	d.expectError("POST", "/api/move/set_target", `{"target_antennas": [1, 2, 3]}`, 422, "target_antennas: expected 2 angles")
	d.expectError("POST", "/api/move/set_target", `{"target_head_pose": {"yaw": "left"}}`, 422, "body: pose: yaw: expected a number")
	d.expectError("POST", "/api/move/goto", `{"antennas": [0, 0]}`, 422, "body: field duration is required")
	d.expectError("POST", "/api/move/goto", `{"duration": -1}`, 422, "duration: must be more than 0")
	d.expectError("POST", "/api/move/goto", `{"duration": 1, "interpolation": "bouncy"}`, 422, `interpolation "bouncy" is not one of`)
	d.expectError("POST", "/api/motors/set_mode/turbo", nil, 422, `motor mode "turbo" is not one of`)
	d.expectError("GET", "/api/state/stream?frequency=100", nil, 422, "frequency: must be a number more than 0 and at most 50")
	d.expectError("POST", "/api/sim/antenna-touch", `{"antenna": "middle"}`, 422, "antenna: must be left or right")
	d.expectError("POST", "/api/move/stop", `{"uuid": "nope"}`, 404, "no running move with uuid nope")
	d.expectError("GET", "/api/audio/sample", nil, 400, "recording is not started")
	d.expectError("POST", "/api/audio/play_sound", map[string]string{"file": "/no/such.wav"}, 404, "sound file /no/such.wav does not exist")

	// Unknown routes and methods.
	d.expectError("GET", "/api/apps/install", nil, 405, "Method GET not allowed; use POST")
	d.expectError("GET", "/api/nothing/here", nil, 404, "Not found: /api/nothing/here")

	// Nothing bad input touched changed the installed apps or the startup app.
	if _, ok := d.list()["coop_app"]; !ok {
		t.Fatal("coop_app disappeared")
	}
	var startup struct {
		StartupApp *string `json:"startup_app"`
	}
	d.call("GET", "/api/apps/startup-app", nil, &startup)
	if startup.StartupApp != nil {
		t.Fatalf("startup app %q after refused updates", *startup.StartupApp)
	}
}

func TestCrossSiteRequestsAreRefused(t *testing.T) {
	d := startServer(t, serverOptions{})
	d.install("coop_app")
	// What a malicious page's fetch or form post carries.
	d.expectError("POST", "/api/apps/start-app/coop_app", nil, 403, "Cross-site requests are refused", "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
	d.expectError("POST", "/api/apps/start-app/coop_app", nil, 403, "Cross-site requests are refused", "Origin", "https://evil.example")
	d.expectError("PUT", "/api/apps/startup-app", map[string]any{"startup_app": "coop_app"}, 403, "Cross-site", "Sec-Fetch-Site", "same-site")
	if st := d.status(); st != nil {
		t.Fatalf("a cross-site request started %+v", st)
	}
	// DNS rebinding: a page served from a name that points at the robot.
	d.expectError("POST", "/api/apps/start-app/coop_app", nil, 421, "Host evil.example:8000 is not served", "Host", "evil.example:8000")
	// The dashboard's own requests, and non-browser clients, go through.
	if code := d.call("POST", "/api/move/play/wake_up", nil, nil, "Sec-Fetch-Site", "same-origin", "Origin", d.url); code != 200 {
		t.Fatalf("same-origin POST: %d", code)
	}
	if code := d.call("POST", "/api/move/play/wake_up", nil, nil, "Host", "localhost"); code != 200 {
		t.Fatalf("POST without browser headers: %d", code)
	}
}

func TestAPIToken(t *testing.T) {
	const token = "t0k3n-for-tests-0123456789"
	d := startServer(t, serverOptions{token: token})
	d.expectError("GET", "/api/apps/list", nil, 401, "Missing or invalid API token", "Authorization", "Bearer wrong")
	d.expectError("POST", "/api/move/play/wake_up", nil, 401, "Missing or invalid API token", "Authorization", "Bearer wrong")
	if code := d.call("GET", "/api/apps/list", nil, nil, "Authorization", "Bearer "+token); code != 200 {
		t.Fatalf("with the token: %d", code)
	}
	if code := d.call("GET", "/healthz", nil, nil); code != 200 {
		t.Fatalf("healthz needs no token: %d", code)
	}
	resp, err := d.get("/api/state/stream?frequency=20&token=" + token)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream with ?token=: %v %v", err, resp)
	}
	resp.Body.Close()
	if strings.Contains(d.log.String(), token) {
		t.Fatal("the token appears in the daemon's log")
	}
}

// End to end: robot_sdk sends ROBOT_DAEMON_TOKEN (what the owner sets, and what an app the
// daemon runs gets: a token of its own), else the token file it is pointed at.
func TestSDKSendsTheToken(t *testing.T) {
	parallel(t)
	const token = "t0k3n-for-tests-0123456789"
	d := startDaemon(t, daemonOptions{args: []string{"--api-token", token}})
	out, err := venvPython(d, "from robot_sdk import Robot\nr = Robot()\nprint(r.get_state()['backend'])\nr.close()", "ROBOT_DAEMON_TOKEN="+token)
	if err != nil || out != "sim" {
		t.Fatalf("SDK with the token: %q %v", out, err)
	}
	out, _ = venvPython(d, "from robot_sdk import Robot, RequestRefusedError\ntry:\n    Robot()\nexcept RequestRefusedError as e:\n    print(e.status, e.detail)", "ROBOT_DAEMON_TOKEN=wrong")
	if out != "401 Missing or invalid API token: the token sent is not this daemon's" {
		t.Fatalf("SDK with a wrong token: %q", out)
	}
	// The daemon's own user over TCP needs it too: no identity comes from a connection.
	out, _ = venvPython(d, "from robot_sdk import Robot, RequestRefusedError\ntry:\n    Robot()\nexcept RequestRefusedError as e:\n    print(e.status)", "ROBOT_DAEMON_TOKEN=", "ROBOT_DAEMON_TOKEN_FILE=")
	if out != "401" {
		t.Fatalf("SDK of the daemon's user without a token: %q, want 401", out)
	}
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = venvPython(d, "from robot_sdk import Robot\nr = Robot()\nprint(r.get_state()['backend'])\nr.close()", "ROBOT_DAEMON_TOKEN=", "ROBOT_DAEMON_TOKEN_FILE="+file)
	if err != nil || out != "sim" {
		t.Fatalf("SDK with the token file: %q %v", out, err)
	}
}

// The state stream at 50 Hz, on the robot's own clock (testing/synctest): one second of stream is
// 50 events, 20 ms apart, each with the state of the robot's latest control step. Latency over a
// real connection is BenchmarkStateStream50Hz's to measure; a timed window here failed under load.
func TestStateStreamAt50Hz(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rb := robot.New(robot.NewSim(), nil)
		defer rb.Close()
		h := robotd.NewServer(robotd.ServerConfig{Apps: newMemApps(rb), Robot: rb, NoAuth: true})
		ctx, cancel := context.WithCancel(context.Background())
		req := httptest.NewRequestWithContext(ctx, "GET", "/api/state/stream?frequency=50", nil)
		req.Host = "127.0.0.1:8000"
		req.RemoteAddr = "127.0.0.1:40000"
		rec := httptest.NewRecorder()
		served := make(chan struct{})
		go func() { defer close(served); h.ServeHTTP(rec, req) }()
		time.Sleep(time.Second - time.Millisecond)
		synctest.Wait()
		cancel()
		<-served

		if ct := rec.Header().Get("Content-Type"); rec.Code != 200 || ct != "text/event-stream" {
			t.Fatalf("%d %q", rec.Code, ct)
		}
		var stamps []time.Time
		for block := range strings.SplitSeq(strings.TrimSpace(rec.Body.String()), "\n\n") {
			var s robotState
			if err := json.Unmarshal([]byte(strings.TrimPrefix(block, "data: ")), &s); err != nil {
				t.Fatalf("event %q: %v", block, err)
			}
			stamps = append(stamps, s.Timestamp)
		}
		if len(stamps) != 50 {
			t.Fatalf("%d events in one second at 50 Hz, want 50", len(stamps))
		}
		for i := 1; i < len(stamps); i++ {
			if gap := stamps[i].Sub(stamps[i-1]); gap != 20*time.Millisecond {
				t.Fatalf("events %d and %d carry states %v apart, want 20ms (the robot's steps are %v)", i-1, i, gap, robot.ControlPeriod)
			}
		}
	})
}

// The SDK as a remote client: a script that is not an app the daemon started holds the slot
// while its Robot is open, and drives the robot.
func TestSDKRemoteSession(t *testing.T) {
	parallel(t)
	d := startDaemon(t, daemonOptions{args: []string{"--no-wake-up-on-start"}})
	d.install("coop_app")
	script := `
import math, sys, time
from robot_sdk import Robot, RequestRefusedError
with Robot() as r:
    print("kind", r.session_kind, flush=True)
    assert not r.is_awake()
    r.wake_up()
    assert r.is_awake(), "awake after wake_up"
    r.goto_target(head={"yaw": math.radians(-15)}, antennas=[0.3, -0.3], body_yaw=0.2, duration=0.3)
    s = r.get_state()
    print("target", round(s["target_head_pose"]["yaw"], 4), s["target_antennas_position"], s["target_body_yaw"], flush=True)
    r.set_target(head={"pitch": math.radians(5)}, antennas=[0.1, 0.1])
    s = r.get_state()
    print("antennas", s["target_antennas_position"], round(s["target_head_pose"]["pitch"], 4), flush=True)
    try:
        r.set_target(antennas=[1, 2, 3])
    except ValueError as e:
        print("rejected", e, flush=True)
    sys.stdin.readline()
    r.goto_sleep()
    print("asleep", not r.is_awake(), flush=True)
`
	cmd := pythonCommand(d, script)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 10)
	go func() {
		buf, _ := io.ReadAll(stdout)
		for _, l := range strings.Split(strings.TrimSpace(string(buf)), "\n") {
			lines <- l
		}
		close(lines)
	}()
	// The script's session is listed; it holds no app slot.
	deadline := time.Now().Add(10 * time.Second)
	for len(d.daemonStatus().Sessions) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if s := d.daemonStatus(); len(s.Sessions) != 1 || !strings.HasPrefix(s.Sessions[0].Client, "robot_sdk/") || s.Slot.State != "free" {
		t.Fatalf("status with an SDK script connected: slot %+v, sessions %+v", s.Slot, s.Sessions)
	}
	stdin.Write([]byte("\n"))
	if err := cmd.Wait(); err != nil {
		t.Fatalf("script: %v", err)
	}
	var got []string
	for l := range lines {
		got = append(got, l)
	}
	want := []string{"kind remote", "target -0.2618 [0.3, -0.3] 0.2", "antennas [0.1, 0.1] 0.0873",
		"rejected Antennas must be a list or 1D np array with two elements.", "asleep True"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("script output:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s := d.daemonStatus(); s.Slot.State != "free" {
		t.Fatalf("slot after the script closed its Robot: %+v", s.Slot)
	}
}

func TestAudioThroughTheAPI(t *testing.T) {
	d := startServer(t, serverOptions{})
	d.call("POST", "/api/audio/start_recording", nil, nil)
	tone := make([][2]float64, 1600) // 100 ms of 440 Hz on the left, silence on the right
	for i := range tone {
		tone[i][0] = 0.5 * math.Sin(2*math.Pi*440*float64(i)/16000)
	}
	var pushed map[string]any
	if code := d.call("POST", "/api/audio/push_sample", map[string]any{"samples": tone}, &pushed); code != 200 || pushed["samples"] != 1600.0 {
		t.Fatalf("push: %d %v", code, pushed)
	}
	// The simulated speaker plays into the microphone: read what it records until the tone is in it.
	var rec struct {
		SampleRate int          `json:"sample_rate"`
		Channels   int          `json:"channels"`
		Samples    [][2]float64 `json:"samples"`
	}
	toneLoud := 0
	for _, f := range tone {
		if math.Abs(f[0]) > 0.4 {
			toneLoud++
		}
	}
	recorded, loudLeft, loudRight := 0, 0, 0
	d.waitFor(5*time.Second, "the whole pushed tone in the recording", func() bool {
		d.call("GET", "/api/audio/sample", nil, &rec)
		recorded += len(rec.Samples)
		for _, f := range rec.Samples {
			if math.Abs(f[0]) > 0.4 {
				loudLeft++
			}
			if math.Abs(f[1]) > 0.4 {
				loudRight++
			}
		}
		return loudLeft >= toneLoud
	})
	if rec.SampleRate != 16000 || rec.Channels != 2 || loudLeft != toneLoud || loudRight != 0 {
		t.Fatalf("recorded %d frames of %d channels at %d Hz with %d loud on the left and %d on the right; the pushed tone (%d loud) should be on the left",
			recorded, rec.Channels, rec.SampleRate, loudLeft, loudRight, toneLoud)
	}
	d.call("POST", "/api/audio/stop_recording", nil, nil)
}

// An app with a web UI: its URL is listed, its page is served while it runs.
func TestWebUIApp(t *testing.T) {
	d := startDaemon(t, daemonOptions{})
	d.install("webui_app")
	if u := d.list()["webui_app"].Extra.CustomAppURL; u == nil || *u != webUIAppURL {
		t.Fatalf("custom_app_url %v", u)
	}
	d.call("POST", "/api/apps/start-app/webui_app", nil, nil)
	d.waitState(10*time.Second, "running")
	var body string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(webUIAppURL + "/"); err == nil {
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(data)
			break
		}
	}
	if !strings.Contains(body, "<h1>webui_app settings</h1>") {
		t.Fatalf("web UI page: %q", body)
	}
	d.call("POST", "/api/apps/stop-current-app", nil, nil)
	if _, err := http.Get(webUIAppURL + "/"); err == nil {
		t.Fatal("the web UI still answers after the app stopped")
	}
}

// An apps venv that cannot import the SDK's own dependencies (numpy, FastAPI: no system site
// packages, offline, no wheels of them): the daemon's status says so, and installing an app that
// requires robot-sdk fails naming them, instead of "completed successfully" and an app that then
// dies at import. An app that does not require the SDK still installs.
func TestInstallNeedsTheSDKsDependencies(t *testing.T) {
	parallel(t)
	d := startDaemon(t, daemonOptions{venv: filepath.Join(t.TempDir(), "apps_venv"), args: []string{"--system-site-packages=false", "--offline"}})
	var st struct {
		Warnings []string `json:"warnings"`
	}
	d.call("GET", "/api/daemon/status", nil, &st)
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "the robot SDK's dependencies are not all in the apps venv") ||
		!strings.Contains(st.Warnings[0], "numpy>=1.24,<3") || !strings.Contains(st.Warnings[0], "fastapi>=0.92") {
		t.Fatalf("status warnings %q, want the SDK's missing dependencies named", st.Warnings)
	}

	okApp, err := filepath.Abs(filepath.Join("testdata", "apps", "ok_app"))
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		JobID string `json:"job_id"`
	}
	d.call("POST", "/api/apps/install", map[string]string{"url": okApp}, &created)
	j := d.waitJob(created.JobID)
	if j.Status != "failed" || j.Error == nil || !strings.Contains(*j.Error, "ok-app requires robot-sdk, whose requirements") ||
		!strings.Contains(*j.Error, "numpy>=1.24,<3") || !strings.Contains(*j.Error, "fastapi>=0.92") {
		t.Fatalf("install of an app requiring robot-sdk: %s %v, want failed naming numpy and fastapi\n%s", j.Status, deref(j.Error), strings.Join(j.Logs, "\n"))
	}
	var listed []struct {
		Name string `json:"name"`
	}
	if d.call("GET", "/api/apps/list", nil, &listed); len(listed) != 0 {
		t.Fatalf("installed apps after the failed install: %+v", listed)
	}

	d.call("POST", "/api/apps/install", map[string]string{"url": testdataApp("coop_app")}, &created)
	if j := d.waitJob(created.JobID); j.Status != "done" {
		t.Fatalf("install of an app that does not require the SDK: %s %v\n%s", j.Status, deref(j.Error), strings.Join(j.Logs, "\n"))
	}
}
