package hubemu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	"github.com/robothub/robothub/core/fault"
)

// This file reads what a space's repository holds at a revision: the commit a revision names, the
// entries of a tree, and blobs. The commit, download and tree routes of the hub's HTTP API use it.

// commitIDPattern is a full commit ID, which the public clients pass as a revision once resolved.
var commitIDPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)

// revisionNotFound is the public hub's answer for a revision that names nothing: the Python
// client turns X-Error-Code RevisionNotFound into RevisionNotFoundError.
func revisionNotFound(rev string) error {
	return &fault.Error{Kind: fault.NotFound, Code: "RevisionNotFound", Msg: "Invalid rev id: " + rev}
}

// entryNotFound is the public hub's answer for a path that the revision does not have.
func entryNotFound(format string, args ...any) error {
	return &fault.Error{Kind: fault.NotFound, Code: "EntryNotFound", Msg: fmt.Sprintf(format, args...)}
}

// resolvedRev is a revision resolved to a commit. Ref is the full ref it named (refs/heads/main),
// or "" for a commit ID.
type resolvedRev struct {
	Commit string
	Ref    string
}

// resolve returns the commit a revision names: a branch, a tag, a full ref (refs/pr/1), or a full
// commit ID, as the public hub accepts them ("" is main). Git's other revision syntax (HEAD~1,
// main@{1}, short IDs) is not the hub's and names nothing here.
func (g *gitRepos) resolve(ctx context.Context, space, rev string) (resolvedRev, error) {
	if rev == "" {
		rev = "main"
	}
	if commitIDPattern.MatchString(rev) {
		out, err := g.run(ctx, g.dir(space), "cat-file", "-t", rev)
		if err != nil || strings.TrimSpace(string(out)) != "commit" {
			return resolvedRev{}, revisionNotFound(rev)
		}
		return resolvedRev{Commit: rev}, nil
	}
	refs, err := g.refs(ctx, space)
	if err != nil {
		return resolvedRev{}, err
	}
	candidates := []string{"refs/heads/" + rev, "refs/tags/" + rev}
	if strings.HasPrefix(rev, "refs/") {
		candidates = []string{rev}
	}
	for _, ref := range candidates {
		if _, ok := refs[ref]; !ok {
			continue
		}
		// Peel an annotated tag to its commit.
		out, err := g.run(ctx, g.dir(space), "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
		if err != nil {
			return resolvedRev{}, revisionNotFound(rev)
		}
		return resolvedRev{Commit: strings.TrimSpace(string(out)), Ref: ref}, nil
	}
	return resolvedRev{}, revisionNotFound(rev)
}

// treeEntry is one entry of a tree, as git ls-tree -l shows it.
type treeEntry struct {
	Mode string // 100644, 100755, 120000, 040000, 160000
	Type string // blob, tree, commit (a submodule)
	OID  string
	Size int64  // blobs only
	Path string // from the root of the repository
}

// lsTree lists the tree at dir ("" is the root) of a commit: its direct entries, or with recursive
// every entry below it, trees included. A dir that is missing, or a file, is EntryNotFound.
func (g *gitRepos) lsTree(ctx context.Context, space, commit, dir string, recursive bool) ([]treeEntry, error) {
	dir = strings.Trim(dir, "/")
	object := commit
	if dir != "" {
		object = commit + ":" + dir
		out, err := g.run(ctx, g.dir(space), "cat-file", "-t", object)
		if err != nil {
			return nil, entryNotFound("%s has no folder %s", shortID(commit), dir)
		}
		if t := strings.TrimSpace(string(out)); t != "tree" {
			return nil, entryNotFound("%s is a file at %s, not a folder", dir, shortID(commit))
		}
	}
	args := []string{"ls-tree", "-l", "-z", "--full-tree"}
	if recursive {
		args = append(args, "-r", "-t")
	}
	out, err := g.run(ctx, g.dir(space), append(args, object)...)
	if err != nil {
		return nil, err
	}
	entries, err := parseLsTree(out)
	if err != nil {
		return nil, err
	}
	if dir != "" {
		for i := range entries {
			entries[i].Path = dir + "/" + entries[i].Path
		}
	}
	return entries, nil
}

// parseLsTree reads the output of git ls-tree -l -z.
func parseLsTree(out []byte) ([]treeEntry, error) {
	var entries []treeEntry
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		fields := strings.Fields(string(meta))
		if !ok || len(fields) != 4 {
			return nil, fmt.Errorf("git ls-tree: unexpected line %q", rec)
		}
		e := treeEntry{Mode: fields[0], Type: fields[1], OID: fields[2], Path: string(path)}
		if fields[3] != "-" {
			n, err := strconv.ParseInt(fields[3], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("git ls-tree: size %q", fields[3])
			}
			e.Size = n
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// blob starts reading a blob; the caller reads it whole and then calls wait.
func (g *gitRepos) blob(ctx context.Context, space, oid string) (io.Reader, func() error, error) {
	cmd := exec.CommandContext(ctx, g.git, "cat-file", "blob", oid)
	cmd.Dir, cmd.Env = g.dir(space), g.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	wait := func() error {
		_, _ = io.Copy(io.Discard, out)
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("git cat-file blob %s: %w: %s", oid, err, strings.TrimSpace(stderr.String()))
		}
		return nil
	}
	return out, wait, nil
}

// readBlob returns a blob that is at most limit bytes long.
func (g *gitRepos) readBlob(ctx context.Context, space, oid string, limit int64) ([]byte, error) {
	r, wait, err := g.blob(ctx, space, oid)
	if err != nil {
		return nil, err
	}
	data, readErr := io.ReadAll(io.LimitReader(r, limit+1))
	if err := wait(); err != nil {
		return nil, err
	}
	if readErr != nil {
		return nil, readErr
	}
	if int64(len(data)) > limit {
		return nil, errors.New("the blob is larger than expected")
	}
	return data, nil
}

// shortID is the first 7 digits of a commit ID, for messages.
func shortID(id string) string {
	if len(id) > 7 {
		return id[:7]
	}
	return id
}
