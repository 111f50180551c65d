package robotd_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Our own programs written as programs for the anchor SDK are (the same calls as its examples and
// app template, in code of our own): they run in CI, where the anchor's files are not at hand.

func writeScript(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A 100 Hz loop of numpy-computed poses and antennas until Ctrl-C, as minimal_demo.py.
const nodScript = `
import time
import numpy as np
from robot_sdk import Robot
from robot_sdk.utils import create_head_pose

with Robot(media_backend="no_media") as robot:
    robot.goto_target(create_head_pose(), antennas=[0.0, 0.0], duration=0.5)
    print("nodding", flush=True)
    try:
        while True:
            phase = 2 * np.pi * 0.5 * time.time()
            pose = create_head_pose(pitch=np.deg2rad(8) * np.sin(phase), degrees=False)
            robot.set_target(head=pose, antennas=np.deg2rad([15, 15]) * np.sin(phase))
            time.sleep(0.01)
    except KeyboardInterrupt:
        pass
`

func TestNodScript(t *testing.T) {
	t.Parallel() // its own daemon; the script only reads the venv
	d := systemSiteDaemon(t)
	s := runScript(t, d, d.venv, writeScript(t, "nod.py", nodScript))
	// The goto from the default pose moves the targets too: the loop's motion is what comes after
	// it, and Ctrl-C inside the goto would end the script outside its try.
	waitFor(t, 20*time.Second, "the loop", s, func() bool { return s.stdout.has(regexp.MustCompile(`^nodding$`)) })
	waitFor(t, 20*time.Second, "motion", s, targetsVary(d))
	s.interrupt(t)
}

// Every interpolation name, numpy antennas, positional goto_target arguments, as
// goto_interpolation_playground.py.
const interpolationsScript = `
import numpy as np
from robot_sdk import Robot
from robot_sdk.utils import create_head_pose
from robot_sdk.utils.interpolation import InterpolationTechnique

with Robot(media_backend="no_media") as robot:
    for method in InterpolationTechnique:
        print("method", method.value, flush=True)
        robot.goto_target(create_head_pose(y=0.01, roll=4, yaw=-8), np.deg2rad([-15, 15]), 0.3, method)
        state = robot.get_state()
        print("yaw", round(np.rad2deg(state["target_head_pose"]["yaw"]), 3), "body", state["target_body_yaw"], flush=True)
        robot.goto_target(create_head_pose(), antennas=[0, 0], duration=0.3, method=method.value)
`

func TestInterpolationsScript(t *testing.T) {
	t.Parallel() // its own daemon; the script only reads the venv
	d := systemSiteDaemon(t)
	s := runScript(t, d, d.venv, writeScript(t, "interpolations.py", interpolationsScript))
	s.wait(t, 60*time.Second)
	out := s.stdout.String()
	for _, m := range []string{"linear", "minjerk", "ease_in_out", "cartoon"} {
		if !strings.Contains(out, "method "+m) {
			t.Errorf("no move with %s:\n%s", m, out)
		}
	}
	// create_head_pose takes degrees by default, and goto_target's third argument is the duration.
	if len(regexp.MustCompile(`(?m)^yaw -8\.0 body 0$`).FindAllString(out, -1)) != 4 {
		t.Fatalf("targets after each move:\n%s", out)
	}
}

// 4x4 numpy matrices built by hand, as sequence.py builds them with scipy.
const matrixScript = `
import time
import numpy as np
from robot_sdk import Robot

def yaw_matrix(a):
    m = np.eye(4)
    m[:3, :3] = [[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]]
    return m

with Robot(media_backend="no_media") as robot:
    try:
        t0 = time.time()
        while True:
            pose = yaw_matrix(0.5 * np.sin(2 * np.pi * 0.5 * (time.time() - t0)))
            pose[:3, 3] = [0.0, 0.0, 0.01]
            robot.set_target(head=pose, antennas=[0, 0])
            time.sleep(0.01)
    except KeyboardInterrupt:
        print("present", np.asarray(robot.get_current_head_pose()).shape, flush=True)
`

func TestMatrixScript(t *testing.T) {
	t.Parallel() // its own daemon; the script only reads the venv
	d := systemSiteDaemon(t)
	s := runScript(t, d, d.venv, writeScript(t, "matrix.py", matrixScript))
	waitFor(t, 20*time.Second, "a yaw of the head", s, func() bool { return d.robot().TargetHead.Yaw > 0.05 })
	s.interrupt(t)
	if !s.stdout.has(regexp.MustCompile(`^present \(4, 4\)$`)) {
		t.Fatalf("numpy.asarray of a returned pose:\n%s", s.stdout)
	}
}

// Gravity compensation until Ctrl-C, as reachy_compliant_demo.py.
const compliantScript = `
import time
from robot_sdk import Robot

with Robot(media_backend="no_media") as robot:
    try:
        robot.enable_gravity_compensation()
        while True:
            time.sleep(0.02)
    except KeyboardInterrupt:
        pass
    finally:
        robot.disable_gravity_compensation()
`

func TestCompliantScript(t *testing.T) {
	t.Parallel() // its own daemon; the script only reads the venv
	d := systemSiteDaemon(t)
	s := runScript(t, d, d.venv, writeScript(t, "compliant.py", compliantScript))
	waitFor(t, 20*time.Second, "gravity compensation", s, func() bool { return motorMode(d) == "gravity_compensation" })
	s.interrupt(t)
	if m := motorMode(d); m != "enabled" {
		t.Fatalf("motor mode after the script: %s", m)
	}
}

// tour_app, an app in the template's style: numpy motion, a settings route whose body is a pydantic
// model, a path and a query parameter, a built-in sound.
func TestTourApp(t *testing.T) {
	parallel(t)
	d := systemSiteDaemon(t, "pydantic")
	port := pagePort(t)
	dir := filepath.Join(t.TempDir(), "tour_app")
	if err := os.CopyFS(dir, os.DirFS(testdataApp("tour_app"))); err != nil {
		t.Fatal(err)
	}
	mainPy := filepath.Join(dir, "tour_app", "main.py")
	src, _ := os.ReadFile(mainPy)
	if err := os.WriteFile(mainPy, []byte(strings.ReplaceAll(string(src), "CUSTOM_PORT", fmt.Sprint(port))), 0o644); err != nil {
		t.Fatal(err)
	}
	runTemplateAppTour(t, d, dir, port)
}

func runTemplateAppTour(t *testing.T, d *daemon, dir string, port int) {
	t.Helper()
	var created struct {
		JobID string `json:"job_id"`
	}
	d.call("POST", "/api/apps/install", map[string]string{"url": dir}, &created)
	if j := d.waitJob(created.JobID); j.Status != "done" {
		t.Fatalf("install: %s %v\n%s", j.Status, j.Error, strings.Join(j.Logs, "\n"))
	}
	t.Cleanup(func() {
		if d.call("POST", "/api/apps/remove/tour_app", nil, &created) == 200 {
			d.waitJob(created.JobID)
		}
	})
	d.call("POST", "/api/apps/start-app/tour_app", nil, nil)
	d.waitState(20*time.Second, "running")
	d.waitRobot(20*time.Second, "the app waves", func(s robotState) bool { return s.TargetAntennas != [2]float64{0, 0} })
	page := fmt.Sprintf("http://127.0.0.1:%d", port)
	post := func(path, body string) (int, string) {
		t.Helper()
		var resp *http.Response
		var err error
		// The page serves before the app's run() declares its routes (as the public SDK does):
		// until then, 404.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			resp, err = http.Post(page+path, "application/json", strings.NewReader(body))
			if (err == nil && resp.StatusCode != http.StatusNotFound) || time.Now().After(deadline) {
				break
			}
			if err == nil {
				resp.Body.Close()
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(data)
	}
	if code, body := post("/wave", `{"enabled": true, "amplitude_deg": 10}`); code != 200 || !regexp.MustCompile(`"amplitude_deg": ?10\.0`).MatchString(body) {
		t.Fatalf("POST /wave: %d %s (a pydantic model is answered as JSON)", code, body)
	}
	if code, body := post("/wave", `{"amplitude_deg": 10}`); code != 422 || !strings.Contains(body, `"enabled"`) {
		t.Fatalf("POST /wave without enabled: %d %s", code, body)
	}
	resp, err := http.Get(page + "/wave/amplitude_deg?scale=2")
	if err != nil {
		t.Fatal(err)
	}
	var read map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&read)
	resp.Body.Close()
	if read["field"] != "amplitude_deg" || read["value"] != 20.0 {
		t.Fatalf("GET /wave/amplitude_deg?scale=2: %v", read)
	}
	resp, err = http.Get(page + "/wave/amplitude_deg?scale=big")
	if err != nil || resp.StatusCode != 422 {
		t.Fatalf("a query parameter that is not a float: %v %v", err, resp)
	}
	resp.Body.Close()
	// A route that returns None answers 200 null, as FastAPI answers it.
	if code, body := post("/chime", ""); code != 200 || strings.TrimSpace(body) != "null" {
		t.Fatalf("POST /chime: %d %s, want 200 null", code, body)
	}
	if code, _ := post("/wave", `{"enabled": false}`); code != 200 {
		t.Fatalf("POST /wave: %d", code)
	}
	d.waitRobot(5*time.Second, "the antennas stop", func(s robotState) bool { return s.TargetAntennas == [2]float64{0, 0} })
	if state, errText := d.stopApp(); state != "done" {
		t.Fatalf("stop: the app ended %s %q\n%s", state, errText, d.log.String())
	}
}
