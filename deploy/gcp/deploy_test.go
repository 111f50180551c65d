// Package gcp holds the tests of deploy.sh, the Cloud Functions deploy script.
package gcp

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/testkit/receivertest"
)

const secretValue = "hub-secret-d41d8cd9"

// fakeGcloud writes a gcloud that records its arguments and stdin in log, one call per line, and
// fails `secrets describe` (the secret does not exist yet).
func fakeGcloud(t *testing.T) (path, log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "calls.log")
	path = filepath.Join(dir, "gcloud")
	script := "#!/bin/sh\n" +
		"stdin=''; if [ \"$1 $2 $3\" = 'secrets versions add' ]; then stdin=$(cat); fi\n" +
		"echo \"$* | stdin=$stdin\" >> " + log + "\n" +
		"[ \"$1 $2\" != 'secrets describe' ]\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, log
}

// deploy runs deploy.sh with args and env (plus PATH and a TMPDIR private to the test).
func deploy(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"deploy.sh"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TMPDIR=" + t.TempDir()}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// deployCommand returns the printed gcloud functions deploy command line.
func deployCommand(t *testing.T, out string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, " functions deploy ") {
			return line
		}
	}
	t.Fatalf("no functions deploy command in:\n%s", out)
	return ""
}

func TestDryRunPrintsTheCommand(t *testing.T) {
	gcloud, calls := fakeGcloud(t)
	out, errOut, code := deploy(t, map[string]string{"GCLOUD": gcloud, "WEBHOOK_SECRET": secretValue},
		"--dry-run", "--project", "my-proj", "--region", "europe-west1", "--routes", "hello=log;build=exec:make build;it's=log")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(calls); err == nil {
		b, _ := os.ReadFile(calls)
		t.Fatalf("a dry run called gcloud:\n%s", b)
	}
	if strings.Contains(out+errOut, secretValue) {
		t.Fatal("the secret was printed")
	}
	cmd := deployCommand(t, out)
	for _, want := range []string{
		"+ " + gcloud + " functions deploy robothub-webhooks ", " --gen2 ", " --runtime go126 ", " --trigger-http ",
		" --allow-unauthenticated ", " --region europe-west1 ", " --project my-proj ", " --entry-point RobothubWebhooks ",
		" --set-secrets WEBHOOK_SECRET=robothub-webhook-secret:latest ", " --source ", " --env-vars-file ",
	} {
		if !strings.Contains(cmd+" ", want) {
			t.Errorf("deploy command lacks %q:\n%s", want, cmd)
		}
	}
	for _, want := range []string{
		"+ " + gcloud + " secrets create robothub-webhook-secret --replication-policy=automatic --project my-proj",
		`+ printf %s "$WEBHOOK_SECRET" | ` + gcloud + " secrets versions add robothub-webhook-secret --data-file=- --project my-proj",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	envFile := regexp.MustCompile(`--env-vars-file (\S+)`).FindStringSubmatch(cmd)[1]
	b, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != "ROBOTHUB_ROUTES: 'hello=log;build=exec:make build;it''s=log'\n" {
		t.Errorf("env file %q", got)
	}
	source := regexp.MustCompile(`--source (\S+)`).FindStringSubmatch(cmd)[1]
	for _, f := range []string{"function.go", "go.mod", "go.sum", "functions/gcf/function.go", "adapters/gcf/adapter.go", ".gcloudignore"} {
		if _, err := os.Stat(filepath.Join(source, f)); err != nil {
			t.Errorf("staged source lacks %s", f)
		}
	}
}

func TestNoRoutes(t *testing.T) {
	out, errOut, code := deploy(t, nil, "--dry-run")
	if code != 2 || !strings.Contains(errOut, "no routes: pass --routes 'hello=log' or set ROBOTHUB_ROUTES") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	_, errOut, code = deploy(t, nil, "--bogus")
	if code != 2 || !strings.Contains(errOut, "unknown argument: --bogus") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// TestDeployCallsGcloud runs the script for real against a gcloud that records its calls: the
// secret reaches gcloud on stdin only, and the deploy gets the flags the dry run shows.
func TestDeployCallsGcloud(t *testing.T) {
	gcloud, calls := fakeGcloud(t)
	out, errOut, code := deploy(t, map[string]string{"GCLOUD": gcloud, "WEBHOOK_SECRET": secretValue, "ROBOTHUB_ROUTES": "hello=log"},
		"--project", "my-proj")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{
		"secrets describe robothub-webhook-secret --project my-proj | stdin=",
		"secrets create robothub-webhook-secret --replication-policy=automatic --project my-proj | stdin=",
		"secrets versions add robothub-webhook-secret --data-file=- --project my-proj | stdin=" + secretValue,
		"functions deploy robothub-webhooks --gen2 --runtime go126 --trigger-http --allow-unauthenticated --region us-central1 --project my-proj --source ",
	}
	if len(lines) != len(want) {
		t.Fatalf("gcloud calls:\n%s", b)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("call %d: %q, want %q...", i, lines[i], w)
		}
	}
	if strings.Contains(out+errOut, secretValue) || strings.Contains(strings.Join(lines[:2], "")+lines[3], secretValue) {
		t.Error("the secret appeared outside gcloud's stdin")
	}
	source := regexp.MustCompile(`--source (\S+)`).FindStringSubmatch(lines[3])[1]
	if _, err := os.Stat(source); !os.IsNotExist(err) {
		t.Errorf("the staged source %s was not removed after the deploy", source)
	}
}

// buildpackMain is what Google's Go buildpack generates for a function registered with
// functions.HTTP: a main that imports the source's root package and serves FUNCTION_TARGET.
const buildpackMain = `package main

import (
	"log"
	"os"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"

	_ "github.com/robothub/robothub"
)

func main() {
	if err := funcframework.StartHostPort("127.0.0.1", os.Getenv("PORT")); err != nil {
		log.Fatal(err)
	}
}
`

// TestStagedSourceServesTheFunction builds the staged source as the buildpack lays it out (its
// main in a subdirectory of the function's module) and runs it as Cloud Functions would.
func TestStagedSourceServesTheFunction(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the staged source")
	}
	out, errOut, code := deploy(t, nil, "--dry-run", "--routes", receivertest.Routes)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	source := regexp.MustCompile(`--source (\S+)`).FindStringSubmatch(deployCommand(t, out))[1]
	app := filepath.Join(source, "functions.local", "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "main.go"), []byte(buildpackMain), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "function")
	build := exec.Command("go", "build", "-o", bin, "./functions.local/app")
	build.Dir = source
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in the staged source: %v\n%s", err, b)
	}

	port := receivertest.FreePort(t)
	fn := exec.Command(bin)
	fn.Env = []string{"PATH=" + os.Getenv("PATH"), "PORT=" + port, "FUNCTION_TARGET=RobothubWebhooks", "K_SERVICE=robothub-webhooks",
		"ROBOTHUB_ROUTES=" + receivertest.Routes, "WEBHOOK_SECRET=" + receivertest.Secret}
	if err := fn.Start(); err != nil {
		t.Fatal(err)
	}
	failed := make(chan error, 1)
	go func() { failed <- fn.Wait() }()
	t.Cleanup(func() { _ = fn.Process.Kill(); <-failed })
	base := "http://127.0.0.1:" + port
	receivertest.WaitHealthy(t, base, failed)
	for _, c := range receivertest.Cases()[:6] {
		if got := receivertest.Send(t, base, c); got.Status != c.Status {
			t.Errorf("%s: %d %s, want %d", c.Name, got.Status, got.Body, c.Status)
		}
	}
}
