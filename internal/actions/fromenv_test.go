package actions

import (
	"bytes"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/testkit/syncbuf"

	"github.com/robothub/robothub/core/webhook"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestNewServerFromEnv(t *testing.T) {
	out := &syncbuf.Buffer{}
	srv, err := NewServerFromEnv(envOf(map[string]string{
		RoutesEnv:         "hello=log;\n team/retrain = log ",
		webhook.SecretEnv: "hush",
		PublicURLEnv:      "https://abc.lambda-url.eu-west-1.on.aws/",
	}), Config{SplitCommand: SplitCommand, Output: out, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, r := range srv.Routes() {
		paths = append(paths, r.Path)
	}
	if strings.Join(paths, " ") != "/webhooks/hello /webhooks/team/retrain" {
		t.Errorf("routes = %v", paths)
	}
	if !srv.SecretIsSet() {
		t.Error("WEBHOOK_SECRET from getenv was not used")
	}
	if srv.PublicURL() != "https://abc.lambda-url.eu-west-1.on.aws" {
		t.Errorf("public URL = %q", srv.PublicURL())
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	if code, body := deliver(t, ts.URL+"/webhooks/team/retrain", payload); code != 200 || body["message"] != "logged repo.content update on alice/dance-app" {
		t.Fatalf("delivery: %d %v", code, body)
	}
	if !strings.Contains(out.String(), `"route":"team/retrain"`) {
		t.Errorf("log action output: %q", out.String())
	}
}

func TestNewServerFromEnvOptionsWin(t *testing.T) {
	srv, err := NewServerFromEnv(envOf(map[string]string{RoutesEnv: "a=log", webhook.SecretEnv: "from-env"}),
		Config{SplitCommand: SplitCommand, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, webhook.WithSecret(""))
	if err != nil {
		t.Fatal(err)
	}
	if srv.SecretIsSet() {
		t.Error("an explicit WithSecret did not override WEBHOOK_SECRET")
	}
}

func TestNewServerFromEnvErrors(t *testing.T) {
	cases := map[string]struct {
		routes string
		want   []string
	}{
		"unset":          {"", []string{"ROBOTHUB_ROUTES is empty", "hello=log"}},
		"blank":          {" ;\n ", []string{"ROBOTHUB_ROUTES is empty"}},
		"no action":      {"hello", []string{"ROBOTHUB_ROUTES", `route "hello": want name=ACTION`}},
		"unknown action": {"hello=shout", []string{"ROBOTHUB_ROUTES", `unknown action "shout"`}},
		"bad name":       {"a b=log", []string{"ROBOTHUB_ROUTES", "invalid webhook name"}},
		"duplicate":      {"a=log;a=log", []string{"ROBOTHUB_ROUTES", "/webhooks/a is already registered"}},
		"missing command": {"build=exec:no-such-command-robothub-test", []string{"ROBOTHUB_ROUTES", "route build: exec:",
			"no-such-command-robothub-test"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			logs := &bytes.Buffer{}
			srv, err := NewServerFromEnv(envOf(map[string]string{RoutesEnv: c.routes, webhook.SecretEnv: "topsecret-value"}),
				Config{SplitCommand: SplitCommand, Logger: slog.New(slog.NewTextHandler(logs, nil))})
			if err == nil {
				t.Fatalf("no error; routes %v", srv.Routes())
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error()+logs.String(), "topsecret-value") {
				t.Error("the secret leaked into an error or a log")
			}
		})
	}
}

func TestParseEnvNames(t *testing.T) {
	if got, err := ParseEnvNames(" OPENAI_API_KEY, CI_TOKEN  _X1 "); err != nil || !slices.Equal(got, []string{"OPENAI_API_KEY", "CI_TOKEN", "_X1"}) {
		t.Errorf("ParseEnvNames = %q, %v", got, err)
	}
	for bad, says := range map[string]string{"A=1": "give names, not NAME=VALUE", "1A": "not the name", "A-B": "not the name",
		"WEBHOOK_SECRET": "never passed to commands", "OPENAI_API_KEY ROBOTHUB_FLEET_PASSWORD": "fleet broker"} {
		if _, err := ParseEnvNames(bad); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseEnvNames(%q) = %v, want an error saying %q", bad, err, says)
		}
	}
}

// TestServerFromEnvExecEnv: a receiver configured by environment (Lambda, Cloud Functions, a
// Space) hands its commands the variables ROBOTHUB_EXEC_ENV names, and none of its credentials.
func TestServerFromEnvExecEnv(t *testing.T) {
	out := filepath.Join(t.TempDir(), "env")
	env := map[string]string{RoutesEnv: `env=exec:sh -c 'env > "$0"' ` + out, InsecureNoSecretEnv: "1", ExecEnvEnv: "STAGE",
		"PATH": os.Getenv("PATH"), "STAGE": "prod", "AWS_SESSION_TOKEN": "aws_canary", "AWS_SECRET_ACCESS_KEY": "aws_canary"}
	srv, err := NewServerFromEnv(envOf(env), Config{SplitCommand: SplitCommand, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	if status, body := deliver(t, ts.URL+"/webhooks/env", payload); status != 200 {
		t.Fatalf("%d %v", status, body)
	}
	got, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(got), "\nSTAGE=prod\n") || strings.Contains(string(got), "canary") {
		t.Errorf("the command's environment (%v):\n%s", err, got)
	}
	env[ExecEnvEnv] = "STAGE=prod"
	if _, err := NewServerFromEnv(envOf(env), Config{SplitCommand: SplitCommand, Logger: slog.New(slog.DiscardHandler)}); err == nil || !strings.Contains(err.Error(), ExecEnvEnv) {
		t.Errorf("a malformed %s: %v", ExecEnvEnv, err)
	}
}
