package actions

import (
	"bytes"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/syncbuf"

	"github.com/robothub/robothub/core/webhook"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestNewServerFromEnv(t *testing.T) {
	out := &syncbuf.Buffer{}
	srv, err := NewServerFromEnv(envOf(map[string]string{
		RoutesEnv:         "hello=log;\n team/retrain = log ",
		webhook.SecretEnv: "hush",
		PublicURLEnv:      "https://abc.lambda-url.eu-west-1.on.aws/",
	}), Config{Output: out, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
		Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, webhook.WithSecret(""))
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
				Config{Logger: slog.New(slog.NewTextHandler(logs, nil))})
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
