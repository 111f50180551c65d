package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
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
