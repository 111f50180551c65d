package python

import (
	"archive/zip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeWheel makes a wheel holding files (their contents do not matter).
func writeWheel(t *testing.T, files ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x-1.0-py3-none-any.whl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, name := range files {
		w, _ := zw.Create(name)
		if strings.HasSuffix(name, "entry_points.txt") {
			w.Write([]byte("[console_scripts]\npip = x.main:run\nx-tool = x.main:run\n"))
		}
	}
	zw.Close()
	f.Close()
	return p
}

// fakeVenv lays out a venv as python3 -m venv does on 64-bit Linux (lib64 a link to lib), and the
// install layout its Python would describe.
func fakeVenv(t *testing.T, system ...string) *installLayout {
	t.Helper()
	v := filepath.Join(t.TempDir(), "venv")
	site := filepath.Join(v, "lib", "python3.11", "site-packages")
	for _, d := range []string{site, filepath.Join(v, "bin"), filepath.Join(v, "include")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("lib", filepath.Join(v, "lib64")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v, "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return newInstallLayout(v, []string{site, site}, filepath.Join(v, "bin"), append([]string{"/usr/lib/python3.11", site}, system...))
}

func TestCheckShadowingReadsEveryPlaceAWheelInstalls(t *testing.T) {
	stdlib := map[string]bool{"json": true, "_ssl": true, "os": true}
	lay := fakeVenv(t)
	for _, c := range []struct {
		files []string
		want  string // "" for none
	}{
		{[]string{"x/__init__.py", "x/data.json", "x-1.0.dist-info/METADATA"}, ""},
		{[]string{"x/__init__.py", "x/hooks.pth"}, "x/hooks.pth (a .pth file"},
		{[]string{"x/__init__.py", "evil.pth"}, "evil.pth (a .pth file"},
		{[]string{"x-1.0.data/purelib/usercustomize.py"}, "usercustomize.py (usercustomize"},
		{[]string{"x-1.0.data/platlib/_ssl.cpython-311-x86_64-linux-gnu.so"}, "_ssl.cpython-311-x86_64-linux-gnu.so (_ssl, a standard-library module)"},
		{[]string{"x-1.0.data/data/lib/python3.11/site-packages/os/__init__.py"}, "os/__init__.py (os, a standard-library module)"},
		{[]string{"x-1.0.data/data/share/x/readme.txt", "x-1.0.data/headers/x.h"}, ""},
		{[]string{"x-1.0.data/scripts/python3"}, "script python3 (a command of the apps venv)"},
		{[]string{"x-1.0.data/data/bin/pip"}, "script pip (a command of the apps venv)"},
		{[]string{"x/__init__.py", "x-1.0.dist-info/entry_points.txt"}, "script pip (a command of the apps venv)"},
		{[]string{"setuptools/__init__.py", "wheel/__init__.py"}, "setuptools/__init__.py (setuptools, the build tool of the apps venv), wheel/__init__.py (wheel"},
		// Issue 30, item 3: the venv's lib64 is a link to lib, so this is site-packages.
		{[]string{"x/__init__.py", "x-1.0.data/data/lib64/python3.11/site-packages/x.pth"}, "x.pth (a .pth file"},
		{[]string{"x-1.0.data/data/lib64/python3.11/site-packages/sitecustomize.py"}, "sitecustomize.py (sitecustomize"},
		{[]string{"x-1.0.data/data/pyvenv.cfg"}, "x-1.0.data/data/pyvenv.cfg (the venv's configuration (pyvenv.cfg))"},
		{[]string{"x-1.0.data/data/lib/python3.11/x.py"}, "x-1.0.data/data/lib/python3.11/x.py (a file of the venv's Python library outside site-packages"},
		{[]string{"x-1.0.data/odd/x.txt"}, "x-1.0.data/odd/x.txt (a .data scheme (odd) that installers do not know)"},
	} {
		files, err := wheelFiles(writeWheel(t, c.files...), lay)
		if err != nil {
			t.Fatal(err)
		}
		found := shadowing(newLayout("x", files), stdlib)
		if len(found) > 0 {
			err = fmt.Errorf("%s", listProblems(found))
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v, want none", c.files, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v, want %q", c.files, err, c.want)
		}
	}
}

func TestLayoutConflicts(t *testing.T) {
	site := func(dist string, paths ...string) layout {
		var files []wheelFile
		for _, p := range paths {
			files = append(files, wheelFile{inWheel: p, site: p})
		}
		return newLayout(dist, files)
	}
	app := site("other-app", "other_app/__init__.py", "other_app/main.py", "other_app-1.0.dist-info/RECORD")
	auth := site("google-auth", "google/auth/__init__.py")
	for _, c := range []struct {
		name string
		l, o layout
		want string
	}{
		{"a module into another's package", site("evil", "other_app/extra.py"), app, "other_app/extra.py"},
		{"a module of the same name", site("evil", "other_app.py"), app, "other_app.py"},
		{"a package of the same name", site("evil", "other_app/__init__.py"), app, "other_app/__init__.py"},
		{"a namespace package shared", site("protobuf", "google/protobuf/__init__.py"), auth, ""},
		{"the same file of a namespace", site("evil", "google/auth/__init__.py"), auth, "google/auth/__init__.py"},
		{"its own metadata", site("other-app2", "other_app2/__init__.py", "other_app-1.0.dist-info/RECORD"), app, ""},
	} {
		if got := strings.Join(c.l.conflicts(c.o), ","); got != c.want {
			t.Errorf("%s: conflicts %q, want %q", c.name, got, c.want)
		}
	}
}

// Issue 30, item 4: with --system-site-packages, a dependency with a top-level numpy/ shadowed the
// system's numpy for every app. The system's top-level modules and packages count as owned.
func TestSystemSitePackagesCountAsOwned(t *testing.T) {
	system := filepath.Join(t.TempDir(), "dist-packages")
	for _, f := range []string{"numpy/__init__.py", "numpy/core/multiarray.py", "yaml.py", "google/protobuf/__init__.py", "numpy-1.24.2.egg-info/PKG-INFO", "distutils-precedence.pth"} {
		p := filepath.Join(system, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lay := fakeVenv(t, system)
	if len(lay.system) != 1 {
		t.Fatalf("the system's site directories: %v", lay.system)
	}
	owners := lay.systemOwners()
	for _, c := range []struct {
		files []string
		want  string
	}{
		{[]string{"numpy/__init__.py", "numpy/linalg.py"}, "numpy/__init__.py"},
		{[]string{"numpy/_evil.py"}, "numpy/_evil.py"},
		{[]string{"yaml.py"}, "yaml.py"},
		{[]string{"yaml/__init__.py"}, "yaml/__init__.py"},
		{[]string{"google/auth/__init__.py"}, ""}, // a namespace package is shared
		{[]string{"mine/__init__.py"}, ""},
	} {
		files, err := wheelFiles(writeWheel(t, c.files...), lay)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(newLayout("x", files).conflicts(owners[0]), ",")
		if !strings.HasPrefix(got, c.want) || (c.want == "") != (got == "") {
			t.Errorf("%v: conflicts %q, want %q", c.files, got, c.want)
		}
	}
	if !strings.Contains(owners[0].owner, system) || !strings.Contains(owners[0].owner, "--system-site-packages") {
		t.Errorf("the owner is named %q", owners[0].owner)
	}
}
