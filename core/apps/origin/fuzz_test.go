package origin_test

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/apps/origin"
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
		src, err := origin.Parse(raw)
		if err != nil {
			if !errors.Is(err, fault.ErrInvalid) {
				t.Fatalf("origin.Parse(%q): error %v is not fault.ErrInvalid", raw, err)
			}
			return
		}
		switch src.Kind {
		case origin.Local:
			if !filepath.IsAbs(src.Path) || filepath.Clean(src.Path) != src.Path || src.Shown != src.Path {
				t.Fatalf("origin.Parse(%q): local path %q (shown %q) is not clean and absolute", raw, src.Path, src.Shown)
			}
			if info, err := os.Stat(src.Path); err != nil || !info.IsDir() {
				t.Fatalf("origin.Parse(%q): local path %q is not a directory", raw, src.Path)
			}
			if !isFile(filepath.Join(src.Path, "pyproject.toml")) && !isFile(filepath.Join(src.Path, "setup.py")) {
				t.Fatalf("origin.Parse(%q): local path %q is not a Python package", raw, src.Path)
			}
		case origin.Git, origin.HubSpace:
			if src.CloneURL == "" || strings.HasPrefix(src.CloneURL, "-") ||
				strings.ContainsFunc(src.CloneURL, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
				t.Fatalf("origin.Parse(%q): clone URL %q could be taken for an option or split", raw, src.CloneURL)
			}
		default:
			t.Fatalf("origin.Parse(%q): kind %q", raw, src.Kind)
		}
		if u, err := url.Parse(strings.TrimSpace(raw)); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && len(pw) >= 4 && strings.Contains(src.Shown, pw) &&
				!strings.Contains(u.User.Username()+u.Host+u.Path, pw) {
				t.Fatalf("origin.Parse(%q) shows the password: %q", raw, src.Shown)
			}
		}
	})
}

func isFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}
