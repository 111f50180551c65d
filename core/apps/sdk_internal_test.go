package apps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/apps/origin"
)

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
		src, err := origin.Parse(tc.in)
		if err != nil {
			t.Errorf("origin.Parse(%q): %v", tc.in, err)
			continue
		}
		if string(src.Kind) != tc.kind || src.CloneURL != tc.clone {
			t.Errorf("origin.Parse(%q) = kind %s clone %q, want %s %q", tc.in, src.Kind, src.CloneURL, tc.kind, tc.clone)
		}
		if tc.shown != "" && src.Shown != tc.shown {
			t.Errorf("origin.Parse(%q) shows %q, want %q", tc.in, src.Shown, tc.shown)
		}
		if strings.Contains(src.Shown, "s3cret") {
			t.Errorf("origin.Parse(%q) shows the password: %q", tc.in, src.Shown)
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
		_, err := origin.Parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("origin.Parse(%q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}
