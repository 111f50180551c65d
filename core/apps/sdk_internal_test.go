package apps

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

// pep440 is the canonical public version grammar of PEP 440 plus a local label.
var pep440 = regexp.MustCompile(`^([1-9][0-9]*!)?(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*((a|b|rc)(0|[1-9][0-9]*))?(\.post(0|[1-9][0-9]*))?(\.dev(0|[1-9][0-9]*))?(\+[a-z0-9]+(\.[a-z0-9]+)*)?$`)

func TestSDKVersionIsPEP440(t *testing.T) {
	sdk := fstest.MapFS{"pyproject.toml": {Data: []byte("version = \"0.0.0\"\n")}}
	h := "sdk" + sdkDigest(sdk)[:10]
	for _, tc := range []struct{ daemon, want string }{
		{"v1.2.3", "1.2.3"},
		{"1.2.3rc1", "1.2.3rc1"},
		{"v1.2.3-4-gabc1234", "1.2.3+4.gabc1234." + h},
		{"v1.2.3-4-gabc1234-dirty", "1.2.3+4.gabc1234.dirty." + h},
		{"v1.2.3-dirty", "1.2.3+dirty." + h},
		{"dev", "0.0.0.dev0+" + h},
		{"dev-0123456789ab", "0.0.0.dev0+0123456789ab." + h},
		{"f89c9b6", "0.0.0.dev0+f89c9b6." + h},
		{"f89c9b6-dirty", "0.0.0.dev0+f89c9b6.dirty." + h},
		{"Weird_Build/Name!", "0.0.0.dev0+weird.build.name." + h},
		{"", "0.0.0.dev0+" + h},
	} {
		got := SDKVersion(tc.daemon, sdk)
		if got != tc.want {
			t.Errorf("SDKVersion(%q) = %q, want %q", tc.daemon, got, tc.want)
		}
		if !pep440.MatchString(got) {
			t.Errorf("SDKVersion(%q) = %q is not a canonical PEP 440 version", tc.daemon, got)
		}
	}
	changed := fstest.MapFS{"pyproject.toml": {Data: []byte("version = \"0.0.0\"\n# changed\n")}}
	if SDKVersion("dev", changed) == SDKVersion("dev", sdk) {
		t.Error("a dev daemon whose SDK changed keeps the same SDK version, so the venv would not be updated")
	}
}

func TestParseSource(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pyproject.toml"), []byte("[project]\nname = \"app\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in, kind, clone, shown string
	}{
		{"https://huggingface.co/spaces/pollen/hello_world", "hf_space", "https://huggingface.co/spaces/pollen/hello_world", ""},
		{"http://127.0.0.1:7860/spaces/u/app/", "hf_space", "http://127.0.0.1:7860/spaces/u/app", ""},
		{"https://github.com/u/app.git", "git", "https://github.com/u/app.git", ""},
		{"https://user:s3cret@git.example.com/u/app.git", "git", "https://user:s3cret@git.example.com/u/app.git", "https://xxxxx@git.example.com/u/app.git"},
		{"git@github.com:u/app.git", "git", "git@github.com:u/app.git", ""},
		{"ssh://git@host/u/app", "git", "ssh://git@host/u/app", ""},
		{dir, "local", "", dir},
		{"file://" + dir, "local", "", dir},
	} {
		src, err := parseSource(tc.in)
		if err != nil {
			t.Errorf("parseSource(%q): %v", tc.in, err)
			continue
		}
		if string(src.kind) != tc.kind || src.cloneURL != tc.clone {
			t.Errorf("parseSource(%q) = kind %s clone %q, want %s %q", tc.in, src.kind, src.cloneURL, tc.kind, tc.clone)
		}
		if tc.shown != "" && src.shown != tc.shown {
			t.Errorf("parseSource(%q) shows %q, want %q", tc.in, src.shown, tc.shown)
		}
		if strings.Contains(src.shown, "s3cret") {
			t.Errorf("parseSource(%q) shows the password: %q", tc.in, src.shown)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"", "url: required"},
		{"   ", "url: required"},
		{"--upload-pack=touch /tmp/x", "url: must not contain spaces"},
		{"-u", "url: must not start with '-'"},
		{"relative/path", "is not a hub space URL, a git URL or an absolute local path"},
		{"/no/such/dir/anywhere", "is not a directory on the robot"},
		{"/", "local path / is not a Python package: it has no pyproject.toml or setup.py"},
		{"file:///proc", "local path /proc is not a Python package"},
		{t.TempDir(), "is not a Python package"},
		{"ext::sh -c touch% /tmp/pwned", "url: must not contain spaces"},
		{"ext::sh", "is not a hub space URL"},
		{"ftp://host/app", "scheme ftp is not one of"},
		{"https://host/a\nb", "control characters"},
	} {
		_, err := parseSource(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseSource(%q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}
