package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/hubtest"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/hubemu/localhub"
	"github.com/robothub/robothub/internal/testkit/syncbuf"

	"github.com/robothub/robothub/internal/hubemu"
)

// program is one in-process run of robothub.
type program struct {
	stdout, stderr *syncbuf.Buffer
	cancel         context.CancelFunc
	done           chan int
}

// start runs robothub with args and env in the background.
func start(t testing.TB, env map[string]string, args ...string) *program {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &program{stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, cancel: cancel, done: make(chan int, 1)}
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		if k == "PATH" || k == "HOME" {
			return os.Getenv(k)
		}
		return ""
	}
	go func() {
		p.done <- run(ctx, append([]string{"robothub"}, args...), getenv, strings.NewReader(""), p.stdout, p.stderr)
	}()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop interrupts the program (as Ctrl-C does) and returns its exit code.
func (p *program) stop(t testing.TB) int {
	p.cancel()
	select {
	case code := <-p.done:
		p.done <- code
		return code
	case <-time.After(20 * time.Second):
		t.Fatal("robothub did not stop within 20s of its interrupt")
		return -1
	}
}

// waitFor polls the program's stdout until re matches, and returns the first group (or match).
func (p *program) waitFor(t testing.TB, re string) string {
	t.Helper()
	return p.waitForWithin(t, 10*time.Second, re)
}

// waitForWithin is waitFor with its own time limit.
func (p *program) waitForWithin(t testing.TB, limit time.Duration, re string) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if m := rx.FindStringSubmatch(p.stdout.String()); m != nil {
			return m[len(m)-1]
		}
		select {
		case code := <-p.done:
			p.done <- code
			t.Fatalf("robothub exited with %d before printing %q\nstdout:\n%s\nstderr:\n%s", code, re, p.stdout, p.stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("robothub did not print %q\nstdout:\n%s\nstderr:\n%s", re, p.stdout, p.stderr)
	return ""
}

func deliver(t *testing.T, url, secret, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	if secret != "" {
		req.Header.Set("X-Webhook-Secret", secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const pushPayload = `{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"space","name":"alice/dance-app","headSha":"575db8b"},"updatedRefs":[{"ref":"refs/heads/main","oldSha":null,"newSha":"575db8b"}]}`

// TestServeEndToEnd runs `robothub serve` with an exec: route that saves the payload to a file and a
// log route, sends real deliveries, and stops it as Ctrl-C would.
func TestServeEndToEnd(t *testing.T) {
	out := filepath.Join(t.TempDir(), "payload.json")
	p := start(t, map[string]string{"WEBHOOK_SECRET": "hush"},
		"serve", "--addr", "127.0.0.1:0",
		"--route", `save=exec:sh -c 'printf %s "$WEBHOOK_PAYLOAD" > "$0"' `+out,
		"--route", "seen=log")
	base := p.waitFor(t, `Webhook receiver listening on (http://\S+)`)
	p.waitFor(t, `POST\s+`+regexp.QuoteMeta(base)+`/webhooks/seen`)
	p.waitFor(t, `POST\s+`+regexp.QuoteMeta(base)+`/webhooks/save`)

	if status, body := deliver(t, base+"/webhooks/save", "hush", pushPayload); status != 200 || !strings.Contains(body, `"exitCode":0`) {
		t.Fatalf("exec route: %d %s", status, body)
	}
	got, err := os.ReadFile(out)
	if err != nil || string(got) != pushPayload {
		t.Fatalf("the command wrote %q (%v), want the payload", got, err)
	}
	if status, _ := deliver(t, base+"/webhooks/seen", "hush", pushPayload); status != 200 {
		t.Fatalf("log route: %d", status)
	}
	p.waitFor(t, `\{"time":"[^"]+","route":"seen","event":\{"action":"update","scope":"repo.content"\},"repo":"space:alice/dance-app"`)
	if status, body := deliver(t, base+"/webhooks/seen", "wrong", pushPayload); status != 403 {
		t.Errorf("wrong secret: %d %s", status, body)
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("exit code after Ctrl-C = %d, want 0\n%s", code, p.stderr)
	}
	if strings.Contains(p.stdout.String()+p.stderr.String(), "hush") {
		t.Error("the secret appeared in robothub's output")
	}
}

func TestServeUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"serve"}, nil, "no route: add at least one --route NAME=ACTION"},
		{[]string{"serve", "--route", "oops"}, nil, "want name=ACTION"},
		{[]string{"serve", "--route", "x=shout"}, nil, `unknown action "shout"`},
		{[]string{"serve", "--route", "x=exec:no-such-program-xyz"}, nil, "no-such-program-xyz"},
		{[]string{"serve", "--route", "a b=log"}, nil, `invalid webhook name "a b"`},
		{[]string{"serve", "--route", "x=log", "--route", "x=log"}, nil, "already registered"},
		{[]string{"serve", "--route", "x=log", "--tunnel", "ngrok"}, nil, "needs $NGROK_AUTHTOKEN"},
		{[]string{"serve", "--route", "x=log", "--tunnel", "carrier-pigeon"}, nil, `--tunnel "carrier-pigeon"`},
		{[]string{"serve", "--route", "x=log", "--update-webhook", "abc=y"}, nil, `no route named "y"`},
		{[]string{"serve", "--route", "x=log", "--log-level", "loud"}, nil, "--log-level"},
		{[]string{"serve", "--no-such-flag"}, nil, "flag provided but not defined"},
		{[]string{"serve", "extra"}, nil, "serve takes no arguments"},
		{[]string{"serve", "--route", "seen=log", "--route", "build=exec:true"}, nil, "route build: exec: routes run or send something on every delivery, so they need a secret"},
		{[]string{"serve", "--route", "relay=forward:http://127.0.0.1:9/"}, nil, "--insecure-no-secret"},
		{[]string{"serve"}, map[string]string{"ROBOTHUB_ROUTES": "broken"}, "$ROBOTHUB_ROUTES"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := c.env
			code := run(context.Background(), append([]string{"robothub"}, c.args...), func(k string) string { return env[k] }, nil, &stdout, &stderr)
			if code != exitUsage {
				t.Errorf("exit code %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr %q lacks %q", stderr.String(), c.want)
			}
		})
	}
}

func TestServeListenError(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"robothub", "serve", "--route", "x=log", "--addr", "256.0.0.1:1"}, func(string) string { return "" }, nil, &stdout, &stderr)
	if code != exitError || !strings.Contains(stderr.String(), "listen on 256.0.0.1:1") {
		t.Errorf("code %d, stderr %q", code, stderr.String())
	}
}

func TestServeRoutesFromEnvironmentAndTunnelReminder(t *testing.T) {
	fake := `echo "your url is: https://brave-otter.loca.lt"; exec sleep 60`
	p := start(t, map[string]string{"ROBOTHUB_ROUTES": "a=log;b=log"},
		"serve", "--addr", "127.0.0.1:0", "--tunnel-command", "sh -c '"+fake+"'", "--update-webhook", "wh123=b")
	p.waitFor(t, `POST\s+https://brave-otter.loca.lt/webhooks/a`)
	p.waitFor(t, `robothub webhooks update wh123 --url https://brave-otter.loca.lt/webhooks/b`)
}

// TestServeUpdatesTheHubWebhook: with --update-webhook, the public URL of a new tunnel is written to
// the hub webhook through the management API (here the local hub emulator).
func TestServeUpdatesTheHubWebhook(t *testing.T) {
	ctx := context.Background()
	emu := hubtest.Start(t, localhub.Config{})
	token, user := emu.Token(t, "alice", hubemu.RoleWrite)
	old := "https://old-tunnel.example.dev/webhooks/b"
	watched := []hub.WatchedItem{{Type: "user", Name: "alice"}}
	wh, err := emu.CreateWebhook(ctx, user.ID, hubemu.WebhookInput{URL: &old, Watched: &watched})
	if err != nil {
		t.Fatal(err)
	}

	fake := `echo "your url is: https://brave-otter.loca.lt"; exec sleep 60`
	p := start(t, map[string]string{"ROBOTHUB_ROUTES": "a=log;b=log", "HF_ENDPOINT": emu.URL, "HF_TOKEN": token},
		"serve", "--addr", "127.0.0.1:0", "--tunnel-command", "sh -c '"+fake+"'", "--update-webhook", wh.ID+"=b")
	p.waitFor(t, `POST\s+https://brave-otter.loca.lt/webhooks/a`)
	p.waitFor(t, `Updated hub webhook `+wh.ID+`: it now delivers to https://brave-otter.loca.lt/webhooks/b`)
	list, err := emu.Webhooks(ctx, user.ID)
	if err != nil || len(list) != 1 || list[0].URL != "https://brave-otter.loca.lt/webhooks/b" {
		t.Fatalf("webhook on the hub after the update: %+v (%v)", list, err)
	}
	if strings.Contains(p.stdout.String()+p.stderr.String(), token) {
		t.Error("the hub token appeared in robothub's output")
	}

	// A webhook that does not exist: the user is told, with the command to run by hand.
	q := start(t, map[string]string{"ROBOTHUB_ROUTES": "a=log", "HF_ENDPOINT": emu.URL, "HF_TOKEN": token},
		"serve", "--addr", "127.0.0.1:0", "--tunnel-command", "sh -c '"+fake+"'", "--update-webhook", "000000000000000000000000")
	q.waitFor(t, `Could not update hub webhook 000000000000000000000000: .*\n  Run: robothub webhooks update 000000000000000000000000 --url https://brave-otter.loca.lt/webhooks/a`)
}

// TestServeInsecureNoSecret: --insecure-no-secret is the one way to serve an exec: route open; the
// command then runs for a delivery that carries no secret.
func TestServeInsecureNoSecret(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ran")
	p := start(t, nil, "serve", "--addr", "127.0.0.1:0", "--insecure-no-secret",
		"--route", `touch=exec:sh -c 'echo "$WEBHOOK_REPO_NAME" > "$0"' `+out)
	base := p.waitFor(t, `Webhook receiver listening on (http://\S+)`)
	if status, body := deliver(t, base+"/webhooks/touch", "", pushPayload); status != 200 {
		t.Fatalf("open exec route: %d %s", status, body)
	}
	if got, err := os.ReadFile(out); err != nil || string(got) != "alice/dance-app\n" {
		t.Fatalf("the command wrote %q (%v)", got, err)
	}
}

// TestServeLogLinesSurviveShutdown: the log route's lines wait in a buffer for a few milliseconds
// (actions.BufferedOutput); a receiver stopped as Ctrl-C or SIGTERM stops it has written every line
// of every delivery it answered.
func TestServeLogLinesSurviveShutdown(t *testing.T) {
	p := start(t, map[string]string{"WEBHOOK_SECRET": "hush"}, "serve", "--addr", "127.0.0.1:0", "--tunnel", "none", "--route", "seen=log")
	base := p.waitFor(t, `Webhook receiver listening on (http://\S+)`)
	const n = 200
	for i := range n {
		if status, body := deliver(t, base+"/webhooks/seen", "hush", pushPayload); status != 200 {
			t.Fatalf("delivery %d: %d %s", i, status, body)
		}
	}
	if code := p.stop(t); code != 0 {
		t.Fatalf("exit code %d\n%s", code, p.stderr)
	}
	if got := strings.Count(p.stdout.String(), `"route":"seen"`); got != n {
		t.Errorf("%d lines on stdout after the shutdown, want one for each of the %d deliveries", got, n)
	}
}
