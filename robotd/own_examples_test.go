package robotd_test

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Our own programs written as the public SDK's examples, template and test apps are
// (testdata/README.md), on a --sim daemon whose apps venv sees Debian's numpy, scipy, pydantic and
// FastAPI: each does what it means to the robot, and exits 0.

func ownExample(name string) string {
	p, err := filepath.Abs(filepath.Join("testdata", "examples", name))
	if err != nil {
		panic(err)
	}
	return p
}

func TestOwnExamplesMoveTheRobotAsTheyMean(t *testing.T) {
	parallel(t)
	d := systemSiteDaemon(t, "scipy")
	deg := math.Pi / 180

	// minimal_demo
	{
		s := runScript(t, d, d.venv, ownExample("minimal_demo.py"))
		waitFor(t, 20*time.Second, "the head nodding and the antennas waving", s, targetsVary(d))
		peak := 0.0
		waitFor(t, 5*time.Second, "the nod's 10°", s, func() bool {
			peak = math.Max(peak, math.Abs(d.robot().HeadPose.Pitch))
			return peak > 9*deg
		})
		s.interrupt(t)
		if !s.stdout.has(regexp.MustCompile(`^bye$`)) {
			t.Fatalf("no goodbye after Ctrl-C:\n%s", s.stdout)
		}
	}
	// goto_interpolation
	{
		s := runScript(t, d, d.venv, ownExample("goto_interpolation.py"))
		s.wait(t, 60*time.Second)
		for _, m := range []string{"linear", "minjerk", "ease_in_out", "cartoon"} {
			if !s.stdout.has(regexp.MustCompile(`^Testing method: ` + m + `$`)) {
				t.Fatalf("no goto with %s:\n%s", m, s.stdout)
			}
		}
		st := d.waitRobot(3*time.Second, "the head at yaw 30°", func(s robotState) bool { return math.Abs(s.HeadPose.Yaw-30*deg) < 0.5*deg })
		if st.TargetAntennas != [2]float64{0, 0} {
			t.Fatalf("antennas %v after the last goto, want [0 0]", st.TargetAntennas)
		}
	}
	// sequence
	{
		s := runScript(t, d, d.venv, ownExample("sequence.py"))
		waitFor(t, 20*time.Second, "the sequence turning the head", s, func() bool { return math.Abs(d.robot().TargetHead.Yaw) > 5*deg })
		s.wait(t, 30*time.Second)
		d.waitRobot(3*time.Second, "the head pitched 10°, level otherwise", func(s robotState) bool {
			return math.Abs(s.HeadPose.Pitch-10*deg) < 0.5*deg && math.Abs(s.HeadPose.Yaw) < 0.5*deg
		})
	}
	// compliant_demo
	{
		s := runScript(t, d, d.venv, ownExample("compliant_demo.py"))
		waitFor(t, 20*time.Second, "gravity compensation", s, func() bool { return motorMode(d) == "gravity_compensation" })
		s.interrupt(t)
		if m := motorMode(d); m != "enabled" {
			t.Fatalf("motor mode after the demo: %s, want enabled", m)
		}
	}
}

// ok_app runs until stopped and stops within 5 s; faulty_app ends in error with its message.
func TestOwnTestAppsEndAsTheyShould(t *testing.T) {
	parallel(t)
	d := systemSiteDaemon(t)
	for _, name := range []string{"ok_app", "faulty_app"} {
		dir, _ := filepath.Abs(filepath.Join("testdata", "apps", name))
		var created struct {
			JobID string `json:"job_id"`
		}
		d.call("POST", "/api/apps/install", map[string]string{"url": dir}, &created)
		if j := d.waitJob(created.JobID); j.Status != "done" {
			t.Fatalf("install %s: %s %v\n%s", name, j.Status, j.Error, strings.Join(j.Logs, "\n"))
		}
		t.Cleanup(func() {
			if d.call("POST", "/api/apps/remove/"+name, nil, &created) == 200 {
				d.waitJob(created.JobID)
			}
		})
	}

	if code := d.call("POST", "/api/apps/start-app/ok_app", nil, nil); code != 200 {
		t.Fatalf("start ok_app: %d", code)
	}
	d.waitState(20*time.Second, "running")
	d.waitRobot(10*time.Second, "ok_app's look 20° to the left", func(s robotState) bool { return math.Abs(s.TargetHead.Yaw-20*math.Pi/180) < 1e-3 })
	start := time.Now()
	if state, errText := d.stopApp(); state != "done" || errText != "" {
		t.Fatalf("ok_app ended %s %q", state, errText)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("ok_app took %v to stop, want ≤ 5 s", took)
	}

	if code := d.call("POST", "/api/apps/start-app/faulty_app", nil, nil); code != 200 {
		t.Fatalf("start faulty_app: %d", code)
	}
	st := d.waitState(20*time.Second, "error")
	if st.Error == nil || !strings.Contains(*st.Error, "faulty_app: the sensor it needs is missing") {
		t.Fatalf("faulty_app ended %s with %v, want its RuntimeError's message", st.State, st.Error)
	}
}

// The app template as the public assistant renders it (our copy: a pydantic body on a FastAPI
// route, static files) installs, waves, obeys its settings page, and stops within 5 s.
func TestOwnAppTemplateRunsAndStops(t *testing.T) {
	parallel(t)
	d := systemSiteDaemon(t, "pydantic", "fastapi", "uvicorn")
	src, _ := filepath.Abs(filepath.Join("testdata", "apps", "template_app"))
	dir := filepath.Join(t.TempDir(), "template_app")
	port := pagePort(t)
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		// The template's fixed port 8042, which other programs on a test machine may hold.
		data = []byte(strings.ReplaceAll(string(data), "http://0.0.0.0:8042", "http://0.0.0.0:"+strconv.Itoa(port)))
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	runTemplateApp(t, d, dir, "template_app", port)
	t.Logf("installed, run and stopped in %v", time.Since(start))
}
