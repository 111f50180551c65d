package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHubUserCannotDriveTheRobot is issue 20's first attack, run through the built binaries: the
// local hub (robothub hub serve) and the simulated robot (robot-daemon --sim) run as one user, as
// make run has them. bob, a hub user with a write token, makes a webhook whose URL is the daemon's
// goto_sleep move and emits an event on his own repo. The daemon trusts loopback clients of its own
// user, so a hub that delivered there would put the robot to sleep on bob's say. The robot stays
// awake, and bob's activity view says why nothing was sent.
func TestHubUserCannotDriveTheRobot(t *testing.T) {
	if testing.Short() {
		t.Skip("builds robot-daemon and makes its apps venv")
	}
	work := t.TempDir()
	daemon := filepath.Join(work, "robot-daemon")
	if out, err := exec.Command("go", "build", "-o", daemon, "github.com/robothub/robothub/robotd/cmd/robot-daemon").CombinedOutput(); err != nil {
		t.Fatalf("go build robot-daemon: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	daemonURL := "http://127.0.0.1:" + strconv.Itoa(port)
	robot := exec.Command(daemon, "--sim", "--port", strconv.Itoa(port), "--data-dir", filepath.Join(work, "robot"), "--hub-url", "none")
	robot.Env = append(os.Environ(), "ROBOT_DAEMON_URL="+daemonURL)
	rp := runHubProcess(t, robot)
	// still: the robot is awake and no move runs. A move the daemon started (goto_sleep answers
	// once it has) is running until it ends asleep, so still() after the delivery was recorded is
	// false at any moment if the hub delivered.
	get := func(path string, v any) bool {
		token, err := os.ReadFile(filepath.Join(work, "robot", "api-token"))
		if err != nil {
			return false // not made yet
		}
		req, _ := http.NewRequest("GET", daemonURL+path, nil)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == 200 && json.NewDecoder(resp.Body).Decode(v) == nil
	}
	still := func() bool {
		var st struct {
			RobotAwake bool `json:"robot_awake"`
		}
		var running []any
		return get("/api/daemon/status", &st) && st.RobotAwake && get("/api/move/running", &running) && len(running) == 0
	}
	for deadline := time.Now().Add(2 * time.Minute); !still(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) || rp.cmd.ProcessState != nil {
			t.Fatal("the robot daemon did not start with the robot awake and still")
		}
	}

	hubDir := filepath.Join(work, "hub")
	hp := startHubProcess(t, nil, "--addr", "127.0.0.1:0", "--data-dir", hubDir, "--retry-delay", "20ms")
	endpoint := hp.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)
	code, out, errOut := runCLI(t, nil, "", "hub", "token", "create", "--user", "bob", "--data-dir", hubDir, "--format", "quiet")
	if code != 0 {
		t.Fatalf("token create: %d %s %s", code, out, errOut)
	}
	bob := strings.TrimSpace(out)

	status, body := hubAPI(t, endpoint, bob, "POST", "/api/settings/webhooks",
		fmt.Sprintf(`{"url":%q,"watched":[{"type":"user","name":"bob"}],"domains":["repo"]}`, daemonURL+"/api/move/play/goto_sleep"))
	if status != 200 {
		t.Fatalf("bob's webhook: %d %s", status, body)
	}
	var wh struct{ Webhook struct{ ID string } }
	_ = json.Unmarshal([]byte(body), &wh)
	if status, body := hubAPI(t, endpoint, bob, "POST", "/api/emulator/events", `{"repo":"model:bob/anything","scope":"repo.content","action":"update"}`); status != 200 {
		t.Fatalf("emit: %d %s", status, body)
	}

	var activity struct {
		Deliveries []struct {
			State     string
			LastError string
			Attempts  []struct{ Status int }
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, body := hubAPI(t, endpoint, bob, "GET", "/api/emulator/webhooks/"+wh.Webhook.ID+"/activity", "")
		_ = json.Unmarshal([]byte(body), &activity)
		if len(activity.Deliveries) == 1 && activity.Deliveries[0].State != "pending" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the delivery is still pending: %s", body)
		}
	}
	d := activity.Deliveries[0]
	if !still() {
		t.Errorf("the robot moved (goto_sleep) on a hub user's webhook (delivery %s, attempts %+v)", d.State, d.Attempts)
	}
	if d.State != "failed" || len(d.Attempts) != 1 || d.Attempts[0].Status != 0 ||
		!strings.Contains(d.LastError, fmt.Sprintf("refused: 127.0.0.1:%d is a loopback address", port)) {
		t.Errorf("bob's activity: %s after %d attempts, error %q; want one refused attempt that says why", d.State, len(d.Attempts), d.LastError)
	}
}

// TestCommitAPIRefusesPathsGitFlags is issue 20's note on the commit API, run through the built
// robothub hub serve: a commit that adds a file under a name git or a client on macOS or Windows
// reads as .git or .gitmodules (which would configure, or run programs in, the git of whoever
// clones the space) is refused with a 400 that names the path, and the space does not move.
func TestCommitAPIRefusesPathsGitFlags(t *testing.T) {
	hp := startHubProcess(t, nil, "--addr", "127.0.0.1:0", "--db", ":memory:")
	endpoint := hp.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)
	token := hp.waitFor(t, `(?m)^export HF_TOKEN=(\S+)$`)
	if status, body := hubAPI(t, endpoint, token, "POST", "/api/repos/create", `{"name":"wave","type":"space","sdk":"static"}`); status != 200 {
		t.Fatalf("create: %d %s", status, body)
	}
	commit := func(path string) (int, string) {
		header, _ := json.Marshal(map[string]any{"key": "header", "value": map[string]string{"summary": "add " + path}})
		file, _ := json.Marshal(map[string]any{"key": "file", "value": map[string]string{"path": path, "encoding": "utf-8", "content": "[core]\n\tfsmonitor = touch /tmp/pwned\n"}})
		return hubAPI(t, endpoint, token, "POST", "/api/spaces/local/wave/commit/main", string(header)+"\n"+string(file)+"\n")
	}
	if status, body := commit("README.md"); status != 200 {
		t.Fatalf("a plain commit: %d %s", status, body)
	}
	head := func() string {
		_, body := hubAPI(t, endpoint, token, "GET", "/api/spaces/local/wave", "")
		var info struct{ SHA string }
		_ = json.Unmarshal([]byte(body), &info)
		return info.SHA
	}
	before := head()
	for _, p := range []string{".git\u200c/config", "\u00a0.git/config", "git~1/config", ".gitmodules", `a\.git\config`,
		".git::$INDEX_ALLOCATION/config", "sub/.GIT. /hooks/post-checkout", "\ufeff.gitmodules", "gitmod~1"} {
		status, body := commit(p)
		if status != 400 || !strings.Contains(body, strings.Trim(strconv.Quote(strconv.Quote(p)), `"`)) {
			t.Errorf("commit of %q: %d %s; want 400 naming the path", p, status, body)
		}
	}
	if after := head(); after != before {
		t.Errorf("the space moved from %s to %s on refused commits", before, after)
	}
	for _, p := range []string{".gitattributes", ".github/x.yml", "my.git/x"} {
		if status, body := commit(p); status != 200 {
			t.Errorf("commit of %q: %d %s; want 200", p, status, body)
		}
	}
}
