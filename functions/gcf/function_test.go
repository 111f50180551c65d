package gcf

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/testkit/syncbuf"

	"github.com/robothub/robothub/internal/testkit/receivertest"
)

// TestFunction serves the function this package registers in its init through funcframework, as
// Google's runtime does (FUNCTION_TARGET=RobothubWebhooks, configured by the environment), and
// sends it the receiver table.
func TestFunction(t *testing.T) {
	for k, v := range receivertest.Env() {
		t.Setenv(k, v)
	}
	t.Setenv("FUNCTION_TARGET", EntryPoint)
	base := receivertest.StartFuncframework(t)
	reference := receivertest.Reference(t, receivertest.NewReceiver(t, false, nil))
	for _, c := range receivertest.Cases() {
		if c.GoRoute {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			receivertest.Check(t, c, receivertest.Send(t, base, c), reference(c))
		})
	}
}

func TestMisconfiguredFunctionSaysWhy(t *testing.T) {
	var stdout, stderr bytes.Buffer
	env := map[string]string{"WEBHOOK_SECRET": receivertest.Secret}
	h := NewHandler(func(k string) string { return env[k] }, &stdout, &stderr)
	ts := httptest.NewServer(h)
	defer ts.Close()
	got := receivertest.Send(t, ts.URL, receivertest.Cases()[0])
	var body struct{ Error string }
	if err := json.Unmarshal(got.Body, &body); err != nil || got.Status != 500 {
		t.Fatalf("got %d %s", got.Status, got.Body)
	}
	if !strings.Contains(body.Error, "the webhook receiver is not configured: ROBOTHUB_ROUTES is empty") {
		t.Errorf("error %q", body.Error)
	}
	var rec struct{ Severity, Message string }
	if err := json.Unmarshal(stderr.Bytes(), &rec); err != nil || rec.Severity != "ERROR" || !strings.Contains(rec.Message, "ROBOTHUB_ROUTES is empty") {
		t.Errorf("log %q", &stderr)
	}
	if strings.Contains(stderr.String()+string(got.Body), receivertest.Secret) {
		t.Error("the secret leaked")
	}
}

func TestLogLevel(t *testing.T) {
	var stderr bytes.Buffer
	env := map[string]string{"ROBOTHUB_ROUTES": "a=log", LogLevelEnv: "warn"}
	NewHandler(func(k string) string { return env[k] }, &bytes.Buffer{}, &stderr)
	// An open receiver warns at start; at WARN that is the only line.
	var rec struct{ Severity, Message string }
	if err := json.Unmarshal(stderr.Bytes(), &rec); err != nil || rec.Severity != "WARNING" {
		t.Fatalf("log %q", &stderr)
	}
	stderr.Reset()
	env[LogLevelEnv] = "error"
	NewHandler(func(k string) string { return env[k] }, &bytes.Buffer{}, &stderr)
	if stderr.Len() != 0 {
		t.Errorf("LOG_LEVEL=error logged %q", &stderr)
	}
}

// TestLocalCommand builds cmd/ and runs it as a user would to try the function locally.
func TestLocalCommand(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "robothub-gcf")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd: %v\n%s", err, out)
	}
	port := receivertest.FreePort(t)
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PORT=" + port,
		"ROBOTHUB_ROUTES=" + receivertest.Routes, "WEBHOOK_SECRET=" + receivertest.Secret}
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	failed := make(chan error, 1)
	go func() { failed <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-failed })
	base := "http://127.0.0.1:" + port
	receivertest.WaitHealthy(t, base, failed)
	c := receivertest.Cases()[0]
	if got := receivertest.Send(t, base, c); got.Status != 200 || !bytes.Contains(got.Body, []byte("logged repo.content update")) {
		t.Fatalf("delivery: %d %s", got.Status, got.Body)
	}
	if !strings.Contains(stderr.String(), `"severity":"INFO","message":"serving the function","target":"RobothubWebhooks","url":"http://127.0.0.1:`+port+`/"`) {
		t.Errorf("start line missing:\n%s", stderr)
	}
}
