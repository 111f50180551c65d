package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testCache is the XDG_CACHE_HOME of every run in this package: the base venv of check is built
// once for all the tests.
var testCache string

func TestMain(m *testing.M) {
	// Re-executed to run the program once (see runCLIProcess).
	if spec := os.Getenv("ROBOT_APP_ASSISTANT_TEST_RUN"); spec != "" {
		var p struct {
			Args []string
			Env  map[string]string
		}
		if err := json.Unmarshal([]byte(spec), &p); err != nil {
			panic(err)
		}
		os.Exit(run(context.Background(), p.Args, func(k string) string { return p.Env[k] }, strings.NewReader(""), os.Stdout, os.Stderr))
	}
	dir, err := os.MkdirTemp("", "robot-app-assistant-test-")
	if err != nil {
		panic(err)
	}
	testCache = filepath.Join(dir, "cache")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// skipShort skips a test that builds Python venvs or runs a daemon under -short (make check): those
// run in make test.
func skipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds Python venvs or runs a daemon: not under -short")
	}
}

// skipVenvCommands skips under -short a run of check or publish (or create --publish): they build
// the app into a venv.
func skipVenvCommands(t testing.TB, args []string) {
	t.Helper()
	if slices.Contains(args, "check") || slices.Contains(args, "publish") || slices.Contains(args, "--publish") {
		skipShort(t)
	}
}

// result is what one run of the program did.
type result struct {
	code           int
	stdout, stderr string
}

// runCLI runs robot-app-assistant in-process with args and an environment of its own: HOME is a
// fresh directory and the cache is the package's; vars adds or overrides variables.
// testEnv is the environment of a command run by a test: its own HOME, the shared cache of check's
// base venvs, and Debian's interpreter whose numpy, FastAPI and the robot SDK's other dependencies
// the check venvs see (no package index is reachable here; a laptop's check installs them from
// its index).
func testEnv(t testing.TB) map[string]string {
	return map[string]string{"HOME": t.TempDir(), "XDG_CACHE_HOME": testCache,
		envPython: "/usr/bin/python3", envSystemSite: "1"}
}

func runCLI(t testing.TB, vars map[string]string, args ...string) result {
	t.Helper()
	skipVenvCommands(t, args)
	env := testEnv(t)
	for k, v := range vars {
		env[k] = v
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"robot-app-assistant"}, args...), func(k string) string { return env[k] },
		strings.NewReader(""), &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// runCLIProcess is runCLI in a child process (this test binary, re-executed), for tests that run
// at the same time as others: urfave/cli/v2 writes its global cli.HelpFlag on every run, a data
// race between two runs in one process. environ adds variables to the child's own environment,
// which the commands it runs (pip) inherit.
func runCLIProcess(t testing.TB, vars map[string]string, environ []string, args ...string) result {
	t.Helper()
	skipVenvCommands(t, args)
	env := testEnv(t)
	for k, v := range vars {
		env[k] = v
	}
	spec, err := json.Marshal(map[string]any{"Args": append([]string{"robot-app-assistant"}, args...), "Env": env})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), environ...), "ROBOT_APP_ASSISTANT_TEST_RUN="+string(spec))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// mustCreate creates an app with the default template (or the one in args) and returns its folder.
func mustCreate(t testing.TB, name string, args ...string) string {
	t.Helper()
	dest := t.TempDir()
	r := runCLI(t, nil, append([]string{"create", name, dest}, args...)...)
	if r.code != 0 {
		t.Fatalf("create %s: exit %d\n%s\n%s", name, r.code, r.stdout, r.stderr)
	}
	return filepath.Join(dest, name)
}

func TestUsage(t *testing.T) {
	r := runCLI(t, nil, "frobnicate")
	if r.code != exitUsage || !strings.Contains(r.stderr, "unknown command 'frobnicate'") {
		t.Fatalf("unknown command: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runCLI(t, nil, "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "create") || !strings.Contains(r.stdout, "check") || !strings.Contains(r.stdout, "publish") {
		t.Fatalf("--help: exit %d\n%s", r.code, r.stdout)
	}
	for _, args := range [][]string{{"create", "only_name"}, {"check"}, {"check", "a", "b"}, {"publish"}, {"create", "--bogus", "a", "b"}} {
		r := runCLI(t, nil, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "robot-app-assistant:") {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	if r := runCLI(t, nil, "--log-level", "loud", "check", "."); r.code != exitUsage || !strings.Contains(r.stderr, "--log-level") {
		t.Errorf("bad --log-level: exit %d, %q", r.code, r.stderr)
	}
}
