package readmetest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/readmetest"
	"github.com/robothub/robothub/internal/testkit/syncbuf"
)

// Tags of blocks the runner does not run, and why (README.md, "The README is a test").
var skipped = map[string]string{
	"internet": "needs the internet",
	"account":  "needs an account on the public hub",
	"cloud":    "needs a cloud account",
	"robot":    "needs a robot",
	"overview": "lists commands that run further down",
	"bench":    "a benchmark: make bench runs it",
}

// The README's fixed ports: each run gets free ones instead, in the blocks' text and in make's
// variables (make run HUB_PORT=... RECEIVER_PORT=... DAEMON_PORT=... BROKER_PORT=..., make lambda-run
// LAMBDA_PORT=...); 8001 is the second robot's, in the blocks only.
var readmePorts = []struct{ port, makeVar string }{
	{"7861", "HUB_PORT"}, {"7860", "RECEIVER_PORT"}, {"8000", "DAEMON_PORT"}, {"1883", "BROKER_PORT"},
	{"8080", "GCF_PORT"}, {"9000", "LAMBDA_PORT"}, {"9001", "LAMBDA_API_PORT"}, {"8001", ""},
}

// TestREADME runs every shell block of README.md as written, in order, as a newcomer pastes them:
// in a fresh copy of the repository, with a fresh HOME (so every data dir is new) and ports of its
// own. A block fails the test when it exits non-zero. `sh background wait=PORTS` blocks start a
// server and run until their section ends; the runner waits for their ports first.
func TestREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs the whole system, as the README does")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmetest.ShellBlocks(md)
	if len(blocks) == 0 {
		t.Fatal("README.md has no shell block")
	}
	work := copyRepo(t, root)
	env, ports := runnerEnv(t, work)

	var running []*background
	stopAll := func() {
		for _, b := range running {
			b.stop(t)
		}
		running = nil
	}
	t.Cleanup(stopAll)
	section := ""
	for _, b := range blocks {
		if b.Section != section {
			stopAll() // a new section of the README starts from a quiet machine, as its reader would
			section = b.Section
		}
		name := fmt.Sprintf("README.md:%d", b.Line)
		if why := skipReason(b); why != "" {
			t.Logf("%s skipped (%s): %s", name, why, firstLine(b.Text))
			continue
		}
		script := ports.rewrite(b.Text)
		start := time.Now()
		if b.Has("background") {
			bg := startBackground(t, name, work, env, script)
			running = append(running, bg)
			var wait []string
			if w := b.Attrs["wait"]; w != "" {
				for _, p := range strings.Split(w, ",") {
					wait = append(wait, ports.rewrite(p))
				}
			}
			bg.waitPorts(t, wait, 10*time.Minute)
			t.Logf("%s serving after %s", name, time.Since(start).Round(time.Millisecond))
			continue
		}
		out, err := runBlock(work, env, script, 10*time.Minute)
		if err != nil {
			for _, bg := range running {
				t.Logf("%s, started before, wrote:\n%s", bg.name, tail(bg.out.String(), 40))
			}
			t.Fatalf("%s failed: %v\n%s\n--- its output:\n%s", name, err, script, tail(out, 60))
		}
		t.Logf("%s ok in %s", name, time.Since(start).Round(time.Millisecond))
	}
}

func skipReason(b readmetest.Block) string {
	for _, tag := range b.Tags {
		if why, ok := skipped[tag]; ok {
			return why
		}
	}
	return ""
}

type portMap struct {
	re *regexp.Regexp
	to map[string]string
}

func (p portMap) rewrite(s string) string {
	return p.re.ReplaceAllStringFunc(s, func(m string) string { return p.to[m] })
}

// runnerEnv is the blocks' environment, a newcomer's: the test's own, without the user's hub, token,
// daemon and pip settings, with a fresh HOME (so no git identity either), the machine's PATH and
// python3 with bin/ in front, the Go caches kept (builds stay quick), and free ports in make's
// variables. Nothing else helps: what this machine lacks (a Python index) the README must say how
// to do without, as the newcomer would read it.
func runnerEnv(t *testing.T, work string) ([]string, portMap) {
	home := t.TempDir()
	var fixed []string
	for _, p := range readmePorts {
		fixed = append(fixed, p.port)
	}
	pm := portMap{re: regexp.MustCompile(`\b(` + strings.Join(fixed, "|") + `)\b`), to: map[string]string{}}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "HF_"), strings.HasPrefix(k, "ROBOT_DAEMON_"), strings.HasPrefix(k, "XDG_"),
			strings.HasPrefix(k, "ROBOTHUB_"), strings.HasPrefix(k, "PIP_"), strings.HasPrefix(k, "GIT_"),
			k == "WEBHOOK_SECRET", k == "HOME", k == "PATH", k == "MAKEFLAGS", k == "MFLAGS":
			continue
		}
		env = append(env, kv)
	}
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, v+"="+strings.TrimSpace(string(out)))
	}
	for _, p := range readmePorts {
		free := strconv.Itoa(freePort(t))
		pm.to[p.port] = free
		if p.makeVar != "" {
			env = append(env, p.makeVar+"="+free)
		}
	}
	// bin/ on PATH, as make run's banner says to do; the system's git configuration stays out
	// (a machine's may name a user), so that git knows nobody, as in a fresh account.
	env = append(env, "HOME="+home, "PATH="+filepath.Join(work, "bin")+":"+os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1")
	return env, pm
}

// copyRepo copies the repository's files (tracked, and new ones not ignored: what a clone of this
// change has) into a fresh directory, as a newcomer's clone.
func copyRepo(t *testing.T, root string) string {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("listing the repository's files: %v", err)
	}
	work := filepath.Join(t.TempDir(), "robothub")
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src, dst := filepath.Join(root, f), filepath.Join(work, f)
		fi, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the worktree, not yet in the index
		} else if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, dst); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	// A clone is a git repository: blocks that create apps inside it must not leave files git shows.
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "clone"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return work
}

// runBlock runs a block as a pasted script: bash, stopping at the first command that fails.
func runBlock(dir string, env []string, script string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// background is a block that runs a server until its section ends.
type background struct {
	name string
	cmd  *exec.Cmd
	out  *syncbuf.Buffer
	done chan error
}

func startBackground(t *testing.T, name, dir string, env []string, script string) *background {
	cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &background{name: name, cmd: cmd, out: out, done: make(chan error, 1)}
	go func() { b.done <- cmd.Wait() }()
	return b
}

// waitPorts waits until every port accepts connections on loopback; the block ending first fails.
func (b *background) waitPorts(t *testing.T, ports []string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for _, p := range ports {
		for {
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+p, time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case err := <-b.done:
				t.Fatalf("%s exited (%v) before port %s answered:\n%s", b.name, err, p, tail(b.out.String(), 60))
			case <-time.After(200 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: port %s did not answer within %s:\n%s", b.name, p, timeout, tail(b.out.String(), 60))
			}
		}
	}
}

// stop is Ctrl-C to the block's process group, as in a terminal. What a block started with & in a
// script ignores SIGINT (bash does that to background commands), as it would keep running after
// Ctrl-C in a terminal too: it gets SIGTERM once the block has ended. SIGKILL after 30 s, and an error.
func (b *background) stop(t *testing.T) {
	pgid := b.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGINT)
	select {
	case <-b.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-b.done
		t.Errorf("%s did not stop within 30 s of Ctrl-C:\n%s", b.name, tail(b.out.String(), 40))
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(-pgid, 0) == nil { // nothing of the block may outlive it: a server, an app
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			t.Errorf("%s left processes running 30 s after it ended", b.name)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func firstLine(s string) string { l, _, _ := strings.Cut(strings.TrimSpace(s), "\n"); return l }

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
