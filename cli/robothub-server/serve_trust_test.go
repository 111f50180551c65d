package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/syncbuf"
)

// startServeProcess runs `robothub serve` as its own process (the program testscript puts on PATH)
// with exactly env, and waits until it listens; it returns the process and its base URL.
func startServeProcess(t *testing.T, env []string, args ...string) (*hubProcess, string) {
	t.Helper()
	bin, err := exec.LookPath("robothub")
	if err != nil {
		t.Fatalf("robothub is not on PATH (testscript puts it there): %v", err)
	}
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--tunnel", "none"}, args...)...)
	cmd.Env = env
	p := runHubProcess(t, cmd)
	return p, p.waitFor(t, `Webhook receiver listening on (http://\S+)`)
}

// waitForLog waits for re in the process's stderr (its log) and returns the whole log.
func (p *hubProcess) waitForLog(t *testing.T, re string) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if log := p.stderr.String(); rx.MatchString(log) {
			return log
		}
	}
	t.Fatalf("robothub did not log %q", re)
	return ""
}

// TestServeExecGetsNoCredentials: an exec: route's command (here env, which prints its
// environment into the receiver's log) gets PATH, HOME and what --exec-env names, and none of the
// credentials in the receiver's environment: the hub token, a cloud's keys, the daemon's token, an
// API key. On the old code it got them all but WEBHOOK_SECRET.
func TestServeExecGetsNoCredentials(t *testing.T) {
	home := t.TempDir()
	p, base := startServeProcess(t, []string{
		"PATH=/usr/bin:/bin", "HOME=" + home, "TZ=Europe/Paris", "WEBHOOK_SECRET=hush-canary-secret",
		"HF_TOKEN=hf_canary_hub_token", "AWS_SECRET_ACCESS_KEY=canary-aws-key", "ROBOT_DAEMON_TOKEN=canary-daemon-token",
		"OPENAI_API_KEY=canary-openai-key", "CI_NOTIFY_URL=https://ci.example.com/notify",
		"ROBOTHUB_EXEC_ENV=DEPLOY_ENV", "DEPLOY_ENV=staging",
	}, "--route", "env=exec:env", "--exec-env", "CI_NOTIFY_URL")
	if status, body := deliver(t, base+"/webhooks/env", "hush-canary-secret", pushPayload); status != 200 {
		t.Fatalf("exec route: %d %s", status, body)
	}
	log := p.waitForLog(t, `msg="command ran"`)
	for _, want := range []string{"PATH=/usr/bin:/bin", "HOME=" + home, "TZ=Europe/Paris", "CI_NOTIFY_URL=https://ci.example.com/notify",
		"DEPLOY_ENV=staging", "WEBHOOK_ROUTE=env", "WEBHOOK_REPO_NAME=alice/dance-app", "WEBHOOK_PAYLOAD="} {
		if !strings.Contains(log, want) {
			t.Errorf("the command's environment lacks %s:\n%s", want, log)
		}
	}
	if strings.Contains(log, "canary") {
		t.Errorf("a credential of the receiver's environment reached the command:\n%s", log)
	}
}

// TestForwardByNameDoesNotCarryTheDaemonsLocalTrust: a forward route whose URL names a host is a
// request made for a hub user's event, and must not reach, with this machine's loopback trust, the
// robot daemon that a name resolves to. The built robothub runs in a mount namespace whose
// /etc/hosts maps the daemon's own host name (a name the daemon answers to) to 127.0.0.1; a
// delivery to its route forward:http://<name>:<port>/api/move/play/goto_sleep is refused before any
// connection, naming the rule, and the robot stays awake. The same route with 127.0.0.1, the
// operator's explicit choice, does connect (the daemon itself answers it 401: it refuses requests
// relayed by a forward: route without its token, its side of the same boundary), which shows that
// the first refusal was the receiver's rule, not a broken setup. On the old receiver the first
// delivery reached the daemon (and, before the daemon refused relays, put the robot to sleep).
func TestForwardByNameDoesNotCarryTheDaemonsLocalTrust(t *testing.T) {
	if testing.Short() {
		t.Skip("builds robothub and runs it in a namespace: not under -short")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil || os.Getuid() != 0 || runtime.GOOS != "linux" {
		t.Skip("needs Linux, root and unshare(1) to give robothub its own /etc/hosts")
	}
	name, err := os.Hostname()
	if err != nil || name == "" || name == "localhost" {
		t.Skipf("this machine has no host name of its own (%q, %v)", name, err)
	}
	dir := t.TempDir()
	daemonBin := filepath.Join(dir, "robot-daemon")
	if out, err := exec.Command("go", "build", "-o", daemonBin, "github.com/robothub/robothub/robotd/cmd/robot-daemon").CombinedOutput(); err != nil {
		t.Fatalf("go build robot-daemon: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	daemon := exec.Command(daemonBin, "--sim", "--port", port, "--data-dir", filepath.Join(dir, "data"),
		"--apps-venv", filepath.Join(dir, "apps_venv"), "--hub-url", "none")
	daemon.Env = append(os.Environ(), "HOME="+dir)
	var daemonLog syncbuf.Buffer
	daemon.Stdout, daemon.Stderr = &daemonLog, &daemonLog
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = daemon.Process.Kill()
		_ = daemon.Wait()
		if t.Failed() {
			t.Logf("daemon log:\n%s", daemonLog.String())
		}
	})
	daemonURL := "http://127.0.0.1:" + port
	awake := func() bool {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
			// The daemon's owner token, which it made on first start: every TCP request needs it.
			token, _ := os.ReadFile(filepath.Join(dir, "data", "api-token"))
			req, _ := http.NewRequest("GET", daemonURL+"/api/daemon/status", nil)
			req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				var st struct {
					RobotAwake bool `json:"robot_awake"`
				}
				err = json.NewDecoder(resp.Body).Decode(&st)
				resp.Body.Close()
				if err == nil && resp.StatusCode == 200 {
					return st.RobotAwake
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("the daemon did not answer its status: %v", err)
			}
		}
	}
	// The wake-up is timed from the daemon's first answer: before it, the daemon may spend tens of
	// seconds preparing its apps venv on a loaded machine (awake waits for that itself).
	first := awake()
	for deadline := time.Now().Add(30 * time.Second); !first && !awake(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the simulated robot did not wake up at start")
		}
	}

	hosts := filepath.Join(dir, "hosts")
	if err := os.WriteFile(hosts, []byte("127.0.0.1 localhost\n127.0.0.1 "+name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	robothub, err := exec.LookPath("robothub")
	if err != nil {
		t.Fatalf("robothub is not on PATH (testscript puts it there): %v", err)
	}
	sleepPath := ":" + port + "/api/move/play/goto_sleep"
	serve := exec.Command(unshare, "--mount", "sh", "-c", `mount --bind "$0" /etc/hosts && exec "$@"`, hosts,
		robothub, "serve", "--addr", "127.0.0.1:0", "--tunnel", "none",
		"--route", "byname=forward:http://"+name+sleepPath, "--route", "explicit=forward:http://127.0.0.1"+sleepPath)
	serve.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "WEBHOOK_SECRET=hush"}
	p := runHubProcess(t, serve)
	base := p.waitFor(t, `Webhook receiver listening on (http://\S+)`)

	status, body := deliver(t, base+"/webhooks/byname", "hush", pushPayload)
	if status != 502 || !strings.Contains(body, name+" resolved to 127.0.0.1, a loopback address") {
		t.Errorf("forward by name to the daemon: %d %s", status, body)
	}
	if !awake() {
		t.Fatal("a forward by name reached the daemon: the robot went to sleep")
	}
	status, body = deliver(t, base+"/webhooks/explicit", "hush", pushPayload)
	if status != 502 || !strings.Contains(body, "the target answered 401") {
		t.Fatalf("the operator's explicit loopback target did not reach the daemon (the test proves nothing): %d %s", status, body)
	}
	if !awake() {
		t.Fatal("a relayed request without the daemon's token put the robot to sleep")
	}
}
