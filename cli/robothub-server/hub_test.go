package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/hubtest"

	"github.com/robothub/robothub/cli/hubconn"

	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// runCLI runs robothub in-process to completion and returns its exit code and output.
func runCLI(t *testing.T, env map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		if k == "PATH" {
			return os.Getenv(k)
		}
		return ""
	}
	code := run(context.Background(), append([]string{"robothub"}, args...), getenv, strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// hubAPI sends a request with the token to a hub's API at endpoint and returns the status and the
// body.
func hubAPI(t *testing.T, endpoint, token, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, endpoint+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// testReceiver is a webhook receiver that records the payloads its handler gets.
type testReceiver struct {
	url string
	mu  sync.Mutex
	got []*webhook.Payload
}

func newTestReceiver(t *testing.T, secret string) *testReceiver {
	t.Helper()
	r := &testReceiver{}
	s := webhook.NewServer(webhook.WithSecret(secret), webhook.WithLogger(slog.New(slog.DiscardHandler)))
	if err := s.Add("hook", func(ctx context.Context, p *webhook.Payload, h http.Header) (any, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.got = append(r.got, p)
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/webhooks/hook"
	return r
}

func (r *testReceiver) wait(t *testing.T, n int) []*webhook.Payload {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		got := append([]*webhook.Payload(nil), r.got...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("receiver got %d payloads, want %d", len(got), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHubServeBootstrapsAndSurvivesRestart starts robothub hub serve on a fresh data directory, as
// make run does, drives it with the CLI, and restarts it.
func TestHubServeBootstrapsAndSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	rc := newTestReceiver(t, "dev-secret")
	tokenFile := filepath.Join(dir, "token")
	args := []string{"hub", "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--token-file", tokenFile,
		"--bootstrap-webhook", rc.url, "--retry-delay", "20ms"}
	p := start(t, map[string]string{"WEBHOOK_SECRET": "dev-secret"}, args...)
	endpoint := p.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)
	token := p.waitFor(t, `(?m)^export HF_TOKEN=(hf_[A-Za-z]{34})$`)
	whID := p.waitFor(t, `(?m)^# webhook (\w{24}) \(created\) -> `+regexp.QuoteMeta(rc.url)+`, watching user:local$`)
	if data, err := os.ReadFile(tokenFile); err != nil || strings.TrimSpace(string(data)) != token {
		t.Fatalf("token file: %q %v", data, err)
	}
	if st, _ := os.Stat(tokenFile); st.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v", st.Mode())
	}

	// The token file alone points the CLI at the hub (HF_TOKEN_PATH), as the public tools do.
	env := map[string]string{"HF_ENDPOINT": endpoint, "HF_TOKEN_PATH": tokenFile}
	code, out, errOut := runCLI(t, env, "", "webhooks", "ls")
	if code != 0 || !regexp.MustCompile(`(?m)^`+whID+` +`+regexp.QuoteMeta(rc.url)+` +enabled +repo,discussion +user:local$`).MatchString(out) {
		t.Fatalf("ls: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, env, "", "hub", "emit", "--repo", "model:local/demo")
	if code != 0 || !strings.Contains(out, "1 deliveries") {
		t.Fatalf("emit: %d\n%s%s", code, out, errOut)
	}
	got := rc.wait(t, 1)
	if got[0].Webhook.ID != whID || got[0].Repo.Name != "local/demo" || !strings.HasPrefix(got[0].Repo.URL.API, endpoint+"/api/models/") {
		t.Fatalf("payload %s", got[0].Raw)
	}

	// More tokens, made while the server runs, work at once.
	code, bobToken, errOut := runCLI(t, nil, "", "hub", "token", "create", "--data-dir", dir, "--user", "bob", "--format", "quiet")
	if code != 0 || !regexp.MustCompile(`^hf_[A-Za-z]{34}\n$`).MatchString(bobToken) {
		t.Fatalf("token create: %d %q %s", code, bobToken, errOut)
	}
	code, out, _ = runCLI(t, map[string]string{"HF_ENDPOINT": endpoint, "HF_TOKEN": strings.TrimSpace(bobToken)}, "", "webhooks", "ls", "--format", "json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("bob's list: %d %s", code, out)
	}

	if code := p.stop(t); code != 0 {
		t.Fatalf("serve exited %d\n%s", code, p.stderr)
	}
	for _, secret := range []string{token, strings.TrimSpace(bobToken), "dev-secret"} {
		if strings.Contains(p.stderr.String(), secret) {
			t.Fatalf("a token or secret is in the log:\n%s", p.stderr)
		}
	}

	// Restart: no new user or token, the same webhook, the old token still valid.
	p2 := start(t, map[string]string{"WEBHOOK_SECRET": "dev-secret"}, args...)
	endpoint = p2.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)
	p2.waitFor(t, `(?m)^# HF_TOKEN: the token printed at first start; make another with: robothub hub token create --data-dir `)
	p2.waitFor(t, `(?m)^# webhook `+whID+` \(found\)`)
	if strings.Contains(p2.stdout.String(), "export HF_TOKEN=") {
		t.Fatalf("a second token was made:\n%s", p2.stdout)
	}
	env["HF_ENDPOINT"] = endpoint
	if code, out, errOut := runCLI(t, env, "", "webhooks", "info", whID, "--format", "quiet"); code != 0 || strings.TrimSpace(out) != whID {
		t.Fatalf("info after restart: %d %s %s", code, out, errOut)
	}
}

func TestHubServeUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"hub", "serve", "--db", ":memory:", "--bootstrap-webhook", "not a url"}, "--bootstrap-webhook"},
		{[]string{"hub", "serve", "--db", ":memory:", "--bootstrap-watch", "x"}, `--bootstrap-watch "x" is not type:name`},
		{[]string{"hub", "serve", "--db", ":memory:", "--data-dir", "/tmp/x"}, "give --db or --data-dir, not both"},
		{[]string{"hub", "serve", "--db", ":memory:", "--log-level", "loud"}, "--log-level"},
		{[]string{"hub", "serve", "extra"}, "takes no arguments"},
		{[]string{"hub", "serve", "--db", ":memory:", "--allow-delivery-to", "daemon.local:8000"}, `--allow-delivery-to "daemon.local:8000": the host must be an IP address or localhost`},
		{[]string{"hub", "serve", "--db", ":memory:", "--allow-delivery-to", "127.0.0.1"}, `"127.0.0.1" is not host:port or a CIDR network`},
		{[]string{"hub", "token", "create", "--db", ":memory:", "--role", "admin"}, `token role "admin"`},
		{[]string{"hub", "token", "create", "--db", ":memory:", "--user", "bad name"}, "user name"},
		{[]string{"hub", "emit", "--endpoint", "http://127.0.0.1:1"}, "give the repo with --repo"},
		{[]string{"hub", "job", "create", "--endpoint", "http://127.0.0.1:1"}, "give the command after --"},
	} {
		code, _, stderr := runCLI(t, nil, "", c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d with %q", c.args, code, stderr, exitUsage, c.msg)
		}
	}
}

// The allowed delivery targets come from $ROBOTHUB_ALLOW_DELIVERY_TO as well, checked the same way.
func TestAllowedDeliveryTargetsFromTheEnvironment(t *testing.T) {
	code, _, stderr := runCLI(t, map[string]string{"ROBOTHUB_ALLOW_DELIVERY_TO": "127.0.0.1:7860, 10.0.0.0/33"}, "", "hub", "serve", "--db", ":memory:")
	if code != exitUsage || !strings.Contains(stderr, `"10.0.0.0/33"`) {
		t.Errorf("exit %d, stderr %q; want %d naming the bad target", code, stderr, exitUsage)
	}
}

// localHub serves an in-memory emulator for in-process CLI runs and returns their environment.
func localHub(t *testing.T) map[string]string {
	t.Helper()
	return hubtest.Start(t, localhub.Config{}).Env(t)
}

func TestExitCodes(t *testing.T) {
	env := localHub(t)
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"webhooks", "ls"}, exitOK},
		{[]string{"webhooks", "info", "0123456789abcdef01234567"}, exitError},
		{[]string{"webhooks", "create", "--url", "https://e.com", "--watch", "nope"}, exitUsage},
		{[]string{"webhooks", "ls", "--format", "xml"}, exitUsage},
		{[]string{"webhooks", "ls", "--token", "hf_wrong"}, exitError},
		{[]string{"webhooks", "delete", "0123456789abcdef01234567"}, exitUsage}, // no terminal, no --yes
		{[]string{"webhooks", "delete", "0123456789abcdef01234567", "--yes"}, exitError},
		{[]string{"webhooks", "--endpoint", "ftp://x", "ls"}, exitUsage},
	} {
		if code, _, stderr := runCLI(t, env, "", c.args...); code != c.code {
			t.Errorf("%v: exit %d, want %d (%s)", c.args, code, c.code, stderr)
		}
	}
}

func TestDeleteAsksOnATerminal(t *testing.T) {
	env := localHub(t)
	old := hubconn.IsTerminal
	hubconn.IsTerminal = func(io.Reader) bool { return true }
	t.Cleanup(func() { hubconn.IsTerminal = old })
	_, id, _ := runCLI(t, env, "", "webhooks", "create", "--url", "https://e.com/h", "--watch", "user:alice", "--format", "quiet")
	id = strings.TrimSpace(id)

	for _, answer := range []string{"\n", "n\n", "no\n", ""} {
		code, _, stderr := runCLI(t, env, answer, "webhooks", "delete", id)
		if code != exitError || !strings.Contains(stderr, "Delete webhook "+id+"? This cannot be undone. [y/N]") || !strings.Contains(stderr, "not deleted") {
			t.Fatalf("answer %q: exit %d %s", answer, code, stderr)
		}
	}
	if code, _, _ := runCLI(t, env, "", "webhooks", "info", id); code != exitOK {
		t.Fatal("a refused delete deleted the webhook")
	}
	code, out, _ := runCLI(t, env, "y\n", "webhooks", "delete", id)
	if code != exitOK || !strings.Contains(out, "Deleted webhook "+id) {
		t.Fatalf("yes: %d %s", code, out)
	}
	if code, _, _ := runCLI(t, env, "", "webhooks", "info", id); code != exitError {
		t.Fatal("the webhook is still there")
	}
}

// A webhook to this machine's loopback or a link-local address is made, with a warning that the
// hub refuses such deliveries unless it allows them: a newcomer saw only refused deliveries.
func TestWebhookToLoopbackWarns(t *testing.T) {
	env := localHub(t)
	for _, c := range []struct{ url, want string }{
		{"http://127.0.0.1:7860/webhooks/hello", "warning: 127.0.0.1:7860 is a loopback address: a hub delivers there only when it allows it (the local hub: robothub hub serve --allow-delivery-to 127.0.0.1:7860); the public hub never does"},
		{"http://localhost/hook", "warning: localhost is a loopback address: a hub delivers there only when it allows it (the local hub: robothub hub serve --allow-delivery-to localhost:80)"},
		{"http://169.254.169.254/latest", "warning: 169.254.169.254 is a link-local address (such as a cloud metadata service)"},
		{"https://example.com/hook", ""},
	} {
		code, id, stderr := runCLI(t, env, "", "webhooks", "create", "--url", c.url, "--watch", "user:alice", "--format", "quiet")
		id = strings.TrimSpace(id)
		if code != exitOK || (c.want == "" && stderr != "") || !strings.Contains(stderr, c.want) {
			t.Errorf("create --url %s: exit %d, stderr %q, want %q", c.url, code, stderr, c.want)
			continue
		}
		if c.want != "" && !strings.Contains(stderr, "robothub webhooks activity "+id+" says why a delivery was refused") {
			t.Errorf("create --url %s: the warning does not name the webhook's activity: %q", c.url, stderr)
		}
		_, _, stderr = runCLI(t, env, "", "webhooks", "update", id, "--url", c.url)
		if (c.want == "" && stderr != "") || !strings.Contains(stderr, c.want) {
			t.Errorf("update --url %s: stderr %q, want %q", c.url, stderr, c.want)
		}
	}
}
