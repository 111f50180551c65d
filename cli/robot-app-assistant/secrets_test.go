package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The package's build (its setup.py) and the code check imports run without the tokens of the
// environment: a package cannot read them during check or publish.
func TestCheckBuildsWithoutTokens(t *testing.T) {
	dir := mustCreate(t, "env_app")
	dump := filepath.Join(t.TempDir(), "build-env.txt")
	setup := "import os\nfrom setuptools import setup\nwith open(" + quotePy(dump) + ", 'w') as f:\n    f.write('\\n'.join(sorted(os.environ)))\nsetup()\n"
	if err := os.WriteFile(filepath.Join(dir, "setup.py"), []byte(setup), 0o644); err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{
		"HF_TOKEN": "hf_write_alice", "ROBOT_DAEMON_TOKEN": "rd-secret", "GITHUB_TOKEN": "ghp_x",
		"OPENAI_API_KEY": "sk-x", "AWS_SECRET_ACCESS_KEY": "aws-x", "HF_TOKEN_PATH": "/tmp/token",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	r := runCLI(t, secrets, "check", dir)
	if r.code != 0 {
		t.Fatalf("check: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("setup.py did not run: %v", err)
	}
	seen := strings.Fields(string(data))
	for k := range secrets {
		for _, s := range seen {
			if s == k {
				t.Errorf("the build saw %s", k)
			}
		}
	}
	if !strings.Contains(string(data), "PATH") {
		t.Errorf("the build's environment lost PATH: %v", seen)
	}
}

func quotePy(s string) string { return "'" + strings.ReplaceAll(s, "'", "\\'") + "'" }

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
