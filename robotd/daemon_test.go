package robotd_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/internal/testkit/syncbuf"
	"github.com/robothub/robothub/robotd"
	"github.com/robothub/robothub/robotd/cmd/robotdaemon"
	"github.com/robothub/robothub/robotd/updateapi"
)

// webUIAppURL is where the webui_app test app serves its page; webUIAppDir is that copy of it.
var webUIAppURL, webUIAppDir string

// sharedVenv is one apps venv for the tests of the package that run one at a time: creating one
// takes seconds, and apps installed by one test stay installed for the next (tests that call
// parallel get a copy of their own: ownVenv). It is made from systemPython with
// --system-site-packages (venvArgs): the robot SDK's numpy, scipy, pydantic, FastAPI and uvicorn
// come from Debian's builds, as a robot with no package index takes them from apt, since no index
// is reachable here.
var sharedVenv string

// venvArgs are the daemon's arguments for an apps venv of the tests: Debian's interpreter, whose
// packages the venv sees.
func venvArgs(venv string) []string {
	return []string{"--apps-venv", venv, "--python", systemPython, "--system-site-packages"}
}

func TestMain(m *testing.M) {
	// Re-executed as another local user's connection flood (see TestConnectionFloodOfAnotherUser).
	if spec := os.Getenv("ROBOTD_TEST_FLOOD"); spec != "" {
		os.Exit(runSpec(spec, runFlood))
	}
	// Re-executed as another local user's race of closed connections (TestClosedConnectionsOfAnotherUserGetNoTrust).
	if spec := os.Getenv("ROBOTD_TEST_RACE"); spec != "" {
		os.Exit(runSpec(spec, runRace))
	}
	// Re-executed as a daemon process (see startDaemonProcess).
	if args := os.Getenv("ROBOTD_TEST_DAEMON_ARGS"); args != "" {
		var argv []string
		if err := json.Unmarshal([]byte(args), &argv); err != nil {
			panic(err)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := robotdaemon.Run(ctx, argv, os.Getenv, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "robot-daemon:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// Every daemon puts its own URL into its apps' environment when the process has none (see
	// TestDaemonPutsItsURLIntoAppsEnvironment), which lets tests with daemons of their own run in
	// parallel; one from outside would send every test's apps to that other daemon.
	os.Unsetenv("ROBOT_DAEMON_URL")
	dir, err := os.MkdirTemp("", "robotd-test-")
	if err != nil {
		panic(err)
	}
	sharedVenv = filepath.Join(dir, "apps_venv")
	// webui_app serves its page on a port of its own in these tests (a copy of the app with its
	// custom_app_url rewritten), so that other test packages running at the same time cannot hold it.
	webUIAppURL = fmt.Sprintf("http://127.0.0.1:%d", freePort(nil))
	original := testdataApp("webui_app")
	webUIAppDir = filepath.Join(dir, "webui_app")
	if err := os.CopyFS(webUIAppDir, os.DirFS(original)); err != nil {
		panic(err)
	}
	mainPy := filepath.Join(webUIAppDir, "webui_app", "main.py")
	src, err := os.ReadFile(mainPy)
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(mainPy, []byte(strings.Replace(string(src), "http://127.0.0.1:8042", webUIAppURL, 1)), 0o644); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testdataApp is the path of a test app package.
func testdataApp(name string) string {
	if name == "webui_app" && webUIAppDir != "" {
		return webUIAppDir
	}
	p, err := filepath.Abs(filepath.Join("..", "core", "apps", "testdata", "apps", name))
	if err != nil {
		panic(err)
	}
	return p
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		if t == nil {
			panic(err)
		}
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// pagePort is a port for an app's page, which the app binds seconds after the test chose it (the
// install and the start come first). A port from freePort is one the kernel hands out to any
// bind(0) or connect meanwhile: in make test, where other packages start daemons beside these
// tests, another daemon took one and answered the app's route with its 404
// (TestOwnAppTemplateRunsAndStops). Page ports come from below Linux's ephemeral range
// (ip_local_port_range, 32768-60999 by default), where the kernel never picks one itself.
func pagePort(t testing.TB) int {
	t.Helper()
	for range 100 {
		p := 20000 + mrand.IntN(12000)
		ln, err := net.Listen("tcp", "0.0.0.0:"+strconv.Itoa(p)) // apps bind the wildcard address
		if err == nil {
			ln.Close()
			return p
		}
	}
	t.Fatal("no free port between 20000 and 32000 for an app's page")
	return 0
}

// daemon is a robot daemon run in-process by a test: the whole daemon (startDaemon: robotdaemon.Run,
// with its apps venv and Python apps) or its HTTP API on in-memory apps (startServer).
type daemon struct {
	t       testing.TB
	url     string
	token   string // the owner's token, which the helpers send (the daemon's from its data dir)
	dataDir string // "" for a server on in-memory apps
	venv    string // startDaemon's apps venv
	log     *syncbuf.Buffer
	cancel  context.CancelFunc
	done    chan error
	pid     int            // startDaemonBinary's process
	apps    *memApps       // startServer's apps
	rb      *robot.Robot   // startServer's robot
	server  *robotd.Server // startServer's handler
}

type daemonOptions struct {
	venv    string // default: the shared venv
	dataDir string
	args    []string
	getenv  func(string) string
	stdout  io.Writer // default: discarded
	port    int       // default: a free port
}

// venvLocks holds a mutex per apps venv (its path). A starting daemon creates its venv when it is
// missing and installs the SDK into it: daemons of tests running in parallel start one at a time
// on one venv.
var venvLocks sync.Map

// venvLock is the mutex of the apps venv at path (venvLocks).
func venvLock(path string) *sync.Mutex {
	mu, _ := venvLocks.LoadOrStore(path, &sync.Mutex{})
	return mu.(*sync.Mutex)
}

// parallelTests holds the names of the tests that called parallel.
var parallelTests sync.Map

// parallel runs t beside the other parallel tests (t.Parallel), each daemon it starts on an apps
// venv of its own (ownVenv) rather than the shared one: apps that one test installs, reinstalls or
// runs are then never another's. Such a test takes its own ports and data dirs (startDaemon's
// defaults) and sets no process environment (t.Setenv forbids t.Parallel); it must not run
// webui_app, whose page has one port for the package (webUIAppURL).
func parallel(t *testing.T) {
	t.Helper()
	parallelTests.Store(t.Name(), true)
	t.Parallel()
}

// isParallel says whether t, or the test it is a subtest of, called parallel.
func isParallel(t testing.TB) bool {
	top, _, _ := strings.Cut(t.Name(), "/")
	_, ok := parallelTests.Load(top)
	return ok
}

// testVenvs holds the apps venv of each parallel test (by name) that started a daemon with no
// venv of its own.
var testVenvs sync.Map

// defaultVenv is the apps venv of a daemon started by t with no venv of its own: the shared one,
// or for a parallel test one copy (ownVenv) for all its daemons, which see each other's apps as
// daemons on the shared venv do.
func defaultVenv(t testing.TB) string {
	t.Helper()
	if !isParallel(t) {
		return sharedVenv
	}
	if venv, ok := testVenvs.Load(t.Name()); ok {
		return venv.(string)
	}
	venv := ownVenv(t)
	testVenvs.Store(t.Name(), venv)
	t.Cleanup(func() { testVenvs.Delete(t.Name()) })
	return venv
}

// templateVenv is an apps venv that a daemon prepared (made it, installed the SDK) and no test
// installs into: ownVenv copies it.
var templateVenv = struct {
	sync.Mutex
	dir string
}{}

// ownVenv is an apps venv for t alone: a copy of templateVenv. Making a venv and installing the
// SDK takes a daemon seconds of CPU (pip, byte-compiling); the copy (cp -a: bin/python stays a
// link to Debian's interpreter) a tenth of one. Apps run as `python -m` by the interpreter of the
// venv they are installed in, so the scripts' shebangs naming the template are never what runs.
func ownVenv(t testing.TB) string {
	t.Helper()
	templateVenv.Lock()
	defer templateVenv.Unlock()
	if templateVenv.dir == "" {
		dir := filepath.Join(filepath.Dir(sharedVenv), "template_venv")
		startDaemon(t, daemonOptions{venv: dir}).stop()
		templateVenv.dir = dir
	}
	dst := filepath.Join(t.TempDir(), "apps_venv")
	if out, err := exec.Command("cp", "-a", templateVenv.dir, dst).CombinedOutput(); err != nil {
		t.Fatalf("copying the template apps venv: %v\n%s", err, out)
	}
	return dst
}

// startDaemon runs the daemon with --sim on a free port and waits for /healthz. Apps reach it
// through ROBOT_DAEMON_URL, which the daemon puts into their environment.
func startDaemon(t testing.TB, opts daemonOptions) *daemon {
	t.Helper()
	skipShort(t)
	if opts.dataDir == "" {
		opts.dataDir = t.TempDir()
	}
	if opts.venv == "" {
		opts.venv = defaultVenv(t)
	}
	port := opts.port
	if port == 0 {
		port = freePort(t)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	args := append(append([]string{"robot-daemon", "--sim", "--port", strconv.Itoa(port), "--data-dir", opts.dataDir},
		venvArgs(opts.venv)...), append([]string{"--hub-url", "none", "--stop-timeout", "1s", "--log-level", "debug"}, opts.args...)...)
	getenv := opts.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &daemon{t: t, url: url, dataDir: opts.dataDir, venv: opts.venv, log: &syncbuf.Buffer{}, cancel: cancel, done: make(chan error, 1)}
	stdout := opts.stdout
	if stdout == nil {
		stdout = io.Discard
	}
	mu := venvLock(opts.venv)
	mu.Lock()
	defer mu.Unlock()
	go func() { d.done <- robotdaemon.Run(ctx, args, getenv, stdout, d.log) }()
	t.Cleanup(func() {
		d.stop()
		if t.Failed() {
			t.Logf("daemon log:\n%s", d.log.String())
		}
	})
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				d.token = ownerToken(t, opts.dataDir, args, getenv)
				return d
			}
		}
		select {
		case err := <-d.done:
			t.Fatalf("daemon exited before serving: %v\n%s", err, d.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon did not serve /healthz\n%s", d.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// skipShort skips a test that runs the whole daemon with its Python apps venv under -short (make
// check): those tests run in make test.
func skipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the whole daemon with its Python apps venv: not under -short")
	}
}

// ownerToken is the owner's token of a daemon started with args on dataDir: its --token, else the
// token of its environment, else the file it made on first start ("" with --no-auth).
func ownerToken(t testing.TB, dataDir string, args []string, getenv func(string) string) string {
	t.Helper()
	for i, a := range args {
		switch {
		case a == "--no-auth":
			return ""
		case (a == "--token" || a == "--api-token") && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "--token="):
			return strings.TrimPrefix(a, "--token=")
		}
	}
	if getenv != nil && getenv("ROBOT_DAEMON_TOKEN") != "" {
		return strings.TrimSpace(getenv("ROBOT_DAEMON_TOKEN"))
	}
	data, err := os.ReadFile(filepath.Join(dataDir, "api-token"))
	if err != nil {
		t.Fatalf("the daemon's token: %v", err)
	}
	return strings.TrimSpace(string(data))
}

// authorize sends the owner's token with req, unless it carries a credential of its own.
func (d *daemon) authorize(req *http.Request) *http.Request {
	if d.token != "" && req.Header.Get("Authorization") == "" && req.Header.Get("Cookie") == "" {
		req.Header.Set("Authorization", "Bearer "+d.token)
	}
	return req
}

// do sends req as the daemon's owner (with its token).
func (d *daemon) do(req *http.Request) (*http.Response, error) {
	return http.DefaultClient.Do(d.authorize(req))
}

// get is http.Get of the daemon's path, as its owner.
func (d *daemon) get(path string) (*http.Response, error) {
	req, err := http.NewRequest("GET", d.url+path, nil)
	if err != nil {
		return nil, err
	}
	return d.do(req)
}

// post is http.Post to the daemon's path, as its owner.
func (d *daemon) post(path, contentType string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequest("POST", d.url+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	return d.do(req)
}

// loginURL is the link the daemon prints for its owner's browser: it logs in (a cookie) and opens
// the dashboard.
func (d *daemon) loginURL() string {
	return d.url + "/login?token=" + url.QueryEscape(d.token)
}

// ownerEnv is what a client of the daemon started by a test needs in its environment, as the
// owner's scripts find it: the daemon's URL, and where its token file is (the SDK reads it, as
// it reads <data-dir>/api-token of the default data dir); the token itself for a server without
// a data dir.
func (d *daemon) ownerEnv() []string {
	file := filepath.Join(d.dataDir, "api-token")
	if data, err := os.ReadFile(file); err == nil && d.dataDir != "" && d.token != "" && strings.TrimSpace(string(data)) == d.token {
		return []string{"ROBOT_DAEMON_URL=" + d.url, "ROBOT_DAEMON_TOKEN=", "ROBOT_DAEMON_TOKEN_FILE=" + file}
	}
	return []string{"ROBOT_DAEMON_URL=" + d.url, "ROBOT_DAEMON_TOKEN=" + d.token}
}

// serverOptions configure startServer.
type serverOptions struct {
	token       string        // default: a random one, which the helpers send
	noAuth      bool          // --no-auth
	bodyTimeout time.Duration // --body-timeout
	asleep      bool          // --no-wake-up-on-start
	moves       robotd.MoveLibraries
	updater     updateapi.Updater // the daemon's own updates (nil: none)
}

// startServer serves the daemon's HTTP API (robotd.NewServer, on a real loopback listener, with the
// daemon's ConnContext so that peers are looked up as the daemon does) over in-memory apps and the
// simulated robot: for the tests of the API that need no Python. It is up when it returns.
func startServer(t testing.TB, opts serverOptions) *daemon {
	t.Helper()
	logBuf := &syncbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.token == "" && !opts.noAuth {
		opts.token = rand.Text()
	}
	rb := robot.New(robot.NewSim(), log.With("component", "robot"))
	mem := newMemApps(rb)
	done := make(chan struct{})
	handler := robotd.NewServer(robotd.ServerConfig{Apps: mem, Robot: rb, Log: log.With("component", "http"), Token: opts.token,
		NoAuth: opts.noAuth, BodyTimeout: opts.bodyTimeout, Version: "test", LoopbackOnly: true, Done: done, MoveLibraries: opts.moves,
		Updater: opts.updater})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler, ConnContext: handler.ConnContext, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(handler.Listener(ln)) }()
	ctx, cancel := context.WithCancel(context.Background())
	d := &daemon{t: t, url: "http://" + ln.Addr().String(), token: opts.token, log: logBuf, cancel: cancel, done: make(chan error, 1), apps: mem, rb: rb, server: handler}
	go func() {
		<-ctx.Done()
		close(done) // ends the streams, as the daemon does before it shuts its server down
		sctx, cancelShutdown := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancelShutdown()
		// As the daemon does, connections still open after 5 s are closed, not an error.
		if err := srv.Shutdown(sctx); err != nil {
			log.Warn("closing connections", "err", err)
			srv.Close()
		}
		var err error
		if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
			err = serr
		}
		rb.Close()
		d.done <- err
	}()
	t.Cleanup(func() {
		d.stop()
		if t.Failed() {
			t.Logf("server log:\n%s", logBuf.String())
		}
	})
	if !opts.asleep {
		rb.WakeUp()
	}
	return d
}

// stop shuts the daemon down as SIGTERM would and waits for it.
func (d *daemon) stop() {
	if d.cancel == nil {
		return
	}
	d.cancel()
	d.cancel = nil
	select {
	case err := <-d.done:
		if err != nil {
			d.t.Errorf("daemon exited with %v", err)
		}
	case <-time.After(30 * time.Second):
		d.t.Error("daemon did not shut down")
	}
}

// call makes a request as the owner and decodes the JSON answer into out (when not nil); it returns
// the status. headers are name, value pairs; "Authorization", "" sends no credential at all.
func (d *daemon) call(method, path string, body any, out any, headers ...string) int {
	d.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, _ := json.Marshal(b)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, d.url+path, rd)
	if err != nil {
		d.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	anonymous := false
	for i := 0; i+1 < len(headers); i += 2 {
		switch {
		case headers[i] == "Host":
			req.Host = headers[i+1]
			continue
		case headers[i] == "Authorization" && headers[i+1] == "":
			anonymous = true
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	if !anonymous {
		d.authorize(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	checkOpenAPI(d.t, req, resp.StatusCode, resp.Header, data)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			d.t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, data, err)
		}
	}
	return resp.StatusCode
}

// detail is the daemon's error body.
type detail struct {
	Detail string `json:"detail"`
}

// expectError checks a request's status and detail.
func (d *daemon) expectError(method, path string, body any, code int, want string, headers ...string) {
	d.t.Helper()
	var got detail
	status := d.call(method, path, body, &got, headers...)
	if status != code || !strings.Contains(got.Detail, want) {
		d.t.Errorf("%s %s: %d %q, want %d with %q", method, path, status, got.Detail, code, want)
	}
}

type appStatus struct {
	Info struct {
		Name  string `json:"name"`
		Extra struct {
			CustomAppURL *string `json:"custom_app_url"`
			Version      string  `json:"version"`
		} `json:"extra"`
	} `json:"info"`
	State string  `json:"state"`
	Error *string `json:"error"`
}

func (d *daemon) status() *appStatus {
	d.t.Helper()
	var st *appStatus
	d.call("GET", "/api/apps/current-app-status", nil, &st)
	return st
}

// waitState waits until the current app is in one of states.
func (d *daemon) waitState(timeout time.Duration, states ...string) *appStatus {
	d.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st := d.status()
		for _, s := range states {
			if st != nil && st.State == s {
				return st
			}
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("current app status %+v, want one of %v", st, states)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type jobInfo struct {
	ID     string   `json:"id"`
	Status string   `json:"status"`
	Error  *string  `json:"error"`
	Apps   []string `json:"apps"`
	Logs   []string `json:"logs"`
}

// waitJob polls a job until it finishes.
func (d *daemon) waitJob(id string) jobInfo {
	d.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var j jobInfo
		if code := d.call("GET", "/api/apps/job-status/"+id, nil, &j); code != 200 {
			d.t.Fatalf("job-status %s: %d", id, code)
		}
		if j.Status == "done" || j.Status == "failed" {
			return j
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("job %s still %s", id, j.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type appInfo struct {
	Name  string `json:"name"`
	URL   string `json:"url"`
	Extra struct {
		Version      string  `json:"version"`
		Source       string  `json:"source"`
		Revision     string  `json:"revision"`
		CustomAppURL *string `json:"custom_app_url"`
		LastUpdate   *struct {
			Status   string `json:"status"`
			Revision string `json:"revision"`
			Error    string `json:"error"`
			Finished string `json:"finished_at"`
		} `json:"last_update"`
	} `json:"extra"`
}

func (d *daemon) list() map[string]appInfo {
	d.t.Helper()
	var list []appInfo
	if code := d.call("GET", "/api/apps/list", nil, &list); code != 200 {
		d.t.Fatalf("list: %d", code)
	}
	out := map[string]appInfo{}
	for _, a := range list {
		out[a.Name] = a
	}
	return out
}

// install installs a test app through the API, unless it is installed already.
func (d *daemon) install(names ...string) {
	d.t.Helper()
	have := d.list()
	for _, name := range names {
		if _, ok := have[name]; !ok {
			d.reinstall(name)
		}
	}
}

// reinstall installs test apps through the API, whether they are installed or not.
func (d *daemon) reinstall(names ...string) {
	d.t.Helper()
	for _, name := range names {
		var created struct {
			JobID string `json:"job_id"`
		}
		if code := d.call("POST", "/api/apps/install", map[string]string{"url": testdataApp(name)}, &created); code != 200 {
			d.t.Fatalf("install %s: %d", name, code)
		}
		if j := d.waitJob(created.JobID); j.Status != "done" {
			d.t.Fatalf("install %s: %s %v\n%s", name, j.Status, j.Error, strings.Join(j.Logs, "\n"))
		}
	}
}

type robotState struct {
	HeadPose struct {
		Yaw   float64 `json:"yaw"`
		Pitch float64 `json:"pitch"`
	} `json:"head_pose"`
	Antennas       [2]float64 `json:"antennas_position"`
	TargetAntennas [2]float64 `json:"target_antennas_position"`
	TargetHead     struct {
		Yaw float64 `json:"yaw"`
	} `json:"target_head_pose"`
	ControlMode string    `json:"control_mode"`
	Awake       bool      `json:"awake"`
	Timestamp   time.Time `json:"timestamp"`
	Move        *struct {
		Kind string `json:"kind"`
	} `json:"move"`
}

func (d *daemon) robot() robotState {
	d.t.Helper()
	var s robotState
	d.call("GET", "/api/state/full", nil, &s)
	return s
}

func (d *daemon) waitRobot(timeout time.Duration, what string, cond func(robotState) bool) robotState {
	d.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := d.robot()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("robot never %s: %+v", what, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type slotInfo struct {
	Slot struct {
		State  string `json:"state"`
		Holder string `json:"holder"`
	} `json:"slot"`
	Sessions []struct {
		Kind   string `json:"kind"`
		Client string `json:"client"`
	} `json:"sessions"`
	Version    string `json:"version"`
	SDKVersion string `json:"sdk_version"`
	RobotAwake bool   `json:"robot_awake"`
}

func (d *daemon) daemonStatus() slotInfo {
	d.t.Helper()
	var s slotInfo
	d.call("GET", "/api/daemon/status", nil, &s)
	return s
}

// runningPID reads the running app's PID (its process group) from the daemon's data dir.
func (d *daemon) runningPID() int {
	d.t.Helper()
	var ra struct {
		PID int `json:"pid"`
	}
	data, err := os.ReadFile(filepath.Join(d.dataDir, "running-app.json"))
	if err != nil {
		d.t.Fatalf("no running-app file: %v", err)
	}
	_ = json.Unmarshal(data, &ra)
	return ra.PID
}

// groupPIDs lists the live processes of process group pgid.
func groupPIDs(pgid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(data)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			pids = append(pids, pid)
		}
	}
	return pids
}

func processAlive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// clientVenv is the venv whose Python runs a client of d: d's apps venv (which has the SDK), the
// shared one for a server without one.
func (d *daemon) clientVenv() string {
	if d.venv != "" {
		return d.venv
	}
	return sharedVenv
}

// venvPython runs a Python script with the apps venv's interpreter, as a client of daemon d.
func venvPython(d *daemon, script string, env ...string) (string, error) {
	d.t.Helper()
	cmd := exec.Command(filepath.Join(d.clientVenv(), "bin", "python"), "-c", script)
	cmd.Env = append(append(os.Environ(), d.ownerEnv()...), env...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func allPIDs() []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var pids []int
	for _, d := range dirs {
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil && processAlive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func readCmdline(pid int) string {
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.ReplaceAll(string(data), "\x00", " ")
}

// sseEvent is one server-sent event as a client receives it.
type sseEvent struct {
	event, data string
	at          time.Time
}

// readEvents reads server-sent events until max events (0: until the stream ends) or timeout.
func readEvents(t testing.TB, resp *http.Response, max int, timeout time.Duration) []sseEvent {
	t.Helper()
	var events []sseEvent
	done := make(chan struct{})
	go func() {
		defer close(done)
		var cur sseEvent
		buf := make([]byte, 0, 4096)
		chunk := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(chunk)
			buf = append(buf, chunk[:n]...)
			for {
				i := bytes.IndexByte(buf, '\n')
				if i < 0 {
					break
				}
				line := string(buf[:i])
				buf = buf[i+1:]
				switch {
				case line == "":
					if cur.data != "" || cur.event != "" {
						cur.at = time.Now()
						events = append(events, cur)
						cur = sseEvent{}
						if max > 0 && len(events) >= max {
							return
						}
					}
				case strings.HasPrefix(line, "event: "):
					cur.event = strings.TrimPrefix(line, "event: ")
				case strings.HasPrefix(line, "data: "):
					cur.data = strings.TrimPrefix(line, "data: ")
				}
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(timeout):
		resp.Body.Close()
		<-done
		t.Fatalf("read %d events before the %v timeout", len(events), timeout)
	}
	if len(events) == 0 {
		t.Fatal("no events")
	}
	return events
}

// pythonCommand prepares the apps venv's interpreter running script, in the test's environment, as
// a client of daemon d.
func pythonCommand(d *daemon, script string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(d.clientVenv(), "bin", "python"), "-u", "-c", script)
	cmd.Env = append(os.Environ(), d.ownerEnv()...)
	return cmd
}

// stopApp stops the current app as a client of the public daemon does: the answer is null once the
// app has exited; how it ended (state, and the error if any) is read from the daemon's log.
func (d *daemon) stopApp() (state, errText string) {
	d.t.Helper()
	const stopped = `msg="app stopped"`
	before := strings.Count(d.log.String(), stopped)
	var body json.RawMessage
	if code := d.call("POST", "/api/apps/stop-current-app", nil, &body); code != http.StatusOK || string(body) != "null" {
		d.t.Fatalf("stop-current-app: %d %s, want 200 null", code, body)
	}
	// The daemon logs the stop before it answers, but a daemon run as a process writes its log
	// through a pipe the test copies on its own: the line may come a moment after the answer.
	logText := d.log.String()
	for deadline := time.Now().Add(5 * time.Second); strings.Count(logText, stopped) == before; logText = d.log.String() {
		if time.Now().After(deadline) {
			d.t.Fatalf("the daemon did not log the stop:\n%s", logText)
		}
		time.Sleep(10 * time.Millisecond)
	}
	i := strings.LastIndex(logText, stopped)
	line, _, _ := strings.Cut(logText[i:], "\n")
	rec := map[string]string{}
	for _, m := range regexp.MustCompile(`(\w+)=("(?:[^"\\]|\\.)*"|\S+)`).FindAllStringSubmatch(line, -1) {
		v := m[2]
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		}
		rec[m[1]] = v
	}
	return rec["state"], rec["err"]
}
