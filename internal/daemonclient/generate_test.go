package daemonclient

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// daemonclient.gen.go is what the pinned oapi-codegen makes of docs/robot-api.openapi.json today:
// the test runs client.go's go:generate line itself, writing into a temporary directory. Go caches
// the generator's binary (go run pkg@version), so after the first run this takes about a second.
func TestGeneratedClientIsCurrent(t *testing.T) {
	src, err := os.ReadFile("client.go")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for line := range strings.Lines(string(src)) {
		if rest, ok := strings.CutPrefix(line, "//go:generate "); ok {
			args = strings.Fields(rest)
		}
	}
	out := -1
	for i, a := range args {
		if a == "-o" && i+1 < len(args) {
			out = i + 1
		}
	}
	if len(args) < 2 || args[0] != "go" || out < 0 {
		t.Fatalf("client.go has no `//go:generate go run ... -o FILE` line: %q", args)
	}
	committed, err := os.ReadFile(args[out])
	if err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(t.TempDir(), filepath.Base(args[out]))
	args[out] = fresh
	cmd := exec.Command(args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	generated, err := os.ReadFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(generated, committed) {
		t.Fatalf("internal/daemonclient/daemonclient.gen.go is not what docs/robot-api.openapi.json gives: run `go generate ./internal/daemonclient` and commit it (%d bytes generated, %d committed)", len(generated), len(committed))
	}
}
