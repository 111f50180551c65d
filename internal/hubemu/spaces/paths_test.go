package spaces

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Paths git fsck flags, or that a client reads as .git or .gitmodules; each must be refused with an
// error that names it.
var refusedPaths = []string{
	".git/config", ".GIT/config", ".git./config", ".git /config", ".git::$INDEX_ALLOCATION/config",
	".git\u200c/config", "\u200d.git/hooks/x", ".g\u200bit/config", "\ufeff.git/config", ".git\u202e/config",
	"\u00a0.git/config", "git~1/config", "GIT~1/config", "git~1. /config", "a/b/.git\u200c/config",
	".gitmodules", "sub/.gitmodules", ".GitModules", ".gitmodules ", ".gitmodules:x", "gitmod~1", "GITMOD~4",
	"gi7eba~1", "gi7eb~12", "\u200c.gitmodules",
	`a\.git\config`, `dir\file.txt`,
}

// Names near them that are fine: git accepts them and no client reads them as .git.
var acceptedPaths = []string{
	".gitattributes", ".gitignore", ".github/workflows/x.yml", "my.git/x", ".git-blame-ignore-revs",
	"git~2/x", "git~1x/y", "gitmod~5", ".gitmodules2", "x.gitmodules", "caf\u00e9/men\u00fa.txt", "a b/c.txt",
}

func TestCheckNewPath(t *testing.T) {
	for _, p := range refusedPaths {
		if _, err := CheckNewPath(p); err == nil {
			t.Errorf("%q accepted", p)
		} else if !strings.Contains(err.Error(), strconv.Quote(p)) {
			t.Errorf("%q: the error %q does not name the path", p, err)
		}
	}
	for _, p := range acceptedPaths {
		if _, err := CheckNewPath(p); err != nil {
			t.Errorf("%q refused: %v", p, err)
		}
	}
}

// TestNewPathRulesAgreeWithGitFsck checks the .git rules against git itself: a tree with an entry of
// each refused name that has no backslash or .gitmodules makes git fsck (hasDotgit an error, as
// the hub's repositories have it) fail, and one with each accepted name passes.
func TestNewPathRulesAgreeWithGitFsck(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	// fsck checks every object in a repository, so each tree gets a repository of its own.
	fsck := func(segment string) error {
		dir := t.TempDir()
		git := func(stdin string, args ...string) (string, error) {
			cmd := exec.Command("git", append([]string{"-C", dir, "-c", "fsck.hasDotgit=error"}, args...)...)
			cmd.Stdin = strings.NewReader(stdin)
			cmd.Env = []string{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir, "PATH=/usr/bin:/bin"}
			out, err := cmd.CombinedOutput()
			return strings.TrimSpace(string(out)), err
		}
		if out, err := git("", "init", "--quiet", "--bare"); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
		blob, err := git("x", "hash-object", "-w", "--stdin")
		if err != nil {
			t.Fatal(err)
		}
		tree, err := git("100644 blob "+blob+"\t"+segment+"\n", "mktree")
		if err != nil {
			t.Fatalf("mktree %q: %v %s", segment, err, tree)
		}
		out, err := git("", "fsck", "--no-dangling", "--strict")
		if err != nil && !strings.Contains(out, "hasDotgit") {
			t.Fatalf("fsck %q: %v %s", segment, err, out)
		}
		return err
	}
	widerThanGit := map[string]bool{"\u00a0.git": true, ".g\u200bit": true} // on purpose: see CheckNewPath
	for _, p := range refusedPaths {
		if strings.Contains(p, `\`) || strings.Contains(strings.ToLower(p), "gitmod") || strings.Contains(strings.ToLower(p), "gi7eb") {
			continue // git fsck checks .gitmodules' contents, not the name; backslashes only on Windows
		}
		for _, seg := range strings.Split(p, "/") {
			if _, err := CheckNewPath(seg); err == nil || widerThanGit[seg] {
				continue
			}
			if fsck(seg) == nil {
				t.Errorf("git fsck accepts %q, which the hub refuses", seg)
			}
			break
		}
	}
	for _, p := range acceptedPaths {
		if err := fsck(strings.Split(p, "/")[0]); err != nil {
			t.Errorf("git fsck refuses %q, which the hub accepts", p)
		}
	}
}
