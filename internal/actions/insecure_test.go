package actions

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/webhook"
)

// TestRoutesThatActNeedASecret: on a receiver without a secret, exec, forward and robot-update
// routes are refused at start with an error naming the route and the way out; log routes start.
func TestRoutesThatActNeedASecret(t *testing.T) {
	discard := slog.New(slog.DiscardHandler)
	for _, action := range []string{"exec:true", "forward:http://127.0.0.1:9/x", "robot-update:http://127.0.0.1:8000"} {
		kind, _, _ := strings.Cut(action, ":")
		srv := webhook.NewServer(webhook.WithSecret(""), webhook.WithLogger(discard))
		err := NewBuilder(Config{SplitCommand: SplitCommand, RobotUpdate: RobotUpdate, Logger: discard}).Register(srv, []Route{{"ok", "log"}, {"acts", action}})
		if err == nil {
			t.Fatalf("%s: a route that acts started without a secret", action)
		}
		for _, want := range []string{"route acts: " + kind + ": routes run or send", "need a secret", "WEBHOOK_SECRET", "--insecure-no-secret", InsecureNoSecretEnv} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q lacks %q", action, err, want)
			}
		}
		open := webhook.NewServer(webhook.WithSecret(""), webhook.WithLogger(discard))
		if err := NewBuilder(Config{SplitCommand: SplitCommand, RobotUpdate: RobotUpdate, Logger: discard, InsecureNoSecret: true}).Register(open, []Route{{"acts", action}}); err != nil {
			t.Errorf("%s with InsecureNoSecret: %v", action, err)
		}
	}
	srv := webhook.NewServer(webhook.WithSecret(""), webhook.WithLogger(discard))
	if err := NewBuilder(Config{SplitCommand: SplitCommand, Logger: discard}).Register(srv, []Route{{"seen", "log"}}); err != nil {
		t.Errorf("a log route alone: %v", err)
	}
}

// TestEnvConfiguredReceiverNeedsASecret: the Lambda function, the Cloud Function and the Space build
// their receiver with NewServerFromEnv, so they get the same rule and its environment switch.
func TestEnvConfiguredReceiverNeedsASecret(t *testing.T) {
	cfg := Config{SplitCommand: SplitCommand, Logger: slog.New(slog.DiscardHandler), Output: io.Discard}
	_, err := NewServerFromEnv(envOf(map[string]string{RoutesEnv: "hello=log;build=exec:true"}), cfg)
	if err == nil || !strings.Contains(err.Error(), "route build") || !strings.Contains(err.Error(), "need a secret") {
		t.Fatalf("exec route without a secret: %v", err)
	}
	srv, err := NewServerFromEnv(envOf(map[string]string{RoutesEnv: "hello=log;build=exec:true", InsecureNoSecretEnv: "1"}), cfg)
	if err != nil || len(srv.Routes()) != 2 {
		t.Fatalf("with %s=1: %v", InsecureNoSecretEnv, err)
	}
	if _, err := NewServerFromEnv(envOf(map[string]string{RoutesEnv: "build=exec:true", InsecureNoSecretEnv: "maybe"}), cfg); err == nil ||
		!strings.Contains(err.Error(), InsecureNoSecretEnv) {
		t.Fatalf("a malformed %s: %v", InsecureNoSecretEnv, err)
	}
}

// TestExecActionWithNULInPayload: a payload string holding \u0000 (valid JSON) cannot go into an
// environment variable as is; the command still runs, and sees U+FFFD in its place.
func TestExecActionWithNULInPayload(t *testing.T) {
	out := filepath.Join(t.TempDir(), "seen")
	b := NewBuilder(Config{SplitCommand: SplitCommand, Logger: slog.New(slog.DiscardHandler), Getenv: envOf(map[string]string{"PATH": os.Getenv("PATH")})})
	url := receiver(t, b, `env=exec:sh -c 'printf "repo=[%s] payload=%s" "$WEBHOOK_REPO_NAME" "$WEBHOOK_PAYLOAD" > "$0"' `+out)
	body := `{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"space","name":"alice/a\u0000b"}}`
	status, answer := deliver(t, url+"/webhooks/env", body)
	if status != 200 || answer["exitCode"] != 0.0 {
		t.Fatalf("%d %v", status, answer)
	}
	got, err := os.ReadFile(out)
	if want := "repo=[alice/a\uFFFDb] payload=" + body; err != nil || string(got) != want {
		t.Errorf("the command saw %q (%v), want %q", got, err, want)
	}
}

// TestForwardDoesNotFollowRedirects: a target that redirects gets no say in where the payload goes:
// the delivery fails with 502 naming the redirect, and the redirect's target is never called.
func TestForwardDoesNotFollowRedirects(t *testing.T) {
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the redirect was followed: %s %s", r.Method, r.URL)
	}))
	defer elsewhere.Close()
	redirects := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer redirects.Close()
	for name, client := range map[string]*http.Client{"default client": nil, "caller's client": {}} {
		b := NewBuilder(Config{SplitCommand: SplitCommand, ForwardClient: client, Logger: slog.New(slog.DiscardHandler)})
		url := receiver(t, b, "relay=forward:"+redirects.URL+"/in")
		status, body := deliver(t, url+"/webhooks/relay", payload)
		if msg, _ := body["error"].(string); status != 502 || !strings.Contains(msg, "307 Temporary Redirect") {
			t.Errorf("%s: %d %v", name, status, body)
		}
	}
}
