package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/syncbuf"

	"github.com/robothub/robothub/core/webhook"
)

// hubProcess is `robothub hub serve` run as its own process (the test binary, which testscript put
// on PATH as robothub), so that a test can SIGKILL it.
type hubProcess struct {
	cmd    *exec.Cmd
	stdout *syncbuf.Buffer
	stderr *syncbuf.Buffer
}

func startHubProcess(t *testing.T, env []string, args ...string) *hubProcess {
	t.Helper()
	bin, err := exec.LookPath("robothub")
	if err != nil {
		t.Fatalf("robothub is not on PATH (testscript puts it there): %v", err)
	}
	cmd := exec.Command(bin, append([]string{"hub", "serve"}, args...)...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}, env...)
	return runHubProcess(t, cmd)
}

// runHubProcess starts cmd, a hub, capturing its output; the test's cleanup kills it and, when the
// test failed, logs what it printed.
func runHubProcess(t *testing.T, cmd *exec.Cmd) *hubProcess {
	t.Helper()
	p := &hubProcess{cmd: cmd, stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		if t.Failed() {
			t.Logf("hub stdout:\n%s\nhub stderr:\n%s", p.stdout, p.stderr)
		}
	})
	return p
}

// waitFor waits for re in the process's stdout and returns its first group.
func (p *hubProcess) waitFor(t *testing.T, re string) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := rx.FindStringSubmatch(p.stdout.String()); m != nil {
			return m[len(m)-1]
		}
	}
	t.Fatalf("robothub hub serve did not print %q", re)
	return ""
}

// TestHubKilledWithPendingDeliveriesResumesAfterRestart emits events while the receiver is down,
// kills the local hub with SIGKILL while their deliveries are pending (and being retried), starts
// the receiver, and starts the hub again on the same data directory: every event arrives, once.
// (docs/hub-emulator.md promises at-least-once across a restart, for deliveries in flight when it
// stops; none can be in flight here, since no receiver answered before the kill.)
func TestHubKilledWithPendingDeliveriesResumesAfterRestart(t *testing.T) {
	const events = 10
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	receiverAddr := ln.Addr().String()
	ln.Close() // nothing listens there until the receiver starts
	hookURL := "http://" + receiverAddr + "/webhooks/hook"
	args := []string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--bootstrap-webhook", hookURL,
		"--delivery-attempts", "1000", "--retry-delay", "20ms", "--retry-max-delay", "200ms", "--log-level", "warn"}
	env := []string{"WEBHOOK_SECRET=kill-test-secret"}

	first := startHubProcess(t, env, args...)
	endpoint := first.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)
	token := first.waitFor(t, `(?m)^export HF_TOKEN=(hf_[A-Za-z]{34})$`)
	whID := first.waitFor(t, `(?m)^# webhook (\w{24}) \(created\)`)
	call := func(base, method, path, body string, out any) int {
		t.Helper()
		code, data := hubAPI(t, base, token, method, path, body)
		if out != nil {
			_ = json.Unmarshal([]byte(data), out)
		}
		return code
	}
	for i := range events {
		body := fmt.Sprintf(`{"repo":"model:local/demo","scope":"repo.content","action":"update","headSha":"%040x"}`, i+1)
		if code := call(endpoint, "POST", "/api/emulator/events", body, nil); code != 200 {
			t.Fatalf("emit: %d", code)
		}
	}
	type activity struct {
		Deliveries []struct {
			State        string `json:"state"`
			AttemptCount int    `json:"attemptCount"`
		} `json:"deliveries"`
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var a activity
		call(endpoint, "GET", "/api/emulator/webhooks/"+whID+"/activity", "", &a)
		retried := 0
		for _, d := range a.Deliveries {
			if d.State == "pending" && d.AttemptCount >= 1 {
				retried++
			}
		}
		if retried == events {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries were not being retried: %+v", a)
		}
	}
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()

	var mu sync.Mutex
	got := map[string]int{}
	srv := webhook.NewServer(webhook.WithSecret("kill-test-secret"), webhook.WithLogger(slog.New(slog.DiscardHandler)))
	if err := srv.Add("hook", func(_ context.Context, p *webhook.Payload, _ http.Header) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		got[p.Repo.HeadSha]++
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if ln, err = net.Listen("tcp", receiverAddr); err != nil {
		t.Fatalf("the receiver's address was taken meanwhile: %v", err)
	}
	hs := &http.Server{Handler: srv}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { hs.Close() })

	second := startHubProcess(t, env, args...)
	endpoint = second.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)
	second.waitFor(t, `(?m)^# webhook `+whID+` \(found\)`)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var a activity
		call(endpoint, "GET", "/api/emulator/webhooks/"+whID+"/activity", "", &a)
		delivered := 0
		for _, d := range a.Deliveries {
			if d.State == "delivered" {
				delivered++
			}
		}
		if len(a.Deliveries) == events && delivered == events {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart: %+v", a)
		}
	}
	// Once the hub has exited, nothing more can arrive: count then.
	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := second.cmd.Wait(); err != nil {
		t.Errorf("the restarted hub did not exit cleanly on SIGTERM: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != events {
		t.Errorf("%d distinct events arrived, want %d", len(got), events)
	}
	for sha, n := range got {
		if n != 1 {
			t.Errorf("event %s arrived %d times", sha, n)
		}
	}
}

// One server per database: a second hub serve, or a robothub dev, on the data dir of a running
// hub exits 1 naming the database and the running hub's PID, and the first one keeps serving.
// Once the first is SIGKILLed, the lock it held is gone and a new server starts.
func TestSecondHubOnOneDataDirIsRefused(t *testing.T) {
	dir := t.TempDir()
	first := startHubProcess(t, nil, "--addr", "127.0.0.1:0", "--data-dir", dir, "--log-level", "warn")
	endpoint := first.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)

	want := fmt.Sprintf("%s is in use by another robothub hub server (PID %d)", filepath.Join(dir, "hub.db.lock"), first.cmd.Process.Pid)
	code, _, stderr := runCLI(t, nil, "", "hub", "serve", "--addr", "127.0.0.1:0", "--data-dir", dir)
	if code != exitError || !strings.Contains(stderr, want) {
		t.Fatalf("second hub serve: exit %d, stderr %q; want exit 1 with %q", code, stderr, want)
	}
	resp, err := http.Get(endpoint + "/api/whoami-v2")
	if err != nil {
		t.Fatalf("the first hub stopped serving: %v", err)
	}
	resp.Body.Close()

	_ = first.cmd.Process.Kill()
	_ = first.cmd.Wait()
	second := startHubProcess(t, nil, "--addr", "127.0.0.1:0", "--data-dir", dir, "--log-level", "warn")
	second.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)
}

// robothub dev runs a hub too: on a data dir whose hub database a running hub serve holds, it exits
// 1 naming that database's lock file and the running hub's PID, before it starts anything.
func TestDevOnTheDatabaseOfARunningHubIsRefused(t *testing.T) {
	devDir := t.TempDir()
	hubDir := filepath.Join(devDir, "hub") // where robothub dev keeps its hub's database
	first := startHubProcess(t, nil, "--addr", "127.0.0.1:0", "--data-dir", hubDir, "--log-level", "warn")
	first.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)

	_, port, _ := net.SplitHostPort(freeAddr(t))
	p := start(t, nil, "dev", "--data-dir", devDir, "--hub-addr", "127.0.0.1:0", "--receiver-addr", "127.0.0.1:0",
		"--broker-addr", "127.0.0.1:0", "--daemon-port", port, "--log-level", "warn")
	want := fmt.Sprintf("dev: %s is in use by another robothub hub server (PID %d)", filepath.Join(hubDir, "hub.db.lock"), first.cmd.Process.Pid)
	select {
	case code := <-p.done:
		p.done <- code
		if code != exitError || !strings.Contains(p.stderr.String(), want) {
			t.Fatalf("robothub dev: exit %d, stderr %q; want exit 1 with %q", code, p.stderr, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("robothub dev started beside a running hub on its database:\n%s", p.stdout)
	}
	if strings.Contains(p.stdout.String(), "http://") {
		t.Errorf("robothub dev printed addresses before it was refused:\n%s", p.stdout)
	}
}
