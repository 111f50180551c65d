package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/hub/card"
)

// files lists the regular files under dir, relative and sorted.
func files(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

var placeholder = regexp.MustCompile(`__(APP_NAME|APP_NAME_UPPER|CLASS_NAME|DIST_NAME|TITLE|WEB_PORT)__`)

func TestCreateDefaultWritesTheSpecLayout(t *testing.T) {
	dest := t.TempDir()
	r := runCLI(t, nil, "create", "wave_hello", dest)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	dir := filepath.Join(dest, "wave_hello")
	want := []string{
		".gitignore", "README.md", "index.html", "pyproject.toml", "style.css",
		"wave_hello/__init__.py", "wave_hello/main.py",
		"wave_hello/static/index.html", "wave_hello/static/main.js", "wave_hello/static/style.css",
	}
	if got := files(t, dir); !slices.Equal(got, want) {
		t.Fatalf("files:\n%v\nwant\n%v", got, want)
	}
	if !strings.Contains(r.stdout, "Created app wave_hello in "+dir) {
		t.Fatalf("stdout: %s", r.stdout)
	}
	for _, f := range want {
		if m := placeholder.FindString(readFile(t, filepath.Join(dir, f))); m != "" {
			t.Errorf("%s still holds %s", f, m)
		}
	}
	pyproject := readFile(t, filepath.Join(dir, "pyproject.toml"))
	for _, s := range []string{"[project.entry-points.robot_apps]\nwave_hello = \"wave_hello.main:WaveHello\"", `name = "wave-hello"`, `wave_hello = ["static/*"]`} {
		if !strings.Contains(pyproject, s) {
			t.Errorf("pyproject.toml lacks %q:\n%s", s, pyproject)
		}
	}
	text, first, err := card.Split([]byte(readFile(t, filepath.Join(dir, "README.md"))))
	if err != nil {
		t.Fatal(err)
	}
	fm, err := card.Parse(text, first)
	if err != nil {
		t.Fatal(err)
	}
	if cardField(fm, "title").Value != "Wave Hello" {
		t.Errorf("title %q", cardField(fm, "title").Value)
	}
	var tags []string
	for _, n := range cardField(fm, "tags").Content {
		tags = append(tags, n.Value)
	}
	if !slices.Contains(tags, "robot") || !slices.Contains(tags, "robot_python_app") {
		t.Errorf("tags %v", tags)
	}
	main := readFile(t, filepath.Join(dir, "wave_hello", "main.py"))
	for _, s := range []string{"class WaveHello(RobotApp):", `custom_app_url = "http://0.0.0.0:8042"`, "app.wrapped_run()", "except KeyboardInterrupt:"} {
		if !strings.Contains(main, s) {
			t.Errorf("main.py lacks %q", s)
		}
	}
	if out, err := exec.Command("python3", "-m", "py_compile", filepath.Join(dir, "wave_hello", "main.py")).CombinedOutput(); err != nil {
		t.Fatalf("main.py does not compile: %v\n%s", err, out)
	}
	os.RemoveAll(filepath.Join(dir, "wave_hello", "__pycache__"))
}

func TestCreateFlagsAfterArgumentsAndWebPort(t *testing.T) {
	dest := t.TempDir()
	r := runCLI(t, nil, "create", "porty", dest, "--web-port", "9123", "--template", "default")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if main := readFile(t, filepath.Join(dest, "porty", "porty", "main.py")); !strings.Contains(main, `custom_app_url = "http://0.0.0.0:9123"`) {
		t.Fatalf("--web-port not used:\n%s", main)
	}
}

func TestCreateRefusesBadInput(t *testing.T) {
	dest := t.TempDir()
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"create", "my-app", dest}, exitUsage, `app name "my-app" is not a Python identifier: it contains '-'; use '_' instead (my_app)`},
		{[]string{"create", "2fast", dest}, exitUsage, `app name "2fast" is not a Python identifier`},
		{[]string{"create", "my app", dest}, exitUsage, `app name "my app" is not a Python identifier`},
		{[]string{"create", "___", dest}, exitUsage, `has no letter`},
		{[]string{"create", "class", dest}, exitUsage, `is a Python keyword`},
		{[]string{"create", "json", dest}, exitUsage, `standard library`},
		{[]string{"create", "robot_sdk", dest}, exitUsage, `robot SDK`},
		{[]string{"create", "pip", dest}, exitUsage, `app name "pip" is a module of the apps' runtime`},
		{[]string{"create", "sitecustomize", dest}, exitUsage, `app name "sitecustomize" is a module of the apps' runtime`},
		{[]string{"create", "wheel", dest}, exitUsage, `app name "wheel" is a module of the apps' runtime`},
		{[]string{"create", "ok_name", dest, "--template", "chatty"}, exitUsage, `--template: "chatty" is not one of default, conversation`},
		{[]string{"create", "ok_name", dest, "--web-port", "70000"}, exitUsage, `--web-port: 70000 is not a port number`},
		{[]string{"create", "ok_name", dest, "--private"}, exitUsage, `--private only applies with --publish`},
	}
	for _, tt := range tests {
		r := runCLI(t, nil, tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d with %q", tt.args, r.code, r.stderr, tt.code, tt.msg)
		}
	}
	if got := files(t, dest); len(got) != 0 {
		t.Fatalf("refused creates wrote %v", got)
	}
	// An existing folder is never overwritten.
	if err := os.MkdirAll(filepath.Join(dest, "taken", "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, nil, "create", "taken", dest)
	if r.code != exitError || !strings.Contains(r.stderr, "already exists") {
		t.Fatalf("existing folder: exit %d, %q", r.code, r.stderr)
	}
	entries, _ := os.ReadDir(dest)
	if len(entries) != 1 {
		t.Fatalf("left files behind: %v", entries)
	}
}

func TestNamesFor(t *testing.T) {
	tests := []struct{ app, class, dist, title string }{
		{"my_app", "MyApp", "my-app", "My App"},
		{"x", "X", "x", "X"},
		{"_private_thing", "PrivateThing", "private-thing", "Private Thing"},
		{"app2go", "App2go", "app2go", "App2go"},
		{"a__b", "AB", "a--b", "A B"},
	}
	for _, tt := range tests {
		n := namesFor(tt.app, 8042)
		if n.Class != tt.class || n.Dist != tt.dist || n.Title != tt.title {
			t.Errorf("namesFor(%q) = %+v", tt.app, n)
		}
	}
}

func TestCreateConversationLayout(t *testing.T) {
	dir := mustCreate(t, "chatter", "--template", "conversation")
	want := []string{
		".gitignore", "README.md", "chatter/__init__.py", "chatter/audio.py", "chatter/config.py", "chatter/conversation.py",
		"chatter/llm.py", "chatter/main.py", "chatter/motion.py",
		"chatter/static/index.html", "chatter/static/main.js", "chatter/static/style.css", "chatter/tools.py",
		"index.html", "pyproject.toml", "style.css",
	}
	if got := files(t, dir); !slices.Equal(got, want) {
		t.Fatalf("files:\n%v\nwant\n%v", got, want)
	}
	for _, f := range want {
		if m := placeholder.FindString(readFile(t, filepath.Join(dir, f))); m != "" {
			t.Errorf("%s still holds %s", f, m)
		}
	}
	if readme := readFile(t, filepath.Join(dir, "README.md")); !strings.Contains(readme, "`$CHATTER_CONFIG` when set, else `$XDG_CONFIG_HOME/chatter/config.json`") {
		t.Errorf("README does not document the config file:\n%s", readme)
	}
	args := []string{"-m", "py_compile"}
	for _, f := range want {
		if strings.HasSuffix(f, ".py") {
			args = append(args, filepath.Join(dir, f))
		}
	}
	if out, err := exec.Command("python3", args...).CombinedOutput(); err != nil {
		t.Fatalf("the template's Python does not compile: %v\n%s", err, out)
	}
	os.RemoveAll(filepath.Join(dir, "chatter", "__pycache__"))
}
