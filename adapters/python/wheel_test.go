package python

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/apps"
)

func TestParseEntryPointsAndMetadata(t *testing.T) {
	eps := ParseEntryPoints([]byte("[console_scripts]\nfoo = foo:main\n\n[robot_apps]\n  hello_world = hello_world.main:HelloWorld\nx=y.main:Z [extra]\n"))
	got := eps[apps.EntryPointGroup]
	if len(got) != 2 || got[0] != (apps.EntryPoint{Name: "hello_world", Module: "hello_world.main", Attr: "HelloWorld"}) || got[1].Attr != "Z" {
		t.Fatalf("robot_apps entries: %+v", got)
	}
	m, err := ParseMetadata([]byte("Metadata-Version: 2.1\r\nName: hello-world\nVersion: 1.0\nSummary: a long\n  summary\nRequires-Dist: pytest ; extra == \"test\"\nRequires-Dist: dep>=1.1; python_version >= \"3\"\n\nRequires-Dist: not-a-header\n"))
	if err != nil || m.Name != "hello-world" || m.Version != "1.0" || fmt.Sprint(m.Requires) != `[dep>=1.1; python_version >= "3"]` || len(m.AllRequires) != 2 {
		t.Fatalf("metadata: %+v %v (an extra's requirement or the body must not count)", m, err)
	}
	if _, err := ParseMetadata([]byte("Name x\n")); err == nil {
		t.Fatal("a line that is not a header was read as one")
	}
}

func TestParseRequirement(t *testing.T) {
	for in, want := range map[string]requirement{
		`Dep_X.y>=1.1; python_version >= "3"`: {name: "dep-x-y"},
		`pkg[Fast, io] @ https://h/x.whl`:     {name: "pkg", extras: []string{"fast", "io"}},
		`pytest ; extra == "Test"`:            {name: "pytest", extra: "test"},
	} {
		if got, ok := parseRequirement(in); !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("parseRequirement(%q) = %+v %v, want %+v", in, got, ok, want)
		}
	}
	if !isDirectReference("pkg @ https://h/x.whl") || isDirectReference(`pkg; python_version >= "3"`) || isDirectReference("pkg>=1") {
		t.Error("isDirectReference")
	}
}

// TestInstallCommand checks the command that installs checked files: pip or uv, never an index,
// never dependencies, always replacing.
func TestInstallCommand(t *testing.T) {
	py := filepath.Join("/venv", "bin", "python")
	pip := py + " -I -m pip --disable-pip-version-check --no-input install --no-index --no-deps --force-reinstall"
	for _, c := range []struct {
		name string
		venv *Venv
		iso  bool
		want string
	}{
		{"pip", &Venv{Dir: "/venv", Source: Source{IndexURL: "https://u:secret@idx/simple", WheelDirs: []string{"/w"}}}, false, pip + " a.whl"},
		{"throw-away", &Venv{Dir: "/venv", NoCompile: true}, false, pip + " --no-compile a.whl"},
		{"sdk", &Venv{Dir: "/venv"}, true, pip + " --no-build-isolation a.whl"},
		{"uv", &Venv{Dir: "/venv", Source: Source{UV: "/usr/bin/uv", IndexURL: "https://idx/simple"}}, false,
			"/usr/bin/uv pip install --python " + py + " --no-index --no-deps --reinstall a.whl"},
	} {
		name, args := c.venv.installCommand(c.iso, "a.whl")
		if got := name + " " + strings.Join(args, " "); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	if got := strings.Join((Source{IndexURL: "https://idx/simple", ExtraIndexURLs: []string{"https://x/simple"}, WheelDirs: []string{"/w"}}).indexArgs(), " "); got != "--index-url https://idx/simple --extra-index-url https://x/simple --find-links /w" {
		t.Errorf("index args: %s", got)
	}
	if got := strings.Join((Source{Offline: true, IndexURL: "https://idx/simple", ExtraIndexURLs: []string{"https://x"}, WheelDirs: []string{"/w"}}).indexArgs(), " "); got != "--no-index --find-links /w" {
		t.Errorf("offline args: %s", got)
	}
}

func TestInstallerMessage(t *testing.T) {
	msg := installerMessage([]string{"Looking in indexes: https://alice:hunter2@idx/simple", "ERROR: Could not find a version that satisfies the requirement x (from https://alice:hunter2@idx/simple)", "ERROR: No matching distribution found for x"})
	if strings.Contains(msg, "hunter2") || !strings.Contains(msg, "No matching distribution found for x") {
		t.Errorf("installerMessage: %s", msg)
	}
}

func TestPickWheelComparesVersions(t *testing.T) {
	paths := []string{"/w/pip-9.0.1-py3-none-any.whl", "/w/pip-23.0.1-py3-none-any.whl", "/w/pip-23.2-py3-none-any.whl", "/w/pip-24.0-cp311-none-any.whl", "/w/setuptools-70.0-py3-none-any.whl"}
	if got := PickWheel(paths, "pip"); got != "/w/pip-23.2-py3-none-any.whl" {
		t.Errorf("PickWheel: %s", got)
	}
	if !AtLeast("66.1.1", "61") || AtLeast("59.6.0", "61") || AtLeast("x", "61") {
		t.Error("AtLeast")
	}
}

// FuzzWheelMetadata feeds arbitrary METADATA and entry_points.txt texts (they come from the package
// being installed): no panic, and the robot_apps entry points read from any text are read back
// unchanged from their canonical form, so what install checks is what discovery sees.
func FuzzWheelMetadata(f *testing.F) {
	f.Add("Metadata-Version: 2.1\nName: hello-world\nVersion: 1.0\nRequires-Dist: pytest ; extra == \"test\"\n\nbody",
		"[console_scripts]\nfoo = foo:main\n\n[robot_apps]\n  hello_world = hello_world.main:HelloWorld\nx=y.main:Z [extra]\n")
	f.Add("Name:\nVersion", "[robot_apps\n=\n[]\n[robot_apps]\n; comment\n# comment\na = :\n")
	f.Add("\r\nName: x", "[robot_apps]\n../../etc = os:system\n$(id) = a.main:B\n")
	f.Fuzz(func(t *testing.T, metadata, entryPoints string) {
		if m, err := ParseMetadata([]byte(metadata)); err == nil && (m.Name != strings.TrimSpace(m.Name) || m.Version != strings.TrimSpace(m.Version)) {
			t.Fatalf("metadata %q: name %q version %q are not trimmed", metadata, m.Name, m.Version)
		}
		eps := ParseEntryPoints([]byte(entryPoints))[apps.EntryPointGroup]
		var canonical strings.Builder
		canonical.WriteString("[" + apps.EntryPointGroup + "]\n")
		for _, a := range eps {
			if a.Name != strings.TrimSpace(a.Name) || a.Module != strings.TrimSpace(a.Module) || a.Attr != strings.TrimSpace(a.Attr) {
				t.Fatalf("entry points %q: %+v is not trimmed", entryPoints, a)
			}
			if a.Name == "" || strings.ContainsAny(a.Name+a.Module+a.Attr, "[]=#;\n\r\"'`") || strings.HasPrefix(a.Module, "[") {
				return // no canonical form to compare with
			}
			value := a.Module
			if a.Attr != "" {
				value += ":" + a.Attr
			}
			canonical.WriteString(a.Name + " = " + value + "\n")
		}
		again := ParseEntryPoints([]byte(canonical.String()))[apps.EntryPointGroup]
		if len(eps) == 0 && len(again) == 0 {
			return
		}
		if !reflect.DeepEqual(again, eps) {
			t.Fatalf("entry points %q: read %+v, canonical form %q reads %+v", entryPoints, eps, canonical.String(), again)
		}
	})
}
