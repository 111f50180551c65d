package git_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/internal/hubemu/git"
	"github.com/robothub/robothub/internal/hubemu/spaces"
)

// space makes a space's repository and pushes a history to it with the git program: main with
// nested folders, an executable, a symbolic link and a README; a branch; a lightweight and an
// annotated tag. It returns the repositories and the commit IDs of main's two commits.
func space(t *testing.T) (*git.Repos, string, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	repos, err := git.Open(t.TempDir(), "", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := repos.Create(ctx, "alice/wave"); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@x",
			"GIT_COMMITTER_DATE=1700000000 +0200")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, content string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q", "--initial-branch=main")
	write("README.md", "---\ntags: [robot_python_app]\n---\n# Wave\n", 0o644)
	write("app/main.py", "print('hi')\n", 0o644)
	write("app/static/index.html", "<p>hi</p>\n", 0o644)
	write("run.sh", "#!/bin/sh\n", 0o755)
	if err := os.Symlink("app/main.py", filepath.Join(work, "main-link")); err != nil {
		t.Fatal(err)
	}
	run("add", "-A")
	run("commit", "-q", "-m", "first")
	first := run("rev-parse", "HEAD")
	write("app/static/style.css", "p{}\n", 0o644)
	run("add", "-A")
	run("commit", "-q", "-m", "second")
	second := run("rev-parse", "HEAD")
	run("branch", "dev", first)
	run("tag", "v1", first)
	run("tag", "-a", "-m", "annotated", "v2", second)
	run("push", "-q", repos.Dir("alice/wave"), "main", "dev", "v1", "v2")
	return repos, first, second
}

// lsTree is what git ls-tree -l says, the reference the go-git reader must agree with.
func lsTree(t *testing.T, dir string, args ...string) []spaces.TreeEntry {
	t.Helper()
	cmd := exec.Command("git", append([]string{"ls-tree", "-l", "-z", "--full-tree"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var entries []spaces.TreeEntry
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, path, _ := bytes.Cut(rec, []byte{'\t'})
		f := strings.Fields(string(meta))
		e := spaces.TreeEntry{Mode: f[0], Type: f[1], OID: f[2], Path: string(path)}
		if f[3] != "-" {
			e.Size, _ = strconv.ParseInt(f[3], 10, 64)
		}
		entries = append(entries, e)
	}
	return entries
}

func TestTreeAgreesWithGitLsTree(t *testing.T) {
	repos, _, second := space(t)
	ctx := context.Background()
	dir := repos.Dir("alice/wave")
	got, err := repos.Tree(ctx, "alice/wave", second, "", true)
	if err != nil {
		t.Fatal(err)
	}
	if want := lsTree(t, dir, "-r", "-t", second); !reflect.DeepEqual(got, want) {
		t.Errorf("recursive tree\n got %+v\nwant %+v", got, want)
	}
	files, err := repos.Files(ctx, "alice/wave", second)
	if err != nil {
		t.Fatal(err)
	}
	var wantFiles []spaces.TreeEntry
	for _, e := range lsTree(t, dir, "-r", second) {
		e.Size = 0
		wantFiles = append(wantFiles, e)
	}
	if !reflect.DeepEqual(files, wantFiles) {
		t.Errorf("files\n got %+v\nwant %+v", files, wantFiles)
	}
	got, err = repos.Tree(ctx, "alice/wave", second, "app/", false)
	if err != nil {
		t.Fatal(err)
	}
	want := lsTree(t, dir, second+":app")
	for i := range want {
		want[i].Path = "app/" + want[i].Path
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("folder app\n got %+v\nwant %+v", got, want)
	}
	for _, c := range []struct{ dir, msg string }{
		{"nope", "has no folder nope"},
		{"run.sh", "run.sh is a file"},
	} {
		_, err := repos.Tree(ctx, "alice/wave", second, c.dir, false)
		if !errors.Is(err, fault.ErrNotFound) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Tree(%s): %v, want a not-found error saying %q", c.dir, err, c.msg)
		}
	}
}

func TestResolveNamesWhatTheHubAccepts(t *testing.T) {
	repos, first, second := space(t)
	ctx := context.Background()
	for rev, want := range map[string]spaces.Revision{
		"":                {Commit: second, Ref: "refs/heads/main"},
		"main":            {Commit: second, Ref: "refs/heads/main"},
		"dev":             {Commit: first, Ref: "refs/heads/dev"},
		"v1":              {Commit: first, Ref: "refs/tags/v1"},
		"v2":              {Commit: second, Ref: "refs/tags/v2"}, // annotated: peeled to its commit
		"refs/heads/main": {Commit: second, Ref: "refs/heads/main"},
		first:             {Commit: first},
	} {
		got, err := repos.Resolve(ctx, "alice/wave", rev)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %+v, %v; want %+v", rev, got, err, want)
		}
	}
	for _, rev := range []string{"main~1", "HEAD", first[:7], strings.Repeat("0", 40), "refs/heads/nope", "main@{1}"} {
		var fe *fault.Error
		_, err := repos.Resolve(ctx, "alice/wave", rev)
		if !errors.As(err, &fe) || fe.Code != "RevisionNotFound" {
			t.Errorf("Resolve(%q): %v, want RevisionNotFound", rev, err)
		}
	}
	refs, err := repos.Refs(ctx, "alice/wave")
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 4 || refs["refs/heads/main"] != second || refs["refs/tags/v1"] != first || refs["refs/tags/v2"] == second {
		t.Errorf("refs %v (the annotated tag names its tag object)", refs)
	}
}

func TestSnapshotAndBlobs(t *testing.T) {
	repos, _, second := space(t)
	ctx := context.Background()
	snap, err := repos.Snapshot(ctx, "alice/wave", second)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{"README.md", "app/main.py", "app/static/index.html", "app/static/style.css", "main-link", "run.sh"}
	if !reflect.DeepEqual(snap.Files, wantFiles) || !strings.Contains(string(snap.Readme), "robot_python_app") ||
		!snap.Modified.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("snapshot %+v", snap)
	}
	if empty, err := repos.Snapshot(ctx, "alice/wave", ""); err != nil || len(empty.Files) != 0 || empty.Readme != nil {
		t.Errorf("empty snapshot %+v %v", empty, err)
	}
	e, err := repos.Entry(ctx, "alice/wave", second, "app/static/style.css")
	if err != nil || e.Type != "blob" || e.Size != 4 {
		t.Fatalf("entry %+v %v", e, err)
	}
	b, err := repos.OpenBlob(ctx, "alice/wave", e)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Seek(1, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if rest, _ := io.ReadAll(b); string(rest) != "{}\n" {
		t.Errorf("blob from offset 1: %q", rest)
	}
	if _, err := repos.ReadBlob(ctx, "alice/wave", e.OID, 3); err == nil {
		t.Error("ReadBlob read a blob over its limit")
	}
	if _, err := repos.Entry(ctx, "alice/wave", second, "app/nope"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("missing entry: %v", err)
	}
}

func TestWriteCommitFastForwardsTheBranch(t *testing.T) {
	repos, _, second := space(t)
	ctx := context.Background()
	spool, err := os.CreateTemp(t.TempDir(), "spool")
	if err != nil {
		t.Fatal(err)
	}
	spool.WriteString("new\"name\ncontent")
	c := spaces.CommitWrite{Ref: "refs/heads/main", Parent: second, Author: "bob <bob@x>", When: time.Unix(1700000100, 0),
		Message: "third\n", Changes: []spaces.FileChange{
			{Path: "app/static", Delete: true},
			{Path: `we"ird name.txt`, Mode: "100755", Content: io.NewSectionReader(spool, 0, 9)},
		}}
	if err := repos.WriteCommit(ctx, "alice/wave", c); err != nil {
		t.Fatal(err)
	}
	refs, _ := repos.Refs(ctx, "alice/wave")
	head := refs["refs/heads/main"]
	got, err := repos.Tree(ctx, "alice/wave", head, "", true)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range got {
		paths = append(paths, e.Mode+" "+e.Path)
	}
	want := []string{"100644 README.md", "040000 app", "100644 app/main.py", "120000 main-link", "100755 run.sh", `100755 we"ird name.txt`}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("after the commit\n got %q\nwant %q", paths, want)
	}
	// A commit whose parent is no longer the head is refused, and moves nothing.
	c.Parent = second
	if err := repos.WriteCommit(ctx, "alice/wave", c); err == nil {
		t.Error("a commit from a stale parent was written")
	}
	if refs, _ := repos.Refs(ctx, "alice/wave"); refs["refs/heads/main"] != head {
		t.Error("a refused commit moved main")
	}
}
