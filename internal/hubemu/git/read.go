package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/robothub/robothub/internal/hubemu/spaces"
)

// This file reads what a space's repository holds, with go-git: refs, the commit a revision names,
// trees and blobs. Each call opens the repository afresh, so that what a push just wrote (a new
// pack, new refs) is always seen.

// commitIDPattern is a full commit ID, which the public clients pass as a revision once resolved.
var commitIDPattern = regexp.MustCompile(`^[0-9a-f]{40}$`)

func (g *Repos) open(space string) (*gogit.Repository, error) {
	r, err := gogit.PlainOpen(g.Dir(space))
	if err != nil {
		return nil, fmt.Errorf("opening the repository of %s: %w", space, err)
	}
	return r, nil
}

// Refs returns every ref of a space's repository (HEAD, a symbolic ref, is not one) and the object
// it points at: for an annotated tag, the tag object, as git for-each-ref shows it.
func (g *Repos) Refs(ctx context.Context, space string) (map[string]string, error) {
	repo, err := g.open(space)
	if err != nil {
		return nil, err
	}
	iter, err := repo.References()
	if err != nil {
		return nil, err
	}
	defer iter.Close()
	refs := map[string]string{}
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference && strings.HasPrefix(ref.Name().String(), "refs/") {
			refs[ref.Name().String()] = ref.Hash().String()
		}
		return ctx.Err()
	})
	return refs, err
}

// Resolve returns the commit a revision names: a branch, a tag, a full ref (refs/pr/1), or a full
// commit ID, as the public hub accepts them ("" is main). Git's other revision syntax (HEAD~1,
// main@{1}, short IDs) is not the hub's and names nothing here.
func (g *Repos) Resolve(ctx context.Context, space, rev string) (spaces.Revision, error) {
	if rev == "" {
		rev = "main"
	}
	repo, err := g.open(space)
	if err != nil {
		return spaces.Revision{}, err
	}
	if commitIDPattern.MatchString(rev) {
		if _, err := repo.CommitObject(plumbing.NewHash(rev)); err != nil {
			return spaces.Revision{}, spaces.RevisionNotFound(rev)
		}
		return spaces.Revision{Commit: rev}, nil
	}
	candidates := []string{"refs/heads/" + rev, "refs/tags/" + rev}
	if strings.HasPrefix(rev, "refs/") {
		candidates = []string{rev}
	}
	for _, name := range candidates {
		ref, err := repo.Reference(plumbing.ReferenceName(name), false)
		if errors.Is(err, plumbing.ErrReferenceNotFound) || (err == nil && ref.Type() != plumbing.HashReference) {
			continue
		}
		if err != nil {
			return spaces.Revision{}, err
		}
		commit, err := peel(repo, ref.Hash())
		if err != nil {
			return spaces.Revision{}, spaces.RevisionNotFound(rev)
		}
		return spaces.Revision{Commit: commit.String(), Ref: name}, nil
	}
	return spaces.Revision{}, spaces.RevisionNotFound(rev)
}

// peel follows annotated tags to the commit they name.
func peel(repo *gogit.Repository, h plumbing.Hash) (plumbing.Hash, error) {
	for range 16 { // a chain of tags longer than this is not a revision anyone gives
		obj, err := repo.Storer.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		switch obj.Type() {
		case plumbing.CommitObject:
			return h, nil
		case plumbing.TagObject:
			tag, err := object.DecodeTag(repo.Storer, obj)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			h = tag.Target
		default:
			return plumbing.ZeroHash, fmt.Errorf("%s is a %s, not a commit", h, obj.Type())
		}
	}
	return plumbing.ZeroHash, errors.New("too many tags in a row")
}

// commitTree returns a commit and its root tree.
func commitTree(repo *gogit.Repository, commit string) (*object.Commit, *object.Tree, error) {
	c, err := repo.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return nil, nil, spaces.RevisionNotFound(commit)
	}
	t, err := c.Tree()
	if err != nil {
		return nil, nil, fmt.Errorf("the tree of %s: %w", spaces.ShortID(commit), err)
	}
	return c, t, nil
}

// Snapshot reads a commit's files, its commit time and its README.md. An empty commit ID (a space
// with no main yet) is an empty snapshot.
func (g *Repos) Snapshot(ctx context.Context, space, commit string) (spaces.Snapshot, error) {
	st := spaces.Snapshot{Files: []string{}}
	if commit == "" {
		return st, nil
	}
	repo, err := g.open(space)
	if err != nil {
		return st, err
	}
	c, tree, err := commitTree(repo, commit)
	if err != nil {
		return st, err
	}
	st.Modified = c.Committer.When.UTC()
	err = walk(ctx, repo, tree, "", true, func(e spaces.TreeEntry) error {
		if e.Type != "tree" {
			st.Files = append(st.Files, e.Path)
		}
		return nil
	}, false)
	if err != nil {
		return st, err
	}
	for _, e := range tree.Entries {
		if e.Name == "README.md" && e.Mode.IsFile() && e.Mode != filemode.Symlink {
			blob, err := repo.BlobObject(e.Hash)
			if err != nil {
				return st, fmt.Errorf("README.md of %s: %w", spaces.ShortID(commit), err)
			}
			r, err := blob.Reader()
			if err != nil {
				return st, err
			}
			st.Readme, err = io.ReadAll(io.LimitReader(r, spaces.MaxReadmeBytes))
			r.Close()
			if err != nil {
				return st, err
			}
		}
	}
	return st, nil
}

// Files lists every file of a commit, folders left out, without sizes.
func (g *Repos) Files(ctx context.Context, space, commit string) ([]spaces.TreeEntry, error) {
	repo, err := g.open(space)
	if err != nil {
		return nil, err
	}
	_, tree, err := commitTree(repo, commit)
	if err != nil {
		return nil, err
	}
	var out []spaces.TreeEntry
	err = walk(ctx, repo, tree, "", true, func(e spaces.TreeEntry) error {
		if e.Type != "tree" {
			out = append(out, e)
		}
		return nil
	}, false)
	return out, err
}

// Tree lists the folder dir of a commit, or everything below it with recursive (folders included,
// each before what it holds), with the size of every blob.
func (g *Repos) Tree(ctx context.Context, space, commit, dir string, recursive bool) ([]spaces.TreeEntry, error) {
	dir = strings.Trim(dir, "/")
	repo, err := g.open(space)
	if err != nil {
		return nil, err
	}
	_, tree, err := commitTree(repo, commit)
	if err != nil {
		return nil, err
	}
	if dir != "" {
		e, err := tree.FindEntry(dir)
		if err != nil {
			return nil, spaces.EntryNotFound("%s has no folder %s", spaces.ShortID(commit), dir)
		}
		if e.Mode != filemode.Dir {
			return nil, spaces.EntryNotFound("%s is a file at %s, not a folder", dir, spaces.ShortID(commit))
		}
		if tree, err = repo.TreeObject(e.Hash); err != nil {
			return nil, err
		}
	}
	var out []spaces.TreeEntry
	err = walk(ctx, repo, tree, dir, recursive, func(e spaces.TreeEntry) error {
		out = append(out, e)
		return nil
	}, true)
	return out, err
}

// Entry returns the entry at path of a commit.
func (g *Repos) Entry(ctx context.Context, space, commit, path string) (spaces.TreeEntry, error) {
	repo, err := g.open(space)
	if err != nil {
		return spaces.TreeEntry{}, err
	}
	_, tree, err := commitTree(repo, commit)
	if err != nil {
		return spaces.TreeEntry{}, err
	}
	e, err := tree.FindEntry(path)
	if err != nil {
		return spaces.TreeEntry{}, spaces.EntryNotFound("%s is not in %s at %s", path, space, spaces.ShortID(commit))
	}
	return entryOf(repo, *e, path, true)
}

// walk calls fn for each entry of tree (whose path is dir), and below it with recursive.
func walk(ctx context.Context, repo *gogit.Repository, tree *object.Tree, dir string, recursive bool, fn func(spaces.TreeEntry) error, sizes bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, e := range tree.Entries {
		p := e.Name
		if dir != "" {
			p = dir + "/" + e.Name
		}
		entry, err := entryOf(repo, e, p, sizes)
		if err != nil {
			return err
		}
		if err := fn(entry); err != nil {
			return err
		}
		if recursive && e.Mode == filemode.Dir {
			sub, err := repo.TreeObject(e.Hash)
			if err != nil {
				return fmt.Errorf("tree %s: %w", p, err)
			}
			if err := walk(ctx, repo, sub, p, true, fn, sizes); err != nil {
				return err
			}
		}
	}
	return nil
}

// entryOf describes a tree entry as git ls-tree -l does: mode, type, object and (blobs) size.
func entryOf(repo *gogit.Repository, e object.TreeEntry, path string, size bool) (spaces.TreeEntry, error) {
	out := spaces.TreeEntry{Mode: fmt.Sprintf("%06o", uint32(e.Mode)), OID: e.Hash.String(), Path: path}
	switch e.Mode {
	case filemode.Dir:
		out.Type = "tree"
	case filemode.Submodule:
		out.Type = "commit"
	default:
		out.Type = "blob"
		if size {
			n, err := repo.Storer.EncodedObjectSize(e.Hash)
			if err != nil {
				return out, fmt.Errorf("the size of %s: %w", path, err)
			}
			out.Size = n
		}
	}
	return out, nil
}

// ReadBlob returns a blob that is at most limit bytes long.
func (g *Repos) ReadBlob(ctx context.Context, space, oid string, limit int64) ([]byte, error) {
	r, err := g.blobReader(space, oid)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errors.New("the blob is larger than expected")
	}
	return data, nil
}

func (g *Repos) blobReader(space, oid string) (io.ReadCloser, error) {
	repo, err := g.open(space)
	if err != nil {
		return nil, err
	}
	blob, err := repo.BlobObject(plumbing.NewHash(oid))
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", oid, err)
	}
	return blob.Reader()
}

// maxInMemoryBlob is the largest file served from memory; larger ones are spooled to a file so that
// ranges can be served from it.
const maxInMemoryBlob = 32 << 20

// OpenBlob returns a blob to read and seek in: in memory when small, else spooled to a file that
// Close removes.
func (g *Repos) OpenBlob(ctx context.Context, space string, blob spaces.TreeEntry) (io.ReadSeekCloser, error) {
	if blob.Size <= maxInMemoryBlob {
		data, err := g.ReadBlob(ctx, space, blob.OID, blob.Size)
		if err != nil {
			return nil, err
		}
		return nopCloser{bytes.NewReader(data)}, nil
	}
	r, err := g.blobReader(space, blob.OID)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := os.CreateTemp(g.root, "blob-*.tmp")
	if err != nil {
		return nil, err
	}
	spool := &spoolFile{f}
	if _, err = io.Copy(f, r); err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		spool.Close()
		return nil, err
	}
	return spool, nil
}

type nopCloser struct{ io.ReadSeeker }

func (nopCloser) Close() error { return nil }

// spoolFile is a temporary file that is removed when closed.
type spoolFile struct{ *os.File }

func (s *spoolFile) Close() error {
	err := s.File.Close()
	if rerr := os.Remove(s.Name()); err == nil {
		err = rerr
	}
	return err
}
