package apps

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/fault"
)

// FuzzParseSource feeds arbitrary install URLs (the url of POST /api/apps/install): the answer is
// a source of a known kind or a fault.ErrInvalid error, never a panic; a git URL never starts with '-'
// nor holds spaces or control characters (it becomes an argument of git clone); a local source
// is a clean absolute path to a Python package's directory; and a password in the URL never shows.
func FuzzParseSource(f *testing.F) {
	pkg := f.TempDir()
	if err := os.WriteFile(filepath.Join(pkg, "pyproject.toml"), []byte("[project]\nname = \"x\"\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"https://huggingface.co/spaces/pollen/hello_world", "http://127.0.0.1:7860/spaces/u/app/",
		"https://user:s3cret@git.example.com/u/app.git", "git@github.com:u/app.git", "ssh://git@host/u/app",
		pkg, "file://" + pkg, pkg + "/../" + filepath.Base(pkg), "/", "/proc", "/etc/passwd", "",
		"--upload-pack=touch /tmp/x", "-u", "ext::sh -c touch% /tmp/pwned", "https://host/a\nb",
		"https://h/$(touch /tmp/x)", "https://h/`id`", "https://h/a;id", "http://[::1]:1/x", "git://h/%00",
		"file:///%2e%2e/etc", "https://h/spaces/u/app?x=1", "https://:pw@h/r", "\u202ehttps://h/r",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		src, err := parseSource(raw)
		if err != nil {
			if !errors.Is(err, fault.ErrInvalid) {
				t.Fatalf("parseSource(%q): error %v is not fault.ErrInvalid", raw, err)
			}
			return
		}
		switch src.kind {
		case SourceLocal:
			if !filepath.IsAbs(src.path) || filepath.Clean(src.path) != src.path || src.shown != src.path {
				t.Fatalf("parseSource(%q): local path %q (shown %q) is not clean and absolute", raw, src.path, src.shown)
			}
			if info, err := os.Stat(src.path); err != nil || !info.IsDir() {
				t.Fatalf("parseSource(%q): local path %q is not a directory", raw, src.path)
			}
			if !exists(filepath.Join(src.path, "pyproject.toml")) && !exists(filepath.Join(src.path, "setup.py")) {
				t.Fatalf("parseSource(%q): local path %q is not a Python package", raw, src.path)
			}
		case SourceGit, SourceHubSpace:
			if src.cloneURL == "" || strings.HasPrefix(src.cloneURL, "-") ||
				strings.ContainsFunc(src.cloneURL, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
				t.Fatalf("parseSource(%q): clone URL %q could be taken for an option or split", raw, src.cloneURL)
			}
		default:
			t.Fatalf("parseSource(%q): kind %q", raw, src.kind)
		}
		if u, err := url.Parse(strings.TrimSpace(raw)); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && len(pw) >= 4 && strings.Contains(src.shown, pw) &&
				!strings.Contains(u.User.Username()+u.Host+u.Path, pw) {
				t.Fatalf("parseSource(%q) shows the password: %q", raw, src.shown)
			}
		}
	})
}

// FuzzWheelMetadata feeds arbitrary METADATA and entry_points.txt texts (they come from the app
// package being installed): no panic, and the robot_apps entry points read from any text are read
// back unchanged from their canonical form, so what install checks is what discovery sees.
func FuzzWheelMetadata(f *testing.F) {
	f.Add("Metadata-Version: 2.1\nName: hello-world\nVersion: 1.0\nRequires-Dist: pytest ; extra == \"test\"\n\nbody",
		"[console_scripts]\nfoo = foo:main\n\n[robot_apps]\n  hello_world = hello_world.main:HelloWorld\nx=y.main:Z [extra]\n")
	f.Add("Name:\nVersion", "[robot_apps\n=\n[]\n[robot_apps]\n; comment\n# comment\na = :\n")
	f.Add("\r\nName: x", "[robot_apps]\n../../etc = os:system\n$(id) = a.main:B\n")
	f.Fuzz(func(t *testing.T, metadata, entryPoints string) {
		var meta wheelMeta
		parseMetadata(metadata, &meta)
		if meta.name != strings.TrimSpace(meta.name) || meta.version != strings.TrimSpace(meta.version) {
			t.Fatalf("metadata %q: name %q version %q are not trimmed", metadata, meta.name, meta.version)
		}
		apps := parseEntryPoints(entryPoints)[EntryPointGroup]
		var canonical strings.Builder
		canonical.WriteString("[" + EntryPointGroup + "]\n")
		for _, a := range apps {
			if a.name != strings.TrimSpace(a.name) || a.module != strings.TrimSpace(a.module) || a.class != strings.TrimSpace(a.class) {
				t.Fatalf("entry points %q: %+v is not trimmed", entryPoints, a)
			}
			if a.name == "" || strings.HasPrefix(a.name, "[") {
				return // "= x" and "[a = b]"-like lines have no canonical form
			}
			value := a.module
			if a.class != "" {
				value += ":" + a.class
			}
			canonical.WriteString(a.name + " = " + value + "\n")
		}
		again := parseEntryPoints(canonical.String())[EntryPointGroup]
		if len(apps) == 0 && len(again) == 0 {
			return
		}
		if !reflect.DeepEqual(again, apps) {
			t.Fatalf("entry points %q: read %+v, canonical form %q reads %+v", entryPoints, apps, canonical.String(), again)
		}
	})
}
