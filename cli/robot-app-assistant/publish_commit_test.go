package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Without git on PATH, publish makes one commit through the hub's commit API: the space then holds
// the package's files, less what .gitignore names, and a second publish replaces and deletes.
func TestPublishWithoutGitUsesTheCommitAPI(t *testing.T) {
	h := startLocalHub(t)
	dir := mustCreate(t, "nogit_app")
	// Things git would leave out: a cache, a nested .gitignore's entry, a venv.
	for name, content := range map[string]string{
		"nogit_app/__pycache__/main.cpython-311.pyc": "cache", "nogit_app/static/.gitignore": "*.tmp\n",
		"nogit_app/static/draft.tmp": "tmp", ".venv/bin/python": "venv",
	} {
		writeTestFile(t, filepath.Join(dir, name), content)
	}
	noGit := t.TempDir() // a PATH with no git on it
	env := map[string]string{"HF_ENDPOINT": h.url, "HF_TOKEN": h.writeToken, "PATH": noGit}
	r := runCLI(t, env, "publish", "--nocheck", dir, "First version")
	if r.code != 0 {
		t.Fatalf("publish: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, s := range []string{"No git on PATH: publishing through the hub's commit API instead of git", "Created the space alice/nogit_app",
		"deleted 0, through the commit API", "Published alice/nogit_app: " + h.url + "/spaces/alice/nogit_app"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
		}
	}
	if isDir(filepath.Join(dir, ".git")) {
		t.Error("a git repository was made without git")
	}
	if strings.Contains(r.stdout+r.stderr, h.writeToken) {
		t.Error("the token shows in the output")
	}
	clone := cloneSpace(t, h.url+"/spaces/alice/nogit_app")
	want, err := appFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := treeFiles(t, clone)
	if !slices.Equal(got, want) {
		t.Fatalf("space files %v, want %v", got, want)
	}
	for _, left := range []string{"nogit_app/__pycache__/main.cpython-311.pyc", "nogit_app/static/draft.tmp", ".venv/bin/python"} {
		if slices.Contains(got, left) {
			t.Errorf("%s was published", left)
		}
	}
	if !slices.Contains(got, "nogit_app/main.py") || !slices.Contains(got, ".gitignore") {
		t.Fatalf("space files %v", got)
	}

	// Second publish: a changed file is replaced, a removed one is deleted from the space.
	edit(t, filepath.Join(dir, "nogit_app", "main.py"), "self.amplitude_deg = 30.0", "self.amplitude_deg = 45.0")
	if err := os.Remove(filepath.Join(dir, "style.css")); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, env, "publish", "--nocheck", dir, "Wider waves")
	if r.code != 0 || !strings.Contains(r.stdout, "The space alice/nogit_app exists: updating it") || !strings.Contains(r.stdout, "deleted 1,") {
		t.Fatalf("second publish: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	gitIn(t, clone, "pull", "--quiet", "--ff-only")
	if slices.Contains(treeFiles(t, clone), "style.css") {
		t.Error("style.css is still in the space")
	}
	main, _ := os.ReadFile(filepath.Join(clone, "nogit_app", "main.py"))
	if !strings.Contains(string(main), "self.amplitude_deg = 45.0") {
		t.Error("main.py was not replaced")
	}
	if log := gitIn(t, clone, "log", "--format=%s"); log != "Wider waves\nFirst version" {
		t.Errorf("space history %q", log)
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// gitIn runs the test machine's git (the command under test had none) in dir.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func cloneSpace(t *testing.T, url string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	gitIn(t, "", "clone", "--quiet", url, dir)
	return dir
}

func treeFiles(t *testing.T, clone string) []string {
	t.Helper()
	files := strings.Split(gitIn(t, clone, "ls-files"), "\n")
	slices.Sort(files)
	return files
}
