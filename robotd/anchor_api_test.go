package robotd_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

type fullStateM struct {
	HeadPose       json.RawMessage `json:"head_pose"`
	TargetHeadPose struct {
		Yaw, Pitch, Roll, X, Y, Z float64
	} `json:"target_head_pose"`
	TargetBodyYaw float64 `json:"target_body_yaw"`
}

func yawMatrix(deg float64) []float64 {
	c, s := math.Cos(deg*math.Pi/180), math.Sin(deg*math.Pi/180)
	return []float64{c, -s, 0, 0.01, s, c, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}
}

// A 4×4 matrix pose ({"m": [16]}), as anchor clients send it, moves the head where it says; a
// malformed pose is refused by name instead of driving the head to zero.
func TestMatrixPosesAndBadPoses(t *testing.T) {
	parallel(t)
	d := startServer(t, serverOptions{})
	// The daemon wakes the robot at start; a target set during that move is overridden by its next
	// step, as on the anchor's daemon. Set targets once the robot is awake and still.
	d.waitRobot(10*time.Second, "the robot awake and still", func(s robotState) bool { return s.Awake && s.Move == nil })
	if code := d.call("POST", "/api/move/set_target", map[string]any{"target_head_pose": map[string]any{"m": yawMatrix(30)}}, nil); code != 200 {
		t.Fatalf("set_target with a matrix: %d", code)
	}
	var st fullStateM
	d.call("GET", "/api/state/full", nil, &st)
	if math.Abs(st.TargetHeadPose.Yaw-math.Pi/6) > 1e-9 || math.Abs(st.TargetHeadPose.X-0.01) > 1e-12 {
		t.Fatalf("target after a 30° yaw matrix: %+v", st.TargetHeadPose)
	}
	var moved struct{ UUID string }
	if code := d.call("POST", "/api/move/goto", map[string]any{"head_pose": map[string]any{"m": yawMatrix(-20)}, "duration": 0.2, "interpolation": "ease_in_out"}, &moved); code != 200 || moved.UUID == "" {
		t.Fatalf("goto with a matrix and ease_in_out: %d", code)
	}
	d.waitRobot(3*time.Second, "the goto ended", func(s robotState) bool { return s.Move == nil })
	d.call("GET", "/api/state/full", nil, &st)
	if math.Abs(st.TargetHeadPose.Yaw+math.Pi/9) > 1e-9 {
		t.Fatalf("target after a goto to a -20° yaw matrix: %+v", st.TargetHeadPose)
	}
	var matrixState struct {
		HeadPose struct {
			M []float64 `json:"m"`
		} `json:"head_pose"`
	}
	if d.call("GET", "/api/state/full?use_pose_matrix=true", nil, &matrixState); len(matrixState.HeadPose.M) != 16 || matrixState.HeadPose.M[15] != 1 {
		t.Fatalf("use_pose_matrix: %+v", matrixState)
	}
	for _, c := range []struct {
		name string
		body any
		want string
	}{
		{"15 numbers", map[string]any{"target_head_pose": map[string]any{"m": make([]float64, 15)}}, "m: expected 16 numbers"},
		{"zero matrix", map[string]any{"target_head_pose": map[string]any{"m": make([]float64, 16)}}, "last row of a homogeneous pose matrix must be 0 0 0 1"},
		{"scaled", map[string]any{"target_head_pose": map[string]any{"m": []float64{2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1}}}, "not orthonormal"},
		{"unknown field", map[string]any{"target_head_pose": map[string]any{"yaw_deg": 30}}, `unknown pose field "yaw_deg"`},
		{"both shapes", map[string]any{"target_head_pose": map[string]any{"m": yawMatrix(0), "yaw": 1}}, "either m"},
		{"nested matrix", map[string]any{"target_head_pose": map[string]any{"m": [][]float64{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}}}, "m: expected 16 numbers"},
	} {
		d.expectError("POST", "/api/move/set_target", c.body, 422, c.want)
	}
	d.call("GET", "/api/state/full", nil, &st)
	if math.Abs(st.TargetHeadPose.Yaw+math.Pi/9) > 1e-6 {
		t.Fatalf("a refused pose changed the target: %+v", st.TargetHeadPose)
	}
	if code := d.call("POST", "/api/move/goto", map[string]any{"head_pose": map[string]any{"m": yawMatrix(10)}, "duration": 1, "interpolation": "ease"}, nil); code != 200 {
		t.Fatalf("goto with the former name ease: %d", code)
	}
	d.expectError("POST", "/api/move/goto", map[string]any{"antennas": []float64{0, 0}, "duration": 1, "interpolation": "bouncy"}, 422, "linear, minjerk, ease_in_out, cartoon")
}

// The startup app follows the anchor's rules: an app that is not installed is refused with 400,
// and {} clears the setting as null does.
func TestStartupAppRules(t *testing.T) {
	d := startServer(t, serverOptions{})
	d.install("coop_app")
	d.expectError("PUT", "/api/apps/startup-app", map[string]any{"startup_app": "nope"}, 400, "App 'nope' is not installed")
	var got struct {
		StartupApp *string `json:"startup_app"`
	}
	if code := d.call("PUT", "/api/apps/startup-app", map[string]any{"startup_app": "coop_app"}, &got); code != 200 || got.StartupApp == nil {
		t.Fatalf("set: %d %+v", code, got)
	}
	if code := d.call("PUT", "/api/apps/startup-app", map[string]any{}, &got); code != 200 || got.StartupApp != nil {
		t.Fatalf("{} must clear: %d %+v", code, got)
	}
	if d.call("GET", "/api/apps/startup-app", nil, &got); got.StartupApp != nil {
		t.Fatalf("after {}: %+v", got)
	}
}

// A startup-app.json that cannot be read is logged and treated as unset: the daemon serves.
func TestCorruptStartupConfigDoesNotStopTheDaemon(t *testing.T) {
	parallel(t)
	dataDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dataDir, "startup-app.json"), []byte(`{"startup_app": "coop_ap`), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, daemonOptions{dataDir: dataDir})
	var got struct {
		StartupApp *string `json:"startup_app"`
	}
	if code := d.call("GET", "/api/apps/startup-app", nil, &got); code != 200 || got.StartupApp != nil {
		t.Fatalf("startup app from a corrupt file: %d %+v", code, got)
	}
	if !strings.Contains(d.log.String(), "the saved startup app cannot be read") {
		t.Fatalf("the corrupt file was not logged:\n%s", d.log.String())
	}
}

// An SDK client holds no app slot: the anchor lets any number of them drive the robot beside its
// app. start-app and start-app/no-evict both start the app with a client connected, and its
// session lives on; a second app is refused, not the client.
func TestSDKClientsDoNotHoldTheAppSlot(t *testing.T) {
	d := startServer(t, serverOptions{})
	d.install("coop_app")
	var s, s2 struct{ ID, Kind string }
	if code := d.call("POST", "/api/sessions", map[string]any{"client": "notebook"}, &s); code != 200 || s.Kind != "remote" {
		t.Fatalf("session: %d %+v", code, s)
	}
	if code := d.call("POST", "/api/sessions", map[string]any{"client": "laptop"}, &s2); code != 200 || s2.Kind != "remote" {
		t.Fatalf("a second client's session: %d %+v, want it open beside the first", code, s2)
	}
	var st appStatus
	if code := d.call("POST", "/api/apps/start-app/coop_app/no-evict", nil, &st); code != 200 || st.Info.Name != "coop_app" {
		t.Fatalf("start-app/no-evict with SDK clients connected: %d %+v", code, st)
	}
	if code := d.call("POST", "/api/sessions/"+s.ID+"/heartbeat", nil, nil); code != 200 {
		t.Fatalf("the client's heartbeat after an app started: %d, want its session alive", code)
	}
	d.waitState(10*time.Second, "running")
	d.expectError("POST", "/api/apps/start-app/coop_app", nil, 400, "An app is already running")
	d.call("POST", "/api/apps/stop-current-app", nil, nil)
	if code := d.call("POST", "/api/apps/start-app/coop_app", nil, &st); code != 200 {
		t.Fatalf("start-app with SDK clients connected: %d", code)
	}
	d.call("POST", "/api/apps/stop-current-app", nil, nil)
	var current json.RawMessage
	if d.call("GET", "/api/apps/current-app-status", nil, &current); string(current) != "null" {
		t.Fatalf("current-app-status after stop: %s, want null", current)
	}
}

// The job websocket of the anchor: each log line as text, then {command, status, logs}, until the
// job ends; an unknown job gets {"error": "Job ID not found"}.
func TestJobWebSocket(t *testing.T) {
	d := startServer(t, serverOptions{})
	var created struct {
		JobID string `json:"job_id"`
	}
	d.call("POST", "/api/apps/install", map[string]string{"url": testdataApp("coop_app")}, &created)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(d.url, "http") + "/api/apps/ws/apps-manager/" + created.JobID + "?token=" + d.token
	conn, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	var texts int
	var last struct {
		Command string   `json:"command"`
		Status  string   `json:"status"`
		Logs    []string `json:"logs"`
	}
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
				t.Fatalf("websocket ended with %v", err)
			}
			break
		}
		if json.Unmarshal(data, &last) == nil && last.Status != "" {
			continue
		}
		texts++
	}
	if last.Command != "install" || last.Status != "done" || texts == 0 {
		t.Fatalf("last message %+v after %d log lines", last, texts)
	}
	conn2, _, err := websocket.Dial(ctx, strings.Replace(wsURL, created.JobID, "nope", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.CloseNow()
	_, data, err := conn2.Read(ctx)
	if err != nil || string(bytes.TrimSpace(data)) != `{"error":"Job ID not found"}` {
		t.Fatalf("unknown job: %s %v", data, err)
	}
}

// check-updates compares an app's installed revision with its space's head; update/{name}
// installs the new revision; the check then finds nothing to update.
func TestCheckUpdatesAndUpdateByName(t *testing.T) {
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
	var created struct {
		JobID string `json:"job_id"`
	}
	d.call("POST", "/api/apps/install", map[string]string{"url": h.URL + "/spaces/pollen/catalog_app"}, &created)
	if j := d.waitJob(created.JobID); j.Status != "done" {
		t.Fatalf("install: %s %v", j.Status, j.Error)
	}
	var updates struct {
		AppsWithUpdates []struct {
			AppName, SpaceID, InstalledSHA, LatestSHA string
		} `json:"apps_with_updates"`
		AppsChecked int `json:"apps_checked"`
	}
	updates.AppsWithUpdates = nil
	if code := d.call("GET", "/api/apps/check-updates?force=true", nil, &updates); code != 200 || updates.AppsChecked != 1 || len(updates.AppsWithUpdates) != 0 {
		t.Fatalf("check before any push: %d %+v", code, updates)
	}
	pushCommit(t, filepath.Join(h.root, "spaces", "pollen", "catalog_app"))
	if d.call("GET", "/api/apps/check-updates?force=true", nil, &updates); len(updates.AppsWithUpdates) != 1 {
		t.Fatalf("check after a push: %+v", updates)
	}
	d.call("POST", "/api/apps/update/catalog_app", nil, &created)
	if j := d.waitJob(created.JobID); j.Status != "done" {
		t.Fatalf("update/catalog_app: %s %v\n%s", j.Status, j.Error, strings.Join(j.Logs, "\n"))
	}
	updates.AppsWithUpdates = nil
	if d.call("GET", "/api/apps/check-updates", nil, &updates); len(updates.AppsWithUpdates) != 0 {
		t.Fatalf("check after the update: %+v", updates)
	}
	d.expectError("POST", "/api/apps/update/nope", nil, 404, "App 'nope' is not installed")
	d.expectError("GET", "/api/apps/check-updates?force=maybe", nil, 422, "force: must be true or false")
}

// pushCommit adds a commit to a bare repository.
func pushCommit(t *testing.T, bare string) {
	t.Helper()
	work := t.TempDir()
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	for _, args := range [][]string{
		{"clone", "-q", bare, work}, {"-C", work, "commit", "-q", "--allow-empty", "-m", "change"}, {"-C", work, "push", "-q", "origin", "HEAD"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// install-private-space reads the space with the daemon's hub token (sent to the hub only, never
// logged), and answers 401 when the daemon has none.
func TestInstallPrivateSpace(t *testing.T) {
	parallel(t)
	h := hub(t, map[string]string{"alice/catalog_app": testdataApp("catalog_app")})
	var mu sync.Mutex
	var auth []string
	inner := h.Config.Handler
	// The hub as the daemon sees it, noting the Authorization of each git request.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/spaces/") {
			mu.Lock()
			auth = append(auth, r.Header.Get("Authorization"))
			mu.Unlock()
		}
		inner.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	env := map[string]string{"HF_TOKEN": "hf_privatetoken123"}
	d := startDaemon(t, daemonOptions{args: []string{"--hub-url", proxy.URL}, getenv: func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}})
	d.expectError("POST", "/api/apps/install-private-space", map[string]string{"space_id": "not a space"}, 422, "is not <user>/<space>")
	var created struct {
		JobID string `json:"job_id"`
	}
	d.call("POST", "/api/apps/install-private-space", map[string]string{"space_id": "alice/catalog_app"}, &created)
	j := d.waitJob(created.JobID)
	if j.Status != "done" {
		t.Fatalf("install-private-space: %s %v\n%s", j.Status, j.Error, strings.Join(j.Logs, "\n"))
	}
	mu.Lock()
	sent := strings.Join(auth, " ")
	mu.Unlock()
	if !strings.Contains(sent, "Basic ") {
		t.Fatalf("git did not send the hub token: %q", sent)
	}
	if strings.Contains(d.log.String(), "hf_privatetoken123") || strings.Contains(strings.Join(j.Logs, "\n"), "hf_privatetoken123") {
		t.Fatal("the hub token appears in the daemon's log or the job's")
	}
	d.stop()
	noToken := map[string]string{"HF_TOKEN": "", "HF_TOKEN_PATH": filepath.Join(t.TempDir(), "none")}
	d2 := startDaemon(t, daemonOptions{args: []string{"--hub-url", proxy.URL}, getenv: func(k string) string {
		if v, ok := noToken[k]; ok {
			return v
		}
		return os.Getenv(k)
	}})
	d2.expectError("POST", "/api/apps/install-private-space", map[string]string{"space_id": "alice/catalog_app"}, 401, "no hub token")

	// A token in the body serves that install only (the dashboard's private-space form).
	mu.Lock()
	auth = nil
	mu.Unlock()
	d2.call("POST", "/api/apps/install-private-space", map[string]string{"space_id": "alice/catalog_app", "token": "hf_bodytoken456"}, &created)
	if j := d2.waitJob(created.JobID); j.Status != "done" {
		t.Fatalf("install-private-space with a token: %s %v\n%s", j.Status, j.Error, strings.Join(j.Logs, "\n"))
	} else if strings.Contains(strings.Join(j.Logs, "\n"), "hf_bodytoken456") {
		t.Fatal("the token of the request appears in the job's log")
	}
	mu.Lock()
	sent = strings.Join(auth, " ")
	mu.Unlock()
	if want := "Basic " + base64.StdEncoding.EncodeToString([]byte("user:hf_bodytoken456")); !strings.Contains(sent, want) {
		t.Fatalf("git did not send the request's token: %q", sent)
	}
	if strings.Contains(d2.log.String(), "hf_bodytoken456") {
		t.Fatal("the token of the request appears in the daemon's log")
	}
	if d2.call("POST", "/api/apps/remove/catalog_app", nil, &created) == 200 {
		d2.waitJob(created.JobID)
	}
}

// A daemon on a port other than 8000, with ROBOT_DAEMON_URL unset, puts its own URL into its apps'
// environment: the app connects and its SDK session joins the app.
func TestDaemonPutsItsURLIntoAppsEnvironment(t *testing.T) {
	unset := func(k string) string {
		if k == "ROBOT_DAEMON_URL" {
			return ""
		}
		return os.Getenv(k)
	}
	d := startDaemon(t, daemonOptions{getenv: unset})
	t.Setenv("ROBOT_DAEMON_URL", "") // what the app inherits from the daemon's process: nothing
	d.install("coop_app")
	var st appStatus
	if code := d.call("POST", "/api/apps/start-app/coop_app", nil, &st); code != 200 {
		t.Fatalf("start: %d", code)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var status struct {
			Sessions []struct{ Kind, App string } `json:"sessions"`
		}
		d.call("GET", "/api/daemon/status", nil, &status)
		if len(status.Sessions) == 1 && status.Sessions[0].Kind == "app" && status.Sessions[0].App == "coop_app" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the app did not connect to the daemon on its port: %+v\n%s", status, d.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	d.waitState(5*time.Second, "running")
	d.waitRobot(5*time.Second, "the app moves the antennas", func(s robotState) bool { return s.TargetAntennas != [2]float64{0, 0} })
	d.call("POST", "/api/apps/stop-current-app", nil, nil)
	if strings.Contains(d.log.String(), "apps will not reach this daemon") {
		t.Fatal("the daemon still warns that apps will not reach it")
	}
}

// The motion routes robot_sdk calls: look-at, motion recording, single motors, the camera.
func TestMotionRoutes(t *testing.T) {
	parallel(t)
	d := startServer(t, serverOptions{})
	var look struct {
		HeadPose struct{ Yaw, Pitch float64 } `json:"head_pose"`
		M        []float64                    `json:"m"`
		UUID     *string                      `json:"uuid"`
	}
	if code := d.call("POST", "/api/move/look_at_world", map[string]any{"x": 1, "y": 1, "z": 0, "duration": 0.2}, &look); code != 200 ||
		math.Abs(look.HeadPose.Yaw-math.Pi/4) > 1e-9 || look.UUID == nil || len(look.M) != 16 {
		t.Fatalf("look_at_world: %d %+v", code, look)
	}
	if code := d.call("POST", "/api/move/look_at_image", map[string]any{"u": 320, "v": 10, "perform_movement": false}, &look); code != 200 || look.HeadPose.Pitch >= 0 || look.UUID != nil {
		t.Fatalf("look_at_image of the top edge: %d %+v", code, look)
	}
	d.expectError("POST", "/api/move/look_at_image", map[string]any{"u": 9999, "v": 10}, 422, "u and v must be a pixel")
	d.expectError("POST", "/api/move/recording/stop", nil, 400, "motion recording is not started")
	d.call("POST", "/api/move/recording/start", nil, nil)
	d.call("POST", "/api/move/goto", map[string]any{"antennas": []float64{0.3, -0.3}, "duration": 0.2}, nil)
	d.waitRobot(5*time.Second, "the 0.2 s move ended", func(s robotState) bool { return s.Move == nil && s.Antennas == [2]float64{0.3, -0.3} })
	var rec struct {
		Frames []struct {
			Antennas [2]float64 `json:"antennas"`
		} `json:"frames"`
	}
	if d.call("POST", "/api/move/recording/stop", nil, &rec); len(rec.Frames) < 10 || rec.Frames[len(rec.Frames)-1].Antennas != [2]float64{0.3, -0.3} {
		t.Fatalf("recorded %d frames", len(rec.Frames))
	}
	var motors struct {
		Mode   string          `json:"mode"`
		Motors map[string]bool `json:"motors"`
	}
	if code := d.call("POST", "/api/motors/torque", map[string]any{"ids": []string{"left_antenna"}, "on": false}, &motors); code != 200 || motors.Motors["left_antenna"] || !motors.Motors["right_antenna"] {
		t.Fatalf("torque: %d %+v", code, motors)
	}
	d.expectError("POST", "/api/motors/torque", map[string]any{"ids": []string{"tail"}, "on": false}, 422, `motor "tail" is not one of`)
	d.call("POST", "/api/motors/torque", map[string]any{"on": true}, &motors)
	for name, on := range motors.Motors {
		if !on {
			t.Fatalf("after enabling all, %s is off", name)
		}
	}
	resp, err := d.get("/api/camera/frame")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.HasPrefix(data, []byte("P6\n640 480\n255\n")) || len(data) != len("P6\n640 480\n255\n")+640*480*3 {
		t.Fatalf("camera frame: %d bytes %q", len(data), data[:min(20, len(data))])
	}
	resp, err = d.get("/api/camera/frame?format=jpeg")
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(resp.Body)
	resp.Body.Close()
	if err != nil || img.Bounds().Dx() != 640 {
		t.Fatalf("jpeg frame: %v", err)
	}
	var antennas []float64
	if d.call("GET", "/api/state/present_antenna_joint_positions", nil, &antennas); len(antennas) != 2 {
		t.Fatalf("present antennas: %v", antennas)
	}
	var running []struct{ UUID string }
	if code := d.call("GET", "/api/move/running", nil, &running); code != 200 {
		t.Fatalf("running moves: %d", code)
	}
}

// The app store's listing of the hub's spaces answers for the hub when the hub fails, as the other
// routes that call it do: 503 naming a hub that cannot be reached, 502 one that answers an error;
// never the daemon's own 500.
func TestListAvailableFromAHubThatFailsNamesTheHub(t *testing.T) {
	parallel(t)
	down := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error": "internal error"}`, http.StatusInternalServerError)
	}))
	t.Cleanup(failing.Close)
	for _, c := range []struct {
		hub  string
		code int
		want string
	}{
		{down, 503, "the app catalog: the hub " + down + " cannot be reached"},
		{failing.URL, 502, "the app catalog: the hub " + failing.URL + " failed the listing"},
	} {
		d := startDaemon(t, daemonOptions{args: []string{"--hub-url", c.hub, "--preload-moves", "none"}})
		d.expectError("GET", "/api/apps/list-available/hf_space", nil, c.code, c.want)
		d.expectError("GET", "/api/apps/list-available/hf_space?refresh=true", nil, c.code, c.want)
	}
}
