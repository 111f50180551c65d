package robotd_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/syncbuf"
)

// What a hub delivers on a user's behalf never has the daemon's local trust (issue 20, item 1):
// the headers of a delivery, from the daemon's own user on loopback, need the token.
func TestHubDeliveryHeadersNeedTheToken(t *testing.T) {
	const token = "hub-relay-token-0123456789abcdef"
	d := startServer(t, serverOptions{token: token})
	d.install("coop_app")
	d.waitRobot(10*time.Second, "awake", func(s robotState) bool { return s.Awake && s.Move == nil })
	relays := map[string][]string{
		"the local hub's delivery":    {"User-Agent", "robothub-hubemu", "X-Webhook-Secret", "dev-secret"},
		"a delivery without a secret": {"User-Agent", "robothub-hubemu"},
		"the hub's secret header":     {"X-Webhook-Secret", "dev-secret"},
		"another X-Webhook- header":   {"X-Webhook-Id", "6571a3f0c9d2e4b1a8f0def0"},
		"a receiver's forward: route": {"User-Agent", "robothub-forward/dev"},
	}
	for what, headers := range relays {
		d.expectError("POST", "/api/move/play/goto_sleep", "{}", 401, "acts for a hub user", append(headers, "Authorization", "")...)
		d.expectError("POST", "/api/apps/remove/coop_app", "{}", 401, "acts for a hub user", append(headers, "Authorization", "")...)
		d.expectError("POST", "/api/move/play/goto_sleep", "{}", 401, "acts for a hub user", append(headers, "Authorization", "Bearer wrong")...)
		if t.Failed() {
			t.Fatalf("%s: %v got through", what, headers)
		}
	}
	if s := d.robot(); !s.Awake {
		t.Fatal("a delivery put the robot to sleep")
	}
	if _, ok := d.list()["coop_app"]; !ok {
		t.Fatal("a delivery removed coop_app")
	}
	// With the daemon's token (a receiver's robot-update route sends it) the request is served.
	if code := d.call("POST", "/api/move/play/goto_sleep", nil, nil, "X-Webhook-Secret", "dev-secret", "Authorization", "Bearer "+token); code != 200 {
		t.Fatalf("a relay with the daemon's token: %d", code)
	}
}

// --no-auth lets every local user in, but not a hub user: a delivery has no token to send.
func TestHubDeliveryIsRefusedWithNoAuth(t *testing.T) {
	d := startServer(t, serverOptions{noAuth: true})
	d.expectError("POST", "/api/move/play/goto_sleep", nil, 401, "acts for a hub user", "User-Agent", "robothub-hubemu", "X-Webhook-Secret", "s", "Authorization", "")
	if code := d.call("POST", "/api/move/play/goto_sleep", nil, nil); code != 200 {
		t.Fatalf("--no-auth, a local client: %d", code)
	}
}

// builtBinaries builds robot-daemon and robothub (the front, with robothub-server beside it) once
// for the tests that attack the built programs.
var builtBinaries = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp(filepath.Dir(sharedVenv), "bin-")
	if err != nil {
		return "", err
	}
	for _, pkg := range []string{"./cmd/robot-daemon", "../cli/robothub", "../cli/robothub-server"} {
		if out, err := exec.Command("go", "build", "-o", dir, pkg).CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return dir, nil
})

func binary(t *testing.T, name string) string {
	t.Helper()
	dir, err := builtBinaries()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

// startDaemonBinary runs the built robot-daemon --sim on the shared apps venv and waits for /healthz.
func startDaemonBinary(t *testing.T, args ...string) *daemon {
	t.Helper()
	skipShort(t)
	port := freePort(t)
	d := &daemon{t: t, url: fmt.Sprintf("http://127.0.0.1:%d", port), dataDir: t.TempDir(), log: &syncbuf.Buffer{}}
	all := append(append([]string{"--sim", "--port", strconv.Itoa(port), "--data-dir", d.dataDir,
		"--hub-url", "none", "--stop-timeout", "1s", "--log-level", "debug"}, venvArgs(sharedVenv)...), args...)
	cmd := exec.Command(binary(t, "robot-daemon"), all...)
	cmd.Stdout, cmd.Stderr = io.Discard, d.log
	mu := venvLock(sharedVenv)
	mu.Lock()
	defer mu.Unlock()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.pid = cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		<-exited
		if t.Failed() {
			t.Logf("robot-daemon log:\n%s", d.log.String())
		}
	})
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := d.get("/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK { // 503 while it sets up the robot and the apps venv
				d.token = ownerToken(t, d.dataDir, all, nil)
				return d
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("robot-daemon exited: %v\n%s", err, d.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("robot-daemon did not serve\n%s", d.log.String())
		}
	}
}

// The attack of issue 20, item 1, through the built programs: a hub user makes a webhook whose
// URL is the daemon's API on loopback and emits an event; the local hub (robothub hub serve, run
// as the daemon's own user, as robothub dev runs it) delivers it. The daemon refuses it and the
// robot neither sleeps nor loses its app; the refusal is what the hub user sees in the activity.
// The hub's own refusal of loopback targets (when it has one) is the hub's defence; this test
// holds without it: where the hub refuses the target, the delivery's exact request is replayed.
func TestLocalHubDeliveryDoesNotDriveTheRobot(t *testing.T) {
	d := startDaemonBinary(t)
	d.install("coop_app")
	d.waitRobot(10*time.Second, "awake", func(s robotState) bool { return s.Awake && s.Move == nil })

	for _, target := range []string{"/api/move/play/goto_sleep", "/api/apps/remove/coop_app"} {
		statuses := hubDeliveries(t, d.url+target)
		for _, st := range statuses {
			if st.Status != 401 || !strings.Contains(st.Response, "acts for a hub user") {
				t.Errorf("delivery to %s: %d %q, want the daemon's 401", target, st.Status, st.Response)
			}
		}
	}
	if s := d.robot(); !s.Awake {
		t.Fatal("a hub delivery put the robot to sleep")
	}
	if _, ok := d.list()["coop_app"]; !ok {
		t.Fatal("a hub delivery removed coop_app")
	}
}

// deliveryAttempt is one attempt of a delivery, as the hub's activity view shows it.
type deliveryAttempt struct {
	Status   int    `json:"status"`
	Response string `json:"response"`
	Error    string `json:"error"`
}

// hubDeliveries runs a local hub whose webhook (of its user local, with a secret) delivers to url,
// emits a push on local's repo, and returns the recorded attempts. When the hub refuses url as a
// target, the delivery is made as the hub makes it (its method, headers and a payload).
func hubDeliveries(t *testing.T, url string) []deliveryAttempt {
	t.Helper()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	hubCmd := exec.Command(binary(t, "robothub"), "hub", "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--token-file", tokenFile,
		"--bootstrap-webhook", url, "--bootstrap-secret", "bobs-secret", "--delivery-attempts", "1")
	stdout, err := hubCmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	hubLog := &syncbuf.Buffer{}
	hubCmd.Stderr = hubLog
	if err := hubCmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = hubCmd.Process.Signal(os.Interrupt)
		_ = hubCmd.Wait()
		if t.Failed() {
			t.Logf("hub log:\n%s", hubLog.String())
		}
	}()
	var endpoint, webhookID string
	sc := bufio.NewScanner(stdout)
	for (endpoint == "" || webhookID == "") && sc.Scan() {
		if m := regexp.MustCompile(`^export HF_ENDPOINT=(\S+)`).FindStringSubmatch(sc.Text()); m != nil {
			endpoint = m[1]
		}
		if m := regexp.MustCompile(`^# webhook (\S+) \(created\)`).FindStringSubmatch(sc.Text()); m != nil {
			webhookID = m[1]
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if webhookID == "" {
		// The hub refused the loopback target itself (its own defence): send the daemon what its
		// delivery would send, so that the daemon's defence is tested all the same.
		t.Logf("the hub made no webhook to %s (%s); replaying a delivery's request", url, strings.TrimSpace(hubLog.String()))
		return []deliveryAttempt{replayDelivery(t, url)}
	}
	data, _ := os.ReadFile(tokenFile)
	hubToken := strings.TrimSpace(string(data))
	emit := exec.Command(binary(t, "robothub"), "hub", "emit", "--repo", "model:local/demo")
	emit.Env = append(os.Environ(), "HF_ENDPOINT="+endpoint, "HF_TOKEN="+hubToken)
	if out, err := emit.CombinedOutput(); err != nil {
		t.Fatalf("hub emit: %v\n%s", err, out)
	}
	var activity struct {
		Deliveries []struct {
			State    string            `json:"state"`
			Attempts []deliveryAttempt `json:"attempts"`
		} `json:"deliveries"`
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		req, _ := http.NewRequest("GET", endpoint+"/api/emulator/webhooks/"+webhookID+"/activity", nil)
		req.Header.Set("Authorization", "Bearer "+hubToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&activity)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(activity.Deliveries) > 0 && activity.Deliveries[0].State != "pending" && len(activity.Deliveries[0].Attempts) > 0 {
			return activity.Deliveries[0].Attempts
		}
		if time.Now().After(deadline) {
			t.Fatalf("the delivery was not attempted: %+v", activity)
		}
	}
}

// replayDelivery sends url what the local hub's delivery sends (internal/hubemu's send).
func replayDelivery(t *testing.T, url string) deliveryAttempt {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"model","name":"local/demo"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "robothub-hubemu")
	req.Header.Set("X-Webhook-Secret", "bobs-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return deliveryAttempt{Status: resp.StatusCode, Response: string(body)}
}
