package spaces

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// MainRef is the branch whose head is a space's headSha and whose README gives its tags.
const MainRef = "refs/heads/main"

// Git is what the hub needs of its spaces' git repositories: internal/hubemu/git keeps them on disk
// and reads them with go-git. Spaces are named owner/name, already checked by the hub.
type Git interface {
	// Available says why spaces cannot be served (git or its http-backend is missing), or nil.
	Available() error
	// Create makes an empty repository whose branch will be main; Remove deletes one.
	Create(ctx context.Context, space string) error
	Remove(space string) error
	// Refs returns every ref of a repository and the object it points at.
	Refs(ctx context.Context, space string) (map[string]string, error)
	// Resolve returns the commit a revision names: a branch, a tag, a full ref or a full commit ID
	// ("" is main). Anything else is RevisionNotFound.
	Resolve(ctx context.Context, space, rev string) (Revision, error)
	// Snapshot reads what the hub shows of a commit: its files, its time and its README.md.
	Snapshot(ctx context.Context, space, commit string) (Snapshot, error)
	// Tree lists the folder dir ("" is the root) of a commit: its entries, or with recursive every
	// entry below it, folders included, in git's order. A missing folder, or a file, is EntryNotFound.
	Tree(ctx context.Context, space, commit, dir string, recursive bool) ([]TreeEntry, error)
	// Files lists every file of a commit (blobs, links and submodules, not folders) with its mode,
	// without sizes: what a commit is planned against.
	Files(ctx context.Context, space, commit string) ([]TreeEntry, error)
	// Entry returns the entry at path of a commit, or EntryNotFound.
	Entry(ctx context.Context, space, commit, path string) (TreeEntry, error)
	// ReadBlob returns a blob of at most limit bytes.
	ReadBlob(ctx context.Context, space, oid string, limit int64) ([]byte, error)
	// OpenBlob opens a blob for reading and seeking (ranges of a download).
	OpenBlob(ctx context.Context, space string, blob TreeEntry) (io.ReadSeekCloser, error)
	// WriteCommit makes a commit on c.Ref, a fast-forward of c.Parent, with c's changes.
	WriteCommit(ctx context.Context, space string, c CommitWrite) error
	// TempDir is where large request bodies wait while they are read: on the repositories' disk.
	TempDir() string
}

// Revision is a revision resolved to a commit. Ref is the full ref it named (refs/heads/main), or
// "" for a commit ID.
type Revision struct {
	Commit string
	Ref    string
}

// Snapshot is what the hub reads of a commit.
type Snapshot struct {
	Files    []string  // every file (blobs and submodules), in git's order
	Modified time.Time // the commit time
	Readme   []byte    // README.md at the root, at most MaxReadmeBytes of it; nil without one
}

// MaxReadmeBytes caps how much of a README is read for its front matter.
const MaxReadmeBytes = 512 << 10

// TreeEntry is one entry of a tree.
type TreeEntry struct {
	Mode string // 100644, 100755, 120000, 040000, 160000
	Type string // blob, tree, commit (a submodule)
	OID  string
	Size int64  // blobs only
	Path string // from the root of the repository
}

// CommitWrite is a commit to write: who made it, its message, and its changes in order.
type CommitWrite struct {
	Ref     string // the branch, refs/heads/...
	Parent  string // its head before; "" for the first commit of an empty repository
	Author  string // "name <email>"
	When    time.Time
	Message string
	Changes []FileChange
}

// FileChange is one change of a commit: a file written (Content set) or a path deleted, with
// everything under it when it is a folder.
type FileChange struct {
	Path    string
	Delete  bool
	Mode    string            // of a written file: 100644 or 100755
	Content *io.SectionReader // of a written file
}

// RevisionNotFound is the public hub's answer for a revision that names nothing: the Python
// client turns X-Error-Code RevisionNotFound into RevisionNotFoundError.
func RevisionNotFound(rev string) error {
	return &fault.Error{Kind: fault.NotFound, Code: "RevisionNotFound", Msg: "Invalid rev id: " + rev}
}

// EntryNotFound is the public hub's answer for a path that the revision does not have.
func EntryNotFound(format string, args ...any) error {
	return &fault.Error{Kind: fault.NotFound, Code: "EntryNotFound", Msg: fmt.Sprintf(format, args...)}
}

// ShortID is the first 7 digits of a commit ID, for messages.
func ShortID(id string) string {
	if len(id) > 7 {
		return id[:7]
	}
	return id
}
