package readmetest_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// layers are the README's arrows, lowest first: a package may import packages of its own folder and
// of the folders below its own, never above. cli, robotd and functions are one floor.
var layers = map[string]int{"core": 0, "adapters": 1, "internal": 2, "cli": 3, "robotd": 3, "functions": 3}

const module = "github.com/robothub/robothub/"

// TestImportsFollowTheArrows holds the README's rule against `go list`: cli, robotd, functions ->
// internal -> adapters -> core; internal/testkit is imported by tests only; internal/tools by
// nothing; core imports nothing of ours outside core; robotd imports no flag library outside cmd/.
func TestImportsFollowTheArrows(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", "./...")
	cmd.Dir = root
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(out)
	seen := 0
	for {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		from := strings.TrimPrefix(p.ImportPath, module)
		for _, imp := range p.Imports {
			if why := flagsBroken(from, imp); why != "" {
				t.Errorf("%s imports %s: %s", from, imp, why)
			}
			to, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			if why := arrowBroken(from, to); why != "" {
				t.Errorf("%s imports %s: %s", from, to, why)
			}
		}
		for _, imp := range append(p.TestImports, p.XTestImports...) {
			if to, ours := strings.CutPrefix(imp, module); ours && strings.HasPrefix(to, "internal/tools/") {
				t.Errorf("a test of %s imports %s: internal/tools is run by make, never imported", from, to)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	if seen < 50 {
		t.Fatalf("go list named %d packages", seen)
	}
}

// arrowBroken says why the non-test import from -> to breaks the rule, or "" when it does not.
func arrowBroken(from, to string) string {
	top := func(p string) string { return strings.SplitN(p, "/", 2)[0] }
	switch {
	case strings.HasPrefix(to, "internal/tools/"):
		return "internal/tools is run by make, never imported"
	case strings.HasPrefix(to, "internal/testkit/") && !strings.HasPrefix(from, "internal/testkit/"):
		return "internal/testkit is for tests only"
	case strings.HasPrefix(from, "internal/testkit/") || strings.HasPrefix(from, "internal/tools/"):
		return "" // test kits and tools may use anything they exercise
	case top(from) == "deploy":
		return "deploy holds tests of what deploys; its packages import nothing of the module outside tests"
	}
	lf, okf := layers[top(from)]
	lt, okt := layers[top(to)]
	if !okf || !okt {
		return "a folder the README's arrows do not name"
	}
	if lt > lf {
		return "the arrow runs back up (" + top(from) + " -> " + top(to) + ")"
	}
	return ""
}

// flagLibraries are the command-line libraries: robotd's packages take a typed robotd.Config, and
// only robot-daemon's command (robotd/cmd/) turns flags and variables into one.
var flagLibraries = []string{"github.com/urfave/cli", "github.com/spf13/cobra", "github.com/spf13/pflag", "flag"}

// flagsBroken says why from, a package of ours, may not import imp for its flags, or "".
func flagsBroken(from, imp string) string {
	if from != "robotd" && !strings.HasPrefix(from, "robotd/") || strings.HasPrefix(from, "robotd/cmd/") {
		return ""
	}
	for _, lib := range flagLibraries {
		if imp == lib || strings.HasPrefix(imp, lib+"/") {
			return "robotd takes a typed Config; flags live in robotd/cmd/ (robotdaemon: flags -> robotd.Config)"
		}
	}
	return ""
}

func TestFlagsBroken(t *testing.T) {
	for _, c := range []struct {
		from, imp string
		ok        bool
	}{
		{"robotd", "github.com/urfave/cli/v2", false},
		{"robotd/mediaapi", "flag", false},
		{"robotd/fleetagent", "github.com/urfave/cli/v2", false},
		{"robotd/cmd/robotdaemon", "github.com/urfave/cli/v2", true},
		{"robotd", "github.com/robothub/robothub/robotd/access", true},
		{"robotd", "flagship", true},
		{"cli/robothub", "github.com/urfave/cli/v2", true},
	} {
		if got := flagsBroken(c.from, c.imp) == ""; got != c.ok {
			t.Errorf("%s -> %s: allowed = %v, want %v", c.from, c.imp, got, c.ok)
		}
	}
}

func TestArrowBroken(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"cli/robothub", "robotd", true},
		{"internal/actions", "adapters/mqtt", true},
		{"adapters/hardware", "core/robot", true},
		{"core/apps", "core/fleet", true},
		{"core/apps", "adapters/python", false},
		{"adapters/mqtt", "internal/actions", false},
		{"robotd", "internal/testkit/pyindex", false},
		{"internal/testkit/readmetest", "robotd", true},
		{"cli/robothub", "internal/tools/apidoc", false},
	} {
		if got := arrowBroken(c.from, c.to) == ""; got != c.ok {
			t.Errorf("%s -> %s: allowed = %v, want %v", c.from, c.to, got, c.ok)
		}
	}
}
