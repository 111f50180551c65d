package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/hubtest"

	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// built builds robothub and robothub-server into one directory once, as make build places them.
var built = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "robothub-front-")
	if err != nil {
		return "", err
	}
	if out, err := exec.Command("go", "build", "-o", dir+string(filepath.Separator), ".", "../robothub-server").CombinedOutput(); err != nil {
		return "", &buildError{err: err, out: out}
	}
	return dir, nil
})

type buildError struct {
	err error
	out []byte
}

func (b *buildError) Error() string { return "go build: " + b.err.Error() + "\n" + string(b.out) }

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := built(); err == nil {
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}

func binaries(t *testing.T) (front, server string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds robothub-server")
	}
	dir, err := built()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "robothub"), filepath.Join(dir, "robothub-server")
}

// robothub runs the built front with env added to a bare environment and returns its output and
// exit code.
func robothub(t *testing.T, bin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}, env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
}

// TestHelpIsRobothubServers: robothub's help and version are robothub-server's, word for word, so
// that the front lists every command the server runs with its usage.
func TestHelpIsRobothubServers(t *testing.T) {
	front, server := binaries(t)
	for _, args := range [][]string{{"--help"}, {"--version"}} {
		want, _, code := robothub(t, server, nil, args...)
		if code != 0 {
			t.Fatalf("robothub-server %v: exit %d", args, code)
		}
		got, _, code := robothub(t, front, nil, args...)
		if code != 0 || got != want {
			t.Errorf("robothub %v (exit %d):\n%s\nrobothub-server's:\n%s", args, code, got, want)
		}
	}
}

// TestServerCommandsAreHandedOver runs robothub-server's commands through the front as a user does:
// their output, their usage errors and exit codes, the shell's completion, and a server that stops
// cleanly on the SIGTERM sent to robothub's own process.
func TestServerCommandsAreHandedOver(t *testing.T) {
	front, server := binaries(t)

	keys := t.TempDir()
	out, errOut, code := robothub(t, front, nil, "release", "keygen", "--out", keys)
	if code != 0 {
		t.Fatalf("robothub release keygen: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(keys, "release.pub")); err != nil {
		t.Errorf("release keygen made no release.pub (stdout %q): %v", out, err)
	}

	_, errOut, code = robothub(t, front, nil, "hub", "serve", "--no-such-flag")
	if code != 2 || !strings.Contains(errOut, "robothub: flag provided but not defined: -no-such-flag") {
		t.Errorf("robothub hub serve --no-such-flag: exit %d, stderr %q; want 2 and robothub-server's usage error", code, errOut)
	}

	// help of a command is the command's own, with its subcommands and flags.
	want, _, _ := robothub(t, server, nil, "hub", "--help")
	for _, args := range [][]string{{"hub", "--help"}, {"hub", "-h"}} {
		if out, _, code := robothub(t, front, nil, args...); code != 0 || out != want || !strings.Contains(out, "spaces") {
			t.Errorf("robothub %v: exit %d:\n%s\nwant robothub-server's:\n%s", args, code, out, want)
		}
	}

	out, _, code = robothub(t, front, nil, "hub", "--generate-bash-completion")
	if code != 0 || !strings.Contains(out, "serve\n") || !strings.Contains(out, "spaces\n") {
		t.Errorf("completion of robothub hub: exit %d, %q; want the hub's subcommands", code, out)
	}

	cmd := exec.Command(front, "hub", "serve", "--addr", "127.0.0.1:0", "--db", ":memory:")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "Local hub listening on http://127.0.0.1:") {
		t.Fatalf("robothub hub serve printed %q (%v); stderr: %s", line, err, stderr.String())
	}
	go func() { _, _ = bufio.NewReader(stdout).WriteTo(devNull{}) }()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil || !strings.Contains(stderr.String(), "hub emulator stopped") {
			t.Errorf("after SIGTERM: %v, stderr:\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("robothub hub serve did not stop within 20 s of SIGTERM")
	}
}

type devNull struct{}

func (devNull) Write(p []byte) (int, error) { return len(p), nil }

// TestServerNotFoundSaysWhereItLooked: a robothub installed alone says what is missing and how to
// get it, instead of failing on a command it lists.
func TestServerNotFoundSaysWhereItLooked(t *testing.T) {
	front, server := binaries(t)
	alone := filepath.Join(t.TempDir(), "robothub")
	data, err := os.ReadFile(front)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := robothub(t, alone, nil, "dev")
	if code != 1 || !strings.Contains(errOut, `"dev" is a command of robothub-server, which is neither beside this robothub (in `+filepath.Dir(alone)+`) nor on PATH`) {
		t.Errorf("robothub dev without robothub-server: exit %d, stderr %q", code, errOut)
	}
	// --version and webhooks need no server.
	if out, _, code := robothub(t, alone, nil, "--version"); code != 0 || !strings.HasPrefix(out, "robothub version ") {
		t.Errorf("robothub --version alone: exit %d, %q", code, out)
	}
	// $ROBOTHUB_SERVER names it wherever it is.
	if _, errOut, code := robothub(t, alone, []string{ServerEnv + "=" + server}, "release", "keygen", "--out", t.TempDir()); code != 0 {
		t.Errorf("robothub release keygen with $%s: exit %d: %s", ServerEnv, code, errOut)
	}
}

// TestWebhooksRunInTheFront: robothub's own command, in this process, against the local hub.
func TestWebhooksRunInTheFront(t *testing.T) {
	emu := hubtest.Start(t, localhub.Config{})
	token, _ := emu.Token(t, "alice", hubemu.RoleWrite)
	env := map[string]string{"HF_ENDPOINT": emu.URL, "HF_TOKEN": token, "HOME": t.TempDir()}
	getenv := func(k string) string { return env[k] }
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"robothub", "webhooks", "create", "--url", "https://example.com/webhooks/retrain",
		"--watch", "model:alice/bert", "--format", "quiet"}, getenv, strings.NewReader(""), &out, &errOut)
	id := strings.TrimSpace(out.String())
	if code != 0 || id == "" {
		t.Fatalf("webhooks create: exit %d, %q, %s", code, id, errOut.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"robothub", "webhooks", "ls", "--format", "quiet"}, getenv, strings.NewReader(""), &out, &errOut); code != 0 || strings.TrimSpace(out.String()) != id {
		t.Errorf("webhooks ls: exit %d, %q; want %s", code, out.String(), id)
	}
}

// TestHandOverInProcess is the hand-over without exec (Windows, a caller in the same process):
// robothub-server runs as a child whose output is the caller's and whose exit code run returns.
func TestHandOverInProcess(t *testing.T) {
	_, server := binaries(t)
	t.Setenv(ServerEnv, server)
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"robothub", "release", "keygen", "--out", t.TempDir()}, os.Getenv, strings.NewReader(""), &out, &errOut)
	if code != 0 || !strings.Contains(out.String()+errOut.String(), "release.pub") {
		t.Errorf("release keygen in process: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run(context.Background(), []string{"robothub", "fleet", "--nope"}, os.Getenv, strings.NewReader(""), &out, &errOut); code != 2 {
		t.Errorf("fleet --nope in process: exit %d, stderr %q; want 2", code, errOut.String())
	}
}
