package lambda

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/actions"
	"github.com/robothub/robothub/internal/testkit/receivertest"
)

// TestTable sends every request of the receiver table through every event shape and requires the
// answer of the net/http server for the same request.
func TestTable(t *testing.T) {
	logs := &bytes.Buffer{}
	srv := receivertest.NewReceiver(t, true, logs)
	reference := receivertest.Reference(t, srv)
	cases := receivertest.Cases()
	want := make([]receivertest.Result, len(cases))
	for i, c := range cases {
		want[i] = reference(c)
	}
	for _, shape := range receivertest.Shapes {
		h := NewHandler(srv, WithBasePath(shape.BasePath))
		fixture := shape.Event()
		t.Run(shape.Name, func(t *testing.T) {
			for i, c := range cases {
				t.Run(c.Name, func(t *testing.T) {
					event, err := receivertest.LambdaEvent(fixture, c)
					if err != nil {
						t.Fatal(err)
					}
					out, err := h.Invoke(context.Background(), event)
					if err != nil {
						t.Fatalf("Invoke: %v", err)
					}
					got, err := receivertest.ReadLambdaResponse(out)
					if err != nil {
						t.Fatal(err)
					}
					receivertest.Check(t, c, got, want[i])
				})
			}
		})
	}
	if strings.Contains(logs.String(), receivertest.Secret) {
		t.Error("the secret leaked into the logs")
	}
}

// TestFixtures delivers each real-shaped event, as recorded, to a receiver configured as a user
// would configure the function.
func TestFixtures(t *testing.T) {
	srv := fixtureReceiver(t)
	for _, shape := range receivertest.Shapes {
		t.Run(shape.Name, func(t *testing.T) {
			out, err := NewHandler(srv).Invoke(context.Background(), shape.Event())
			if err != nil {
				t.Fatal(err)
			}
			got, err := receivertest.ReadLambdaResponse(out)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != 200 || !strings.Contains(string(got.Body), `"message":"logged repo.content update on alice/dance-app"`) {
				t.Fatalf("got %d %s", got.Status, got.Body)
			}
			if ct := got.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

func fixtureReceiver(t testing.TB) *webhook.Server {
	t.Helper()
	env := map[string]string{actions.RoutesEnv: "hello=log", webhook.SecretEnv: "fixture-secret"}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := actions.NewServerFromEnv(func(k string) string { return env[k] }, actions.Config{Logger: quiet, Output: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func readEvent(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "events", name))
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

func invokeMap(t *testing.T, h interface {
	Invoke(context.Context, []byte) ([]byte, error)
}, ev map[string]any) (receivertest.Result, error) {
	t.Helper()
	b, _ := json.Marshal(ev)
	out, err := h.Invoke(context.Background(), b)
	if err != nil {
		return receivertest.Result{}, err
	}
	return receivertest.ReadLambdaResponse(out)
}

func TestPathPrefixes(t *testing.T) {
	srv := fixtureReceiver(t)
	cases := []struct {
		name, fixture, path, basePath string
		status                        int
		body                          string
	}{
		{"HTTP API stage before a route", "apigw-v2-http-api-stage.json", "/prod/webhooks/hello", "", 200, "logged"},
		{"HTTP API stage alone is the landing page", "apigw-v2-http-api-stage.json", "/prod", "", 200, "<html"},
		{"HTTP API stage health", "apigw-v2-http-api-stage.json", "/prod/healthz", "", 200, `"status":"ok"`},
		{"HTTP API default stage", "function-url-base64.json", "/webhooks/hello", "", 200, "logged"},
		{"custom domain without the option", "apigw-v1-custom-domain.json", "/hooks/webhooks/hello", "", 200, "logged"},
		{"custom domain landing needs the option", "apigw-v1-custom-domain.json", "/hooks/", "", 404, "not found: /hooks/"},
		{"custom domain landing with the option", "apigw-v1-custom-domain.json", "/hooks/", "/hooks/", 200, "<html"},
		{"deep base path", "alb-multi-value.json", "/team/a/webhooks/hello", "", 200, "logged"},
		{"a prefix is not a partial segment", "alb-multi-value.json", "/hookswebhooks/hello", "/hooks", 404, "not found: /hookswebhooks/hello"},
		{"unknown route behind a prefix", "apigw-v2-http-api-stage.json", "/prod/webhooks/nope", "", 404, "no webhook handler at /webhooks/nope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := readEvent(t, c.fixture)
			if ev["version"] == "2.0" {
				ev["rawPath"] = c.path
			} else {
				ev["path"] = c.path
			}
			if strings.HasSuffix(c.body, "html") || c.body == `"status":"ok"` || strings.HasPrefix(c.body, "not found") {
				if ev["version"] == "2.0" {
					ev["requestContext"].(map[string]any)["http"].(map[string]any)["method"] = "GET"
				} else {
					ev["httpMethod"] = "GET"
				}
				ev["body"] = nil
				ev["isBase64Encoded"] = false
			}
			got, err := invokeMap(t, NewHandler(srv, WithBasePath(c.basePath)), ev)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != c.status || !strings.Contains(string(got.Body), c.body) {
				t.Fatalf("got %d %.300s; want %d with %q", got.Status, got.Body, c.status, c.body)
			}
		})
	}
}

func TestRoutedPath(t *testing.T) {
	cases := []struct{ path, stage, base, want string }{
		{"/webhooks/a", "", "", "/webhooks/a"},
		{"/webhooks/a", "$default", "", "/webhooks/a"},
		{"/prod/webhooks/a", "prod", "", "/webhooks/a"},
		{"/prod", "prod", "", "/"},
		{"/production/x", "prod", "", "/production/x"},
		{"/webhooks/webhooks/a", "webhooks", "", "/webhooks/a"}, // a stage named webhooks
		{"/hooks/healthz", "", "/hooks", "/healthz"},
		{"/hooks", "", "/hooks", "/"},
		{"/v1/hooks/webhooks/a", "", "", "/webhooks/a"},
		{"/webhooks/team/webhooks/x", "", "", "/webhooks/team/webhooks/x"},
		{"/", "", "", "/"},
	}
	for _, c := range cases {
		if got := routedPath(c.path, c.stage, c.base); got != c.want {
			t.Errorf("routedPath(%q, %q, %q) = %q, want %q", c.path, c.stage, c.base, got, c.want)
		}
	}
}

// TestEventsThatAreNotRequests: the invocation fails with an error a user can act on.
func TestEventsThatAreNotRequests(t *testing.T) {
	h := NewHandler(fixtureReceiver(t))
	cases := []struct {
		name  string
		event []byte
		want  string
	}{
		{"S3 notification", mustReadFile(t, "s3-put.json"), "unsupported payload format"},
		{"ALB without multi-value headers", mustReadFile(t, "alb-single-value.json"), "enable Multi value headers in target group settings"},
		{"console test event", []byte(`{"key1":"value1","key2":"value2"}`), "unsupported payload format"},
		{"not JSON", []byte(`hello`), "invalid character"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := h.Invoke(context.Background(), c.event)
			if err == nil {
				t.Fatalf("no error; response %s", out)
			}
			var ee *EventError
			if !errors.As(err, &ee) {
				t.Errorf("error %T is not an *EventError", err)
			}
			for _, w := range []string{"the webhook receiver cannot serve this Lambda event", c.want} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func mustReadFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "events", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBadBase64Body(t *testing.T) {
	ev := readEvent(t, "function-url-base64.json")
	ev["body"] = "eyJldmVudCI6!!not-base64"
	got, err := invokeMap(t, NewHandler(fixtureReceiver(t)), ev)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != 400 || !strings.Contains(string(got.Body), "reading the body: illegal base64 data") {
		t.Fatalf("got %d %s", got.Status, got.Body)
	}
}

func TestLoggerLevel(t *testing.T) {
	for env, want := range map[string][]string{
		"":      {"INFO", "WARN", "ERROR"},
		"debug": {"DEBUG", "INFO", "WARN", "ERROR"},
		"WARN":  {"WARN", "ERROR"},
		"ERROR": {"ERROR"},
		"FATAL": {},
	} {
		var buf bytes.Buffer
		log := NewLogger(&buf, func(k string) string { return map[string]string{LogLevelEnv: env}[k] })
		log.Debug("d")
		log.Info("i")
		log.Warn("w")
		log.Error("e")
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			if line == "" {
				continue
			}
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("not JSON: %q", line)
			}
			got = append(got, rec["level"].(string))
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s=%q: levels %v, want %v", LogLevelEnv, env, got, want)
		}
	}
}
