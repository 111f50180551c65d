package readmetest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/testkit/readmetest"
)

// TestLayoutNamesEveryPackage keeps the README's layout true: every package of the module is a
// directory the layout lists, or is named ("name/") in the description of the nearest directory
// above it that the layout lists. A newcomer reads there what each room holds.
func TestLayoutNamesEveryPackage(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	layout := readmetest.Layout(md)
	if len(layout) < 10 {
		t.Fatalf("README's layout lists %d directories: %v", len(layout), layout)
	}
	cmd := exec.Command("go", "list", "-f", "{{.Dir}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, dir)
		if err != nil || rel == "." {
			continue
		}
		rel = filepath.ToSlash(rel) + "/"
		if _, ok := layout[rel]; ok {
			continue
		}
		named := false
		for above := rel; !named; {
			i := strings.LastIndex(strings.TrimSuffix(above, "/"), "/")
			if i < 0 {
				break
			}
			above = above[:i+1]
			if desc, ok := layout[above]; ok {
				// The rest of the path below the listed directory, or its last element, is named.
				below := strings.TrimPrefix(rel, above)
				last := below[strings.LastIndex(strings.TrimSuffix(below, "/"), "/")+1:]
				named = strings.Contains(desc, below) || strings.Contains(desc, last)
				break
			}
		}
		if !named {
			t.Errorf("package %s is not in README.md's layout: list it, or name it (%s) in its parent's description", rel, rel[strings.LastIndex(strings.TrimSuffix(rel, "/"), "/")+1:])
		}
	}
}

func TestLayoutParsesTheTree(t *testing.T) {
	md := []byte("# x\n\n## Layout\n\n```\ncore/      the domain\n  webhook/  the receiver: payloads,\n            spaces/ and more\n  a/ b/     two at once\ninternal/  shared\n  hubemu/   the hub\n```\n")
	got := readmetest.Layout(md)
	for path, want := range map[string]string{"core/": "the domain", "core/webhook/": "the receiver: payloads, spaces/ and more",
		"core/a/": "two at once", "core/b/": "two at once", "internal/hubemu/": "the hub"} {
		if got[path] != want {
			t.Errorf("Layout[%q] = %q, want %q", path, got[path], want)
		}
	}
	if len(got) != 6 {
		t.Errorf("Layout = %q, want 6 entries", got)
	}
}

// TestLayoutRoomsOwnTheirTests keeps the README's word on robotd: each of its rooms that serves
// HTTP (a package under robotd/ importing net/http) has tests of its own, not only the daemon's
// integration tests in robotd's root.
func TestLayoutRoomsOwnTheirTests(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{len .TestGoFiles}} {{len .XTestGoFiles}} {{join .Imports ","}}`, "./robotd/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rooms := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || strings.HasSuffix(f[0], "/robotd") || !slices.Contains(strings.Split(f[3], ","), "net/http") {
			continue
		}
		rooms++
		if f[1] == "0" && f[2] == "0" {
			t.Errorf("%s serves HTTP and has no tests: test its handlers there, over small fakes of what it needs", f[0])
		}
	}
	if rooms < 5 {
		t.Fatalf("found %d rooms of robotd serving HTTP: %q", rooms, out)
	}
}
