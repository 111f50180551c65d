package robotd_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// systemPython is Debian's interpreter, whose python3-numpy (and python3-pydantic, python3-scipy)
// the apps venv sees through --system-site-packages, as a Raspberry Pi's apt packages.
const systemPython = "/usr/bin/python3"

// systemSiteDaemon starts a daemon whose apps venv sees the system's numpy; it fails naming the
// Debian package when the system's Python lacks a module it needs (.ci/run installs them).
func systemSiteDaemon(t *testing.T, modules ...string) *daemon {
	t.Helper()
	for _, m := range append([]string{"numpy"}, modules...) {
		if err := exec.Command(systemPython, "-c", "import "+m).Run(); err != nil {
			t.Fatalf("%s cannot import %s: install Debian's python3-%s (%v)", systemPython, m, m, err)
		}
	}
	d := startDaemon(t, daemonOptions{})
	// The daemon wakes the robot at start: what moves it afterwards is the script.
	d.waitRobot(10*time.Second, "awake and still", func(s robotState) bool { return s.Awake && s.Move == nil })
	return d
}

// script is a Python program run with the apps venv's interpreter against a daemon, as a user runs
// an example on a laptop next to the robot.
type script struct {
	cmd    *exec.Cmd
	stdout *syncLines
	stderr bytes.Buffer
	done   chan error
}

type syncLines struct {
	mu    sync.Mutex
	lines []string
}

func (s *syncLines) has(re *regexp.Regexp) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.lines {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

func (s *syncLines) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

func runScript(t *testing.T, d *daemon, venv, path string, args ...string) *script {
	t.Helper()
	cmd := exec.Command(filepath.Join(venv, "bin", "python"), append([]string{"-u", path}, args...)...)
	cmd.Dir = filepath.Dir(path)
	cmd.Env = append(os.Environ(), d.ownerEnv()...)
	s := &script{cmd: cmd, stdout: &syncLines{}, done: make(chan error, 1)}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.stdout.mu.Lock()
			s.stdout.lines = append(s.stdout.lines, sc.Text())
			s.stdout.mu.Unlock()
		}
		s.done <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return s
}

// interrupt sends SIGINT, as Ctrl-C does, and checks that the script exits 0 without a traceback.
func (s *script) interrupt(t *testing.T) {
	t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	s.wait(t, 30*time.Second)
}

func (s *script) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case err := <-s.done:
		if err != nil || strings.Contains(s.stderr.String(), "Traceback") {
			t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(s.cmd.Args[2]), err, s.stdout, s.stderr.String())
		}
	case <-time.After(timeout):
		t.Fatalf("%s did not exit\nstdout:\n%s\nstderr:\n%s", filepath.Base(s.cmd.Args[2]), s.stdout, s.stderr.String())
	}
}

// waitFor polls cond until it holds.
func waitFor(t *testing.T, timeout time.Duration, what string, s *script, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		select {
		case err := <-s.done:
			t.Fatalf("%s: the script ended (%v) before %s\nstdout:\n%s\nstderr:\n%s", filepath.Base(s.cmd.Args[2]), err, what, s.stdout, s.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no %s within %s\nstderr:\n%s", filepath.Base(s.cmd.Args[2]), what, timeout, s.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// targetsVary returns a condition that holds once the robot's targets have changed between
// successive checks twice: something keeps driving it.
func targetsVary(d *daemon) func() bool {
	last, changes := d.robot(), 0
	return func() bool {
		now := d.robot()
		if now.TargetAntennas != last.TargetAntennas || now.TargetHead != last.TargetHead {
			changes++
		}
		last = now
		return changes >= 2
	}
}

func motorMode(d *daemon) string {
	var st struct {
		Mode string `json:"mode"`
	}
	d.call("GET", "/api/motors/status", nil, &st)
	return st.Mode
}

// --- the anchor's own files, after the renames alone ------------------------------------------

// anchorRenames are the documented renames, longest names first so that a shorter one does not
// rewrite part of a longer: the entry-point group and README tag are the contract's fixed names.
var anchorRenames = []struct{ from, to string }{
	{"reachy_mini_apps", "robot_apps"},
	{"reachy_mini_python_app", "robot_python_app"},
	{"reachy-mini", "robot-sdk"},
	{"ReachyMiniApp", "RobotApp"},
	{"ReachyMini", "Robot"},
	{"reachy_mini", "robot_sdk"},
}

func renamed(src string) string {
	for _, r := range anchorRenames {
		src = strings.ReplaceAll(src, r.from, r.to)
	}
	return src
}

// anchorFile reads a file of the anchor from its git directory, $ROBOT_ANCHOR_REPO (a clone or
// mirror of pollen-robotics/reachy_mini): the tests never carry the anchor's code.
func anchorFile(t *testing.T, path string) string {
	t.Helper()
	repo := os.Getenv("ROBOT_ANCHOR_REPO")
	if repo == "" {
		t.Skip("ROBOT_ANCHOR_REPO is not set: point it at a git dir of pollen-robotics/reachy_mini to run its examples and app template here after the renames")
	}
	out, err := exec.Command("git", "--git-dir", repo, "show", "HEAD:"+path).Output()
	if err != nil {
		t.Fatalf("reading %s from %s: %v", path, repo, err)
	}
	return string(out)
}

func writeAnchorExample(t *testing.T, name string) string {
	t.Helper()
	src := renamed(anchorFile(t, "examples/"+name))
	t.Logf("examples/%s, renamed: reachy_mini -> robot_sdk, ReachyMini -> Robot", name)
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The anchor's examples/minimal_demo.py nods the head and waves the antennas at 100 Hz until Ctrl-C,
// with numpy from the system's site-packages.
func TestAnchorMinimalDemo(t *testing.T) {
	path := writeAnchorExample(t, "minimal_demo.py")
	d := systemSiteDaemon(t)
	s := runScript(t, d, d.venv, path)
	waitFor(t, 20*time.Second, "motion", s, targetsVary(d))
	s.interrupt(t)
}

// examples/goto_interpolation_playground.py moves with each of the anchor's interpolation names.
func TestAnchorGotoInterpolationPlayground(t *testing.T) {
	path := writeAnchorExample(t, "goto_interpolation_playground.py")
	d := systemSiteDaemon(t)
	s := runScript(t, d, d.venv, path)
	second := regexp.MustCompile(`Testing method: .*(minjerk|MIN_JERK)`)
	waitFor(t, 30*time.Second, "the second interpolation", s, func() bool { return s.stdout.has(second) })
	s.interrupt(t)
}

// examples/sequence.py builds 4×4 poses with numpy and scipy and sets them at 100 Hz.
func TestAnchorSequence(t *testing.T) {
	path := writeAnchorExample(t, "sequence.py")
	d := systemSiteDaemon(t, "scipy")
	s := runScript(t, d, d.venv, path)
	waitFor(t, 20*time.Second, "a yaw of the head", s, func() bool { return d.robot().TargetHead.Yaw != 0 })
	s.interrupt(t)
}

// examples/reachy_compliant_demo.py turns gravity compensation on until Ctrl-C, then off.
func TestAnchorCompliantDemo(t *testing.T) {
	path := writeAnchorExample(t, "reachy_compliant_demo.py")
	d := systemSiteDaemon(t)
	s := runScript(t, d, d.venv, path)
	waitFor(t, 20*time.Second, "gravity compensation", s, func() bool { return motorMode(d) == "gravity_compensation" })
	s.interrupt(t)
	if m := motorMode(d); m != "enabled" {
		t.Fatalf("motor mode after the demo: %s, want enabled", m)
	}
}

// templateContext is what the anchor's assistant fills its templates with, for app "anchor_app".
var templateContext = map[string]string{
	"app_name": "anchor_app", "package_name": "anchor_app", "module_name": "anchor_app",
	"class_name": "AnchorApp", "class_name_display": "Anchor App", "entrypoint_name": "anchor_app",
}

var jinjaVar = regexp.MustCompile(`\{\{\s*([a-z_]+)\s*\}\}`)

// The anchor's app template (src/reachy_mini/apps/templates), rendered as its assistant does and
// renamed, installs, runs with numpy and pydantic from the system's site-packages, serves its
// settings page with the pydantic body route, and stops.
func TestAnchorAppTemplate(t *testing.T) {
	files := map[string]string{
		"anchor_app/main.py": "main.py.j2", "anchor_app/static/index.html": "static/index.html.j2",
		"anchor_app/static/style.css": "static/style.css.j2", "anchor_app/static/main.js": "static/main.js.j2",
		"pyproject.toml": "pyproject.toml.j2", "README.md": "README.md.j2", "index.html": "index.html.j2", "style.css": "style.css.j2",
		"anchor_app/__init__.py": "",
	}
	if os.Getenv("ROBOT_ANCHOR_REPO") == "" {
		anchorFile(t, "") // skips
	}
	d := systemSiteDaemon(t, "pydantic")
	dir := filepath.Join(t.TempDir(), "anchor_app")
	port := pagePort(t)
	for dst, tmpl := range files {
		var src string
		if tmpl != "" {
			src = anchorFile(t, "src/reachy_mini/apps/templates/"+tmpl)
			src = jinjaVar.ReplaceAllStringFunc(src, func(m string) string { return templateContext[jinjaVar.FindStringSubmatch(m)[1]] })
			src = renamed(src)
			// Not a rename: the template's fixed port 8042, which other programs on a test machine may hold.
			src = strings.ReplaceAll(src, "http://0.0.0.0:8042", fmt.Sprintf("http://0.0.0.0:%d", port))
		}
		p := filepath.Join(dir, dst)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Log("templates rendered for anchor_app and renamed: reachy_mini_apps -> robot_apps, reachy_mini_python_app -> robot_python_app, reachy-mini -> robot-sdk, ReachyMiniApp -> RobotApp, ReachyMini -> Robot, reachy_mini -> robot_sdk; custom_app_url's port 8042 -> a free port")
	runTemplateApp(t, d, dir, "anchor_app", port)
}

// runTemplateApp installs the app at dir, starts it, waits until it drives the robot, turns its
// antennas off through its settings page, and stops it.
func runTemplateApp(t *testing.T, d *daemon, dir, name string, port int) {
	t.Helper()
	var created struct {
		JobID string `json:"job_id"`
	}
	d.call("POST", "/api/apps/install", map[string]string{"url": dir}, &created)
	if j := d.waitJob(created.JobID); j.Status != "done" {
		t.Fatalf("install: %s %v\n%s", j.Status, j.Error, strings.Join(j.Logs, "\n"))
	}
	t.Cleanup(func() {
		if d.call("POST", "/api/apps/remove/"+name, nil, &created) == 200 {
			d.waitJob(created.JobID)
		}
	})
	var st appStatus
	if code := d.call("POST", "/api/apps/start-app/"+name, nil, &st); code != 200 {
		t.Fatalf("start: %d", code)
	}
	d.waitState(20*time.Second, "running")
	d.waitRobot(20*time.Second, "the app waves the antennas", func(s robotState) bool { return s.TargetAntennas != [2]float64{0, 0} })
	page := fmt.Sprintf("http://127.0.0.1:%d", port)
	var resp *http.Response
	var err error
	// The page serves before the app's run() declares its routes (as the public SDK does), and
	// the antennas "waving" may be the default pose's: until run() has declared them, 404.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err = http.Post(page+"/antennas", "application/json", strings.NewReader(`{"enabled": false}`))
		if (err == nil && resp.StatusCode != http.StatusNotFound) || time.Now().After(deadline) {
			break
		}
		if err == nil {
			resp.Body.Close()
		}
	}
	if err != nil {
		t.Fatalf("the app's settings page: %v\n%s", err, d.log.String())
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var answer map[string]any
	if resp.StatusCode != 200 || json.Unmarshal(body, &answer) != nil || answer["antennas_enabled"] != false {
		t.Fatalf("POST /antennas {enabled: false}: %d %s", resp.StatusCode, body)
	}
	resp, err = http.Post(page+"/antennas", "application/json", strings.NewReader(`{"enabled": "sometimes"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 422 || !strings.Contains(string(body), `"enabled"`) {
		t.Fatalf("a body pydantic refuses: %d %s, want 422 naming enabled", resp.StatusCode, body)
	}
	d.waitRobot(5*time.Second, "the antennas stop", func(s robotState) bool {
		return s.TargetAntennas == [2]float64{0, 0}
	})
	resp, err = http.Get(page + "/static/main.js")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("static/main.js at /static/: %v %v", err, resp)
	}
	resp.Body.Close()
	stopAsked := time.Now()
	if state, errText := d.stopApp(); state != "done" {
		t.Fatalf("stop: the app ended %s %q\n%s", state, errText, d.log.String())
	}
	if took := time.Since(stopAsked); took > 5*time.Second {
		t.Fatalf("the app took %v to stop, want ≤ 5 s", took)
	}
}

// An SDK client that turns the motors off and is then killed leaves the robot asleep, not awake
// with limp motors, and so does daemon/stop?goto_sleep=false; the simulated head still follows
// the next client's targets in every motor mode, as the anchor's simulators do.
func TestAKilledClientLeavesNoAwakeRobotWithItsMotorsOff(t *testing.T) {
	parallel(t)
	d := systemSiteDaemon(t)
	path := filepath.Join(t.TempDir(), "limp_and_die.py")
	if err := os.WriteFile(path, []byte(`import os, signal
from robot_sdk import Robot
robot = Robot(media_backend="no_media")
robot.disable_motors()
print("motors off", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := runScript(t, d, d.venv, path)
	if err := <-s.done; err == nil || !s.stdout.has(regexp.MustCompile("motors off")) {
		t.Fatalf("the script was not killed after turning the motors off: %v\n%s\n%s", err, s.stdout, s.stderr.String())
	}
	if st := d.robot(); st.Awake || st.ControlMode != "disabled" {
		t.Fatalf("after the client died: awake=%v mode=%s, want asleep with the motors disabled", st.Awake, st.ControlMode)
	}
	follows := func(yaw float64) {
		t.Helper()
		if code := d.call("POST", "/api/move/set_target", map[string]any{"target_head_pose": map[string]float64{"yaw": yaw}}, nil); code != 200 {
			t.Fatalf("set_target: %d", code)
		}
		d.waitRobot(5*time.Second, fmt.Sprintf("the head at yaw %.1f with the motors %s", yaw, motorMode(d)), func(s robotState) bool {
			return math.Abs(s.HeadPose.Yaw-yaw) < 1e-3
		})
	}
	follows(0.5)

	for _, call := range []string{"/api/daemon/stop?goto_sleep=false", "/api/daemon/start?wake_up=false"} {
		if code := d.call("POST", call, nil, nil); code != 200 {
			t.Fatalf("%s: %d", call, code)
		}
	}
	if st := d.robot(); st.Awake || st.ControlMode != "disabled" {
		t.Fatalf("after daemon/stop?goto_sleep=false and daemon/start?wake_up=false: awake=%v mode=%s, want asleep with the motors disabled", st.Awake, st.ControlMode)
	}
	follows(-0.4)
}

// The anchor's examples/sequence.py run after another example that was killed while it held the
// motors in gravity compensation still turns the simulated head: its yaw oscillation peaks at
// 0.7 rad (it froze at 0.000 rad when the simulation left limp joints where they were).
func TestAnchorSequenceAfterAKilledExample(t *testing.T) {
	compliant := writeAnchorExample(t, "reachy_compliant_demo.py")
	sequence := writeAnchorExample(t, "sequence.py")
	d := systemSiteDaemon(t, "scipy")
	first := runScript(t, d, d.venv, compliant)
	waitFor(t, 20*time.Second, "gravity compensation", first, func() bool { return motorMode(d) == "gravity_compensation" })
	_ = first.cmd.Process.Kill()
	<-first.done

	s := runScript(t, d, d.venv, sequence)
	peak := 0.0
	waitFor(t, 30*time.Second, "the yaw oscillation's peak of 0.7 rad", s, func() bool {
		peak = math.Max(peak, math.Abs(d.robot().HeadPose.Yaw))
		return peak > 0.65
	})
	s.interrupt(t)
}
