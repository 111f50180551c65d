// Package space holds the tests of the hub Space that runs the receiver: its README front matter,
// its Dockerfile, and the command the Dockerfile runs. (Docker itself cannot run here.)
package space

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/testkit/syncbuf"

	"github.com/robothub/robothub/internal/testkit/receivertest"
)

// frontMatter reads the YAML front matter of a README: flat "key: value" lines between "---".
func frontMatter(t *testing.T, readme []byte) map[string]string {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(readme))
	if !sc.Scan() || sc.Text() != "---" {
		t.Fatal("README.md does not start with a --- front matter line")
	}
	fields := map[string]string{}
	for sc.Scan() {
		line := sc.Text()
		if line == "---" {
			return fields
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(k) == "" || strings.HasPrefix(line, " ") {
			t.Fatalf("front matter line %q is not key: value", line)
		}
		if _, dup := fields[k]; dup {
			t.Fatalf("front matter key %q twice", k)
		}
		fields[k] = strings.Trim(strings.TrimSpace(v), `"'`)
	}
	t.Fatal("the front matter has no closing ---")
	return nil
}

func TestReadmeFrontMatter(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	fm := frontMatter(t, readme)
	for k, want := range map[string]string{"sdk": "docker", "app_port": "7860"} {
		if fm[k] != want {
			t.Errorf("front matter %s = %q, want %q", k, fm[k], want)
		}
	}
	for _, k := range []string{"title", "emoji", "colorFrom", "colorTo"} {
		if fm[k] == "" {
			t.Errorf("front matter has no %s", k)
		}
	}
	for _, want := range []string{"WEBHOOK_SECRET", "ROBOTHUB_ROUTES", "make space", "git push", "/webhooks/"} {
		if !bytes.Contains(readme, []byte(want)) {
			t.Errorf("the steps do not mention %s", want)
		}
	}
}

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct{ op, args string }

func dockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur string
	for _, line := range strings.Split(string(src), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		cur += " " + strings.TrimSuffix(trimmed, `\`)
		if strings.HasSuffix(trimmed, `\`) {
			continue
		}
		op, args, _ := strings.Cut(strings.TrimSpace(cur), " ")
		out = append(out, instruction{strings.ToUpper(op), strings.TrimSpace(args)})
		cur = ""
	}
	return out
}

// TestSpaceFiles assembles the Space with `make space` and checks that everything the Dockerfile
// refers to is there and agrees with the repository.
func TestSpaceFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "space")
	if out, err := exec.Command("make", "-C", "../..", "space", "SPACE_DIR="+dir).CombinedOutput(); err != nil {
		t.Fatalf("make space: %v\n%s", err, out)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if fm := frontMatter(t, readme); fm["sdk"] != "docker" {
		t.Errorf("the Space's README.md is not the one with the front matter")
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)[1]

	var cmd []string
	seen := map[string]bool{}
	for _, in := range dockerfile(t, filepath.Join(dir, "Dockerfile")) {
		seen[in.op] = true
		switch in.op {
		case "ARG":
			if v, ok := strings.CutPrefix(in.args, "GO_VERSION="); ok && v != string(goVersion) {
				t.Errorf("GO_VERSION %s, but go.mod says go %s", v, goVersion)
			}
		case "COPY":
			if strings.HasPrefix(in.args, "--from=") {
				continue
			}
			f := strings.Fields(in.args)
			for _, src := range f[:len(f)-1] {
				if _, err := os.Stat(filepath.Join(dir, src)); err != nil {
					t.Errorf("COPY %s: not in the Space's files", src)
				}
			}
		case "RUN":
			if m := regexp.MustCompile(`go build .* (\./\S+)$`).FindStringSubmatch(in.args); m != nil {
				if _, err := os.Stat(filepath.Join(dir, m[1], "main.go")); err != nil {
					t.Errorf("go build %s: no main package there", m[1])
				}
			}
		case "EXPOSE":
			if in.args != "7860" {
				t.Errorf("EXPOSE %s, want the app_port 7860", in.args)
			}
		case "USER":
			if in.args != "user" {
				t.Errorf("USER %s, want the uid-1000 user", in.args)
			}
		case "CMD":
			if err := json.Unmarshal([]byte(in.args), &cmd); err != nil {
				t.Errorf("CMD is not in exec form: %s", in.args)
			}
		}
	}
	for _, op := range []string{"FROM", "COPY", "RUN", "USER", "CMD"} {
		if !seen[op] {
			t.Errorf("the Dockerfile has no %s", op)
		}
	}
	if len(cmd) < 2 || cmd[0] != "robothub-server" || cmd[1] != "serve" {
		t.Errorf("CMD %v, want robothub-server serve ...", cmd)
	}
}

// listenAddress returns the local address (hex, as /proc/net/tcp shows it) of the socket
// listening on port, if /proc tells.
func listenAddress(t *testing.T, port string) (string, bool) {
	t.Helper()
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	suffix := fmt.Sprintf(":%04X", p)
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) > 3 && f[3] == "0A" && strings.HasSuffix(f[1], suffix) { // 0A: LISTEN
				return strings.TrimSuffix(f[1], suffix), true
			}
		}
	}
	t.Log("no /proc/net/tcp: the listen address is not checked")
	return "", false
}

// TestSpaceCommand builds robothub-server and runs the Dockerfile's CMD as the Space runs it (SPACE_HOST,
// PORT, ROBOTHUB_ROUTES and WEBHOOK_SECRET in the environment), then sends it the receiver table.
func TestSpaceCommand(t *testing.T) {
	var cmdline []string
	for _, in := range dockerfile(t, "Dockerfile") {
		if in.op == "CMD" {
			if err := json.Unmarshal([]byte(in.args), &cmdline); err != nil {
				t.Fatal(err)
			}
		}
	}
	bin := filepath.Join(t.TempDir(), cmdline[0])
	if out, err := exec.Command("go", "build", "-o", bin, "../../cli/robothub-server").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	port := receivertest.FreePort(t)
	cmd := exec.Command(bin, cmdline[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "SPACE_HOST=alice-robothub-webhooks.hf.space",
		"SPACE_ID=alice/robothub-webhooks", "PORT=" + port, "ROBOTHUB_ROUTES=" + receivertest.Routes, "WEBHOOK_SECRET=" + receivertest.Secret}
	stdout, stderr := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	failed := make(chan error, 1)
	go func() { failed <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-failed })
	base := "http://127.0.0.1:" + port
	receivertest.WaitHealthy(t, base, failed)

	reference := receivertest.Reference(t, receivertest.NewReceiver(t, false, nil))
	for _, c := range receivertest.Cases() {
		if c.GoRoute {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			receivertest.Check(t, c, receivertest.Send(t, base, c), reference(c))
		})
	}
	landing := receivertest.Send(t, base, receivertest.Case{Method: "GET", Path: "/"})
	if !bytes.Contains(landing.Body, []byte("https://alice-robothub-webhooks.hf.space/webhooks/hello")) {
		t.Errorf("the landing page does not show the Space's public address:\n%.400s", landing.Body)
	}
	if addr, ok := listenAddress(t, port); ok && addr != "00000000" && addr != "00000000000000000000000000000000" {
		t.Errorf("on a Space the receiver must listen on every interface, it listens on %s", addr)
	}
	if strings.Contains(stdout.String()+stderr.String(), receivertest.Secret) {
		t.Error("the secret leaked into the output")
	}
}

// make space ships the repository's files, never a git repository someone cloned inside it (the
// README's local hub section clones a space): `git ls-files --others` names such a folder, and tar
// would copy it whole, its .git included.
func TestSpaceLeavesNestedRepositoriesOut(t *testing.T) {
	makefile, err := filepath.Abs("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for name, content := range map[string]string{"main.go": "package main\n", "deploy/space/Dockerfile": "FROM scratch\n",
		"deploy/space/README.md": "---\nsdk: docker\n---\n", "deploy/space/.dockerignore": "*.test\n", "wave/README.md": "# wave\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(filepath.Join(repo, "wave"), "init", "-q")
	git(filepath.Join(repo, "wave"), "add", "README.md")
	git(filepath.Join(repo, "wave"), "commit", "-q", "-m", "first commit")
	git(repo, "init", "-q")
	git(repo, "add", "main.go", "deploy")
	dir := filepath.Join(t.TempDir(), "space")
	if out, err := exec.Command("make", "-C", repo, "-f", makefile, "space", "SPACE_DIR="+dir).CombinedOutput(); err != nil {
		t.Fatalf("make space: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "main.go")); err != nil {
		t.Errorf("the repository's own file is missing: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "wave", ".git")); err == nil {
		t.Error("make space shipped wave/.git, a repository cloned inside the working tree")
	}
}
