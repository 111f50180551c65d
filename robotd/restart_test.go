package robotd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/robothub/robothub/robotd/cmd/robotdaemon"
)

// A daemon restart keeps the installed apps, where they came from, and the startup app.
func TestRestartKeepsAppsAndStartupConfig(t *testing.T) {
	dataDir := t.TempDir()
	d := startDaemon(t, daemonOptions{dataDir: dataDir})
	d.reinstall("coop_app", "webui_app") // so that this data dir records where they came from
	var startup struct {
		StartupApp *string `json:"startup_app"`
	}
	if code := d.call("PUT", "/api/apps/startup-app", map[string]any{"startup_app": "coop_app"}, &startup); code != 200 || *startup.StartupApp != "coop_app" {
		t.Fatalf("PUT startup-app: %d %v", code, startup.StartupApp)
	}
	before := d.list()
	d.stop()

	d = startDaemon(t, daemonOptions{dataDir: dataDir})
	after := d.list()
	for _, name := range []string{"coop_app", "webui_app"} {
		if !reflect.DeepEqual(after[name], before[name]) || after[name].Extra.Source != testdataApp(name) {
			t.Errorf("after restart %s is %+v, was %+v", name, after[name], before[name])
		}
	}
	startup.StartupApp = nil
	d.call("GET", "/api/apps/startup-app", nil, &startup)
	if startup.StartupApp == nil || *startup.StartupApp != "coop_app" {
		t.Fatalf("startup app after restart: %v", startup.StartupApp)
	}
	// The saved startup app starts once the robot has woken up.
	if st := d.waitState(10*time.Second, "running"); st.Info.Name != "coop_app" {
		t.Fatalf("after restart %s runs", st.Info.Name)
	}
	d.call("POST", "/api/apps/stop-current-app", nil, nil)
	if code := d.call("PUT", "/api/apps/startup-app", map[string]any{"startup_app": nil}, &startup); code != 200 || startup.StartupApp != nil {
		t.Fatalf("clearing the startup app: %d %v", code, startup.StartupApp)
	}
	data, _ := os.ReadFile(filepath.Join(dataDir, "startup-app.json"))
	if !strings.Contains(string(data), `"startup_app": ""`) {
		t.Fatalf("saved startup config: %s", data)
	}
}

// startDaemonProcess runs the daemon as a separate process (this test binary, re-executed), so
// that a test can kill it with SIGKILL.
func startDaemonProcess(t *testing.T, dataDir string) (*exec.Cmd, *daemon) {
	t.Helper()
	skipShort(t)
	port := freePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	args, _ := json.Marshal([]string{"robot-daemon", "--sim", "--port", strconv.Itoa(port), "--data-dir", dataDir,
		"--hub-url", "none", "--log-level", "warn", "--apps-venv", sharedVenv, "--python", systemPython, "--system-site-packages"})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ROBOTD_TEST_DAEMON_ARGS="+string(args))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(url + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK { // 503 while it sets up the robot and the apps venv
				return cmd, &daemon{t: t, url: url, dataDir: dataDir, token: ownerToken(t, dataDir, nil, nil)}
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("daemon process did not serve")
		}
	}
}

// An app left running by a killed daemon is found and stopped when the daemon starts again.
func TestAppLeftByKilledDaemonIsStopped(t *testing.T) {
	dataDir := t.TempDir()
	first := startDaemon(t, daemonOptions{dataDir: dataDir})
	first.install("stubborn_app")
	first.stop()

	proc, second := startDaemonProcess(t, dataDir)
	post, err := second.post("/api/apps/start-app/stubborn_app", "application/json", nil)
	if err != nil || post.StatusCode != 200 {
		t.Fatalf("start-app: %v %v", err, post)
	}
	post.Body.Close()
	var ra struct {
		PID int `json:"pid"`
	}
	data, _ := os.ReadFile(filepath.Join(dataDir, "running-app.json"))
	_ = json.Unmarshal(data, &ra)
	var pids []int
	for deadline := time.Now().Add(10 * time.Second); len(pids) < 2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		pids = groupPIDs(ra.PID)
	}
	if len(pids) < 2 {
		t.Fatalf("stubborn_app and its child are not running: pgid %d %v", ra.PID, pids)
	}

	_ = proc.Process.Signal(syscall.SIGKILL)
	_ = proc.Wait()
	// Orphaned: the kernel gives the app to another parent once the daemon is reaped.
	for deadline := time.Now().Add(5 * time.Second); parentPID(ra.PID) == proc.Process.Pid; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("app %d still has the killed daemon %d as its parent", ra.PID, proc.Process.Pid)
		}
	}
	for _, pid := range pids {
		if !processAlive(pid) {
			t.Fatalf("process %d died with the daemon; the test needs an orphan", pid)
		}
	}

	d := startDaemon(t, daemonOptions{dataDir: dataDir})
	for _, pid := range pids {
		if processAlive(pid) {
			t.Errorf("process %d of the orphaned app survived the daemon's restart", pid)
		}
	}
	if !strings.Contains(d.log.String(), "stopping an app left running by a previous daemon") {
		t.Error("the daemon did not log that it stopped the orphaned app")
	}
	if _, err := os.Stat(filepath.Join(dataDir, "running-app.json")); !os.IsNotExist(err) {
		t.Errorf("running-app file left behind: %v", err)
	}
	if st := d.status(); st != nil {
		t.Errorf("status after recovery: %+v", st)
	}
}

// The daemon tells systemd it is ready once the API listens, and that it stops.
func TestSystemdNotify(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	port := freePort(t)
	getenv := func(k string) string {
		if k == "NOTIFY_SOCKET" {
			return sock
		}
		return os.Getenv(k)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- robotdaemon.Run(ctx, []string{"robot-daemon", "--sim", "--port", strconv.Itoa(port), "--data-dir", t.TempDir(),
			"--apps-venv", sharedVenv, "--python", systemPython, "--system-site-packages", "--hub-url", "none"}, getenv, io.Discard, io.Discard)
	}()
	read := func() string {
		buf := make([]byte, 256)
		_ = conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("reading the notify socket: %v", err)
		}
		return string(buf[:n])
	}
	if msg := read(); msg != "READY=1" {
		t.Fatalf("first notification %q", msg)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", port))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("READY was sent before the API answered: %v", err)
	}
	resp.Body.Close()
	cancel()
	if msg := read(); msg != "STOPPING=1" {
		t.Fatalf("notification on shutdown %q", msg)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// hub serves a catalog of spaces like the public hub: GET /api/spaces?filter=robot_python_app
// and each space as a git repository over smart HTTP (git http-backend).
func hub(t *testing.T, spaces map[string]string) *testHub {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skipf("git is not installed: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	root := t.TempDir()
	var listing []map[string]any
	for id, src := range spaces {
		work := filepath.Join(t.TempDir(), "work")
		if err := os.CopyFS(work, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "publish"},
			{"clone", "-q", "--bare", work, filepath.Join(root, "spaces", id)},
		} {
			cmd := exec.Command("git", args...)
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		listing = append(listing, map[string]any{"id": id, "cardData": map[string]string{"short_description": "published " + id}})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/spaces", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("filter") != "robot_python_app" {
			http.Error(w, "expected filter=robot_python_app", 400)
			return
		}
		_ = json.NewEncoder(w).Encode(listing)
	})
	mux.Handle("/spaces/", &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
	// The same repositories as plain git URLs: <hub>/git/spaces/<id>.
	mux.Handle("/git/", &cgi.Handler{Path: backend, Root: "/git", Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &testHub{Server: srv, root: root}
}

// testHub is a fake hub; root holds the spaces' bare repositories (root/spaces/<id>).
type testHub struct {
	*httptest.Server
	root string
}

// The startup app missing from the apps venv is installed from the hub's catalog (a git clone of
// its space) before the robot wakes up, then starts after wake-up.
func TestStartupAppInstalledFromCatalog(t *testing.T) {
	parallel(t)
	h := hub(t, map[string]string{"pollen/catalog_app": testdataApp("catalog_app")})
	d := startDaemon(t, daemonOptions{args: []string{"--hub-url", h.URL, "--startup-app", "catalog_app"}})
	t.Cleanup(func() {
		d.call("POST", "/api/apps/stop-current-app", nil, nil)
		var created struct {
			JobID string `json:"job_id"`
		}
		if d.call("POST", "/api/apps/remove/catalog_app", nil, &created) == 200 {
			d.waitJob(created.JobID)
		}
	})
	st := d.waitState(3*time.Minute, "running")
	if st.Info.Name != "catalog_app" {
		t.Fatalf("running %s", st.Info.Name)
	}
	app := d.list()["catalog_app"]
	if app.URL != h.URL+"/spaces/pollen/catalog_app" {
		t.Fatalf("installed from %q", app.URL)
	}
	log := d.log.String()
	installed, woke := strings.Index(log, `msg="job done" component=apps job=`), strings.Index(log, "waking the robot up")
	if installed < 0 || woke < 0 || installed > woke {
		t.Fatalf("the robot woke up (at %d) before the startup app was installed (at %d)", woke, installed)
	}
	var available []appInfo
	d.call("GET", "/api/apps/list-available/hf_space", nil, &available)
	if len(available) != 1 || available[0].Name != "catalog_app" || available[0].URL != h.URL+"/spaces/pollen/catalog_app" {
		t.Fatalf("list-available/hf_space: %+v", available)
	}
}

// Install from a git URL that is not a hub space; credentials in a URL never show.
func TestInstallFromGitURL(t *testing.T) {
	parallel(t)
	h := hub(t, map[string]string{"pollen/catalog_app": testdataApp("catalog_app")})
	d := startDaemon(t, daemonOptions{})
	t.Cleanup(func() {
		var created struct {
			JobID string `json:"job_id"`
		}
		if d.call("POST", "/api/apps/remove/catalog_app", nil, &created) == 200 {
			d.waitJob(created.JobID)
		}
	})
	url := h.URL + "/git/spaces/pollen/catalog_app"
	var created struct {
		JobID string `json:"job_id"`
	}
	d.call("POST", "/api/apps/install", map[string]string{"url": url}, &created)
	if j := d.waitJob(created.JobID); j.Status != "done" || fmt.Sprint(j.Apps) != "[catalog_app]" {
		t.Fatalf("install from git: %s %v\n%s", j.Status, j.Error, strings.Join(j.Logs, "\n"))
	}
	var list []struct {
		Name  string `json:"name"`
		Extra struct {
			InstalledFrom string `json:"installed_from"`
			Source        string `json:"source"`
		} `json:"extra"`
	}
	d.call("GET", "/api/apps/list", nil, &list)
	found := false
	for _, a := range list {
		if a.Name == "catalog_app" {
			found = a.Extra.InstalledFrom == "git" && a.Extra.Source == url
		}
	}
	if !found {
		t.Fatalf("catalog_app not listed as installed from git %s: %+v", url, list)
	}

	secretURL := "http://robot:hunter2secret@127.0.0.1:1/nothing.git"
	d.call("POST", "/api/apps/install", map[string]string{"url": secretURL}, &created)
	j := d.waitJob(created.JobID)
	all, _ := json.Marshal(j)
	if j.Status != "failed" || strings.Contains(string(all), "hunter2secret") || strings.Contains(d.log.String(), "hunter2secret") {
		t.Fatalf("a failed clone of a URL with a password: %s\n%s", all, d.log.String())
	}
}

// A second daemon on the data dir of a running one exits with an error naming the lock and the
// first daemon's PID, before it touches the data dir: the first one's app keeps running.
func TestSecondDaemonOnOneDataDirIsRefused(t *testing.T) {
	parallel(t)
	d := startDaemon(t, daemonOptions{})
	d.install("coop_app")
	d.call("POST", "/api/apps/start-app/coop_app", nil, nil)
	d.waitState(10*time.Second, "running")

	port := freePort(t)
	var stderr bytes.Buffer
	err := robotdaemon.Run(context.Background(), []string{"robot-daemon", "--sim", "--port", strconv.Itoa(port),
		"--data-dir", d.dataDir, "--hub-url", "none"}, os.Getenv, io.Discard, &stderr)
	want := fmt.Sprintf("%s is in use by another robot-daemon (PID %d)", filepath.Join(d.dataDir, "robot-daemon.lock"), os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("second daemon: %v, want an error with %q\n%s", err, want, stderr.String())
	}
	if st := d.status(); st == nil || st.State != "running" {
		t.Fatalf("the first daemon's app after the second daemon was refused: %+v", st)
	}
}

// parentPID is pid's parent, from /proc (0 when pid is gone).
func parentPID(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// A port in use is said before the apps venv is built (a first start spent 15 s building it, then
// failed on the port): the venv is not even made, and the error names --port.
func TestPortInUseIsSaidFirst(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	data := t.TempDir()
	venv := filepath.Join(data, "venv")
	err = robotdaemon.Run(context.Background(), []string{"robot-daemon", "--sim", "--port", strconv.Itoa(taken.Addr().(*net.TCPAddr).Port),
		"--data-dir", data, "--apps-venv", venv, "--hub-url", "none"}, os.Getenv, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "address already in use") || !strings.Contains(err.Error(), "pick another port with --port") {
		t.Fatalf("a daemon on a port in use: %v", err)
	}
	if _, err := os.Stat(venv); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the apps venv was made before the port was checked: %v", err)
	}
}
