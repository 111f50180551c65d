package main

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/robothub/robothub/internal/testkit/pyindex"
)

// The package's build (its setup.py) and the code check imports run with an allow-listed
// environment and a throw-away HOME: a package cannot read the user's credentials from variables
// nobody thought to name, nor the hub's token file, during check or publish. The dependencies still
// come from the index of pip's configuration.
func TestCheckBuildsWithoutTokens(t *testing.T) {
	idx := pyindex.New()
	defer idx.Close()
	idx.Publish("dep", "1.0")
	dir := mustCreate(t, "env_app")
	edit(t, filepath.Join(dir, "pyproject.toml"), "dependencies = []", `dependencies = ["dep"]`)
	dump := filepath.Join(t.TempDir(), "build-env.txt")
	setup := "import os\nfrom setuptools import setup\n" +
		"token = os.path.expanduser('~/.cache/huggingface/token')\n" +
		"seen = sorted(k + '=' + v for k, v in os.environ.items())\n" +
		"seen.append('TOKENFILE=' + (open(token).read() if os.path.exists(token) else 'none'))\n" +
		"with open(" + quotePy(dump) + ", 'w') as f:\n    f.write('\\n'.join(seen))\nsetup()\n"
	if err := os.WriteFile(filepath.Join(dir, "setup.py"), []byte(setup), 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".cache", "huggingface"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".cache", "huggingface", "token"), []byte("hf_file_token_alice"), 0o600); err != nil {
		t.Fatal(err)
	}
	indexURL := strings.Replace(idx.URL(), "http://", "http://pypi-user:index-password@", 1)
	secrets := map[string]string{
		"HF_TOKEN": "hf_write_alice", "ROBOT_DAEMON_TOKEN": "rd-secret", "GITHUB_TOKEN": "ghp_x",
		"OPENAI_API_KEY": "sk-x", "AWS_SECRET_ACCESS_KEY": "aws-x", "HF_TOKEN_PATH": "/tmp/token",
		"GH_PAT": "ghp_pat_alice", "OPENAI_KEY": "sk-key-alice", "DATABASE_URL": "postgres://app:db-password@db/app",
		"SSH_AUTH_SOCK": "/tmp/ssh-agent.sock", "PIP_INDEX_URL": indexURL,
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("HOME", home)
	r := runCLI(t, map[string]string{"HOME": home}, "check", dir)
	if r.code != 0 {
		t.Fatalf("check: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !idx.Asked("dep") {
		t.Fatal("the dependency was not resolved from the index of pip's configuration")
	}
	data, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("setup.py did not run: %v", err)
	}
	for _, secret := range append(slices.Collect(maps.Values(secrets)), "hf_file_token_alice", "index-password") {
		if strings.Contains(string(data), secret) {
			t.Errorf("the build saw %q", secret)
		}
	}
	for _, k := range []string{"PATH=", "HOME=", "TOKENFILE=none"} {
		if !strings.Contains(string(data), k) {
			t.Errorf("the build's environment lacks %s:\n%s", k, data)
		}
	}
	if strings.Contains(string(data), "HOME="+home+"\n") {
		t.Error("the build ran with the user's HOME")
	}
}

func quotePy(s string) string { return "'" + strings.ReplaceAll(s, "'", "\\'") + "'" }

// publish runs no program the app folder's git configuration names (fsmonitor, a filter driver, a
// credential helper, hooks), and its push goes to the hub only, whatever the folder's url.insteadOf
// and http.proxy say: none of them can see the token.
func TestPublishRunsNoProgramOfTheFolder(t *testing.T) {
	h := newFakeHub(t)
	dir := mustCreate(t, "hostile_app")
	if r := runCLI(t, hubEnv(h, "hf_write_alice"), "publish", "--nocheck", dir); r.code != 0 {
		t.Fatalf("first publish: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var thief atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { thief.Add(1) }))
	defer elsewhere.Close()
	marks := t.TempDir()
	script := func(name string) string {
		p := filepath.Join(marks, name+".sh")
		if err := os.WriteFile(p, []byte("#!/bin/sh\nenv > "+filepath.Join(marks, name+".ran")+"\ncat\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hooks := filepath.Join(dir, "my-hooks")
	os.MkdirAll(hooks, 0o755)
	os.WriteFile(filepath.Join(hooks, "pre-push"), []byte("#!/bin/sh\nenv > "+filepath.Join(marks, "hook.ran")+"\n"), 0o755)
	for _, kv := range [][2]string{
		{"core.fsmonitor", script("fsmonitor")},
		{"filter.steal.clean", script("clean")},
		{"filter.steal.smudge", script("smudge")},
		{"filter.steal.required", "true"},
		{"credential.helper", "!" + script("credential")},
		{"core.hooksPath", hooks},
		{"url." + elsewhere.URL + "/.insteadOf", h.URL() + "/"},
		{"http.proxy", elsewhere.URL},
	} {
		mustGit(t, dir, "config", kv[0], kv[1])
	}
	os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("* filter=steal\n"), 0o644)
	edit(t, filepath.Join(dir, "hostile_app", "main.py"), "self.amplitude_deg = 30.0", "self.amplitude_deg = 40.0")
	r := runCLI(t, hubEnv(h, "hf_write_alice"), "publish", "--nocheck", dir, "No program of the folder runs")
	if r.code != 0 || !strings.Contains(r.stdout, "Pushed to") {
		t.Fatalf("publish: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if ran, _ := filepath.Glob(filepath.Join(marks, "*.ran")); len(ran) != 0 {
		t.Fatalf("programs of the folder's git configuration ran during publish: %v", ran)
	}
	if n := thief.Load(); n != 0 {
		t.Fatalf("the push went %d time(s) where the folder's configuration pointed", n)
	}
	if log := h.spaceLog("alice", "hostile_app"); len(log) == 0 || !strings.Contains(log[0], "No program of the folder runs") {
		t.Fatalf("the space's log: %v", log)
	}
}

// publish commits and pushes with the folder's git hooks disabled: a hook would see the token.
func TestPublishRunsNoGitHooks(t *testing.T) {
	h := newFakeHub(t)
	dir := mustCreate(t, "hooked_app")
	marker := filepath.Join(t.TempDir(), "hook-ran")
	r := runCLI(t, hubEnv(h, "hf_write_alice"), "publish", "--nocheck", dir)
	if r.code != 0 {
		t.Fatalf("first publish: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, hook := range []string{"pre-commit", "commit-msg", "pre-push", "post-commit"} {
		script := "#!/bin/sh\nenv > " + marker + "-" + hook + "\n"
		if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", hook), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	edit(t, filepath.Join(dir, "hooked_app", "main.py"), "self.amplitude_deg = 30.0", "self.amplitude_deg = 40.0")
	r = runCLI(t, hubEnv(h, "hf_write_alice"), "publish", "--nocheck", dir, "Hooks stay off")
	if r.code != 0 || !strings.Contains(r.stdout, "Pushed to") {
		t.Fatalf("publish: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	ran, _ := filepath.Glob(marker + "-*")
	if len(ran) != 0 {
		t.Fatalf("git hooks ran during publish: %v", ran)
	}
}

// Issue 30, item 5: publish honoured a crafted .git/config, core.worktree =
// ../../../.cache/huggingface, so git add --all staged the user's token directory and the push put
// the token into a public space. Through the program run as its own process: a repository whose
// configuration names a work tree or an include, or whose .git leads elsewhere, is refused before
// anything is created or pushed, naming what it found; the token reaches no space.
func TestPublishRefusesARepositoryThatLeadsOutOfTheFolder(t *testing.T) {
	const canary = "hf_user_token_canary_5d1e07"
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, dir, tokenDir string)
		want  string
	}{
		{"core.worktree", func(t *testing.T, dir, tokenDir string) {
			mustGit(t, dir, "init", "-q", "-b", "main")
			// Relative to the .git directory, as git reads it: ../../../.cache/huggingface.
			rel, _ := filepath.Rel(filepath.Join(dir, ".git"), tokenDir)
			mustGit(t, dir, "config", "core.worktree", rel)
		}, "names core.worktree"},
		{"include.path", func(t *testing.T, dir, tokenDir string) {
			mustGit(t, dir, "init", "-q", "-b", "main")
			mustGit(t, dir, "config", "include.path", filepath.Join(tokenDir, "token"))
		}, "names include.path"},
		{"includeIf", func(t *testing.T, dir, tokenDir string) {
			mustGit(t, dir, "init", "-q", "-b", "main")
			mustGit(t, dir, "config", "includeIf.gitdir:/.path", filepath.Join(tokenDir, "token"))
		}, "names includeif.gitdir:/.path"},
		{"a gitdir file outside", func(t *testing.T, dir, tokenDir string) {
			// A repository elsewhere whose work tree is the token directory.
			other := filepath.Join(t.TempDir(), "other.git")
			mustGit(t, tokenDir, "init", "-q", "-b", "main", "--separate-git-dir", other)
			if err := os.Remove(filepath.Join(tokenDir, ".git")); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: "+other+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			mustGit(t, tokenDir, "--git-dir", other, "config", "core.worktree", tokenDir)
		}, "is a gitdir file naming " + ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newFakeHub(t)
			dir := mustCreate(t, "leaky_app")
			home := t.TempDir()
			tokenDir := filepath.Join(home, ".cache", "huggingface")
			if err := os.MkdirAll(tokenDir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(tokenDir, "token"), []byte(canary+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			c.plant(t, dir, tokenDir)
			env := hubEnv(h, "hf_write_alice")
			env["HOME"] = home
			r := runCLIProcess(t, env, nil, "publish", "--nocheck", dir)
			if r.code == 0 || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "not published") {
				t.Errorf("publish of a folder with %s: exit %d, want a refusal naming %q\n%s\n%s", c.name, r.code, c.want, r.stdout, r.stderr)
			}
			if n := h.createCount(); n != 0 {
				t.Errorf("the refused publish created %d space(s)", n)
				if files := h.spaceFiles("alice", "leaky_app"); slices.Contains(files, "token") {
					t.Errorf("the user's token is in the public space: %v", files)
				}
			}
			if strings.Contains(r.stdout+r.stderr, canary) {
				t.Error("the token shows in the output")
			}
		})
	}
}
