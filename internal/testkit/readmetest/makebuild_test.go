package readmetest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// make build (the first step of make run) says what it compiles: a line when it starts and one
// with the count when it is done, and a compiler's error passes through and fails it. A fresh
// clone's build was minutes of silence. Run on a module of one small program with a cold build
// cache, through the repository's Makefile.
func TestMakeBuildSaysWhatItCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles Go's runtime into a cold cache")
	}
	makefile, err := filepath.Abs("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(mod, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/hello\n\ngo 1.26\n")
	write("cmd/hello/main.go", "package main\n\nfunc main() {}\n")
	makeBuild := func() (string, error) {
		cmd := exec.Command("make", "-f", makefile, "build", "BUILD_PKGS=./cmd/...", "BIN="+filepath.Join(mod, "bin"))
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOCACHE="+filepath.Join(mod, "cache"), "GOFLAGS=", "MAKEFLAGS=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := makeBuild()
	if err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	if !strings.Contains(out, "build: compiling the binaries into "+filepath.Join(mod, "bin")+"/ (at most ") ||
		!regexp.MustCompile(`build: done, [1-9][0-9]* packages compiled in [0-9]+s`).MatchString(out) {
		t.Errorf("make build on a cold cache does not say what it compiles:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(mod, "bin", "hello")); err != nil {
		t.Errorf("make build wrote no binary: %v", err)
	}
	write("cmd/hello/main.go", "package main\n\nfunc main() { var x int = \"s\"; _ = x }\n")
	out, err = makeBuild()
	if err == nil || !strings.Contains(out, `cannot use "s" (untyped string constant) as int value`) {
		t.Errorf("a compile error: make build exited %v with\n%s", err, out)
	}
}
