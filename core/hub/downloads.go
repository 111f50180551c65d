package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/google/renameio/v2/maybe"

	"github.com/robothub/robothub/core/fault"
)

// The hub's download side, as its Python client's snapshot_download uses it:
//
//	GET /api/{models|datasets|spaces}/{repo_id}/revision/{revision}   the commit and its files
//	GET /{|datasets/|spaces/}{repo_id}/resolve/{commit}/{file}         a file at that commit
//
// Snapshot keeps what it downloads in a cache laid out as the Python client lays out its own
// (<cache>/datasets--owner--name/snapshots/<commit>/..., refs/<revision> holding the commit), so a
// repo downloaded once is read from disk when the hub cannot be reached.

// RepoRevision is a repo at a revision: the commit the revision resolved to and its files.
type RepoRevision struct {
	SHA      string `json:"sha"`
	Siblings []struct {
		RFilename string `json:"rfilename"`
	} `json:"siblings"`
}

// Files returns the paths of the repo's files.
func (r *RepoRevision) Files() []string {
	out := make([]string, len(r.Siblings))
	for i, s := range r.Siblings {
		out[i] = s.RFilename
	}
	return out
}

// rawBody receives an answer's bytes as they are (do decodes every other out as JSON).
type rawBody []byte

// commitSHA is what a commit ID looks like; anything else from a hub is refused before it names a
// folder of the cache.
var commitSHA = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{7,64}$`) })

// refName is a revision that names a file of refs/ as it is (main, v1.0); others are not cached by
// name.
var refName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`) })

func repoPrefixes(repoType string) (api, files string, err error) {
	switch repoType {
	case "model":
		return "/api/models/", "/", nil
	case "dataset":
		return "/api/datasets/", "/datasets/", nil
	case "space":
		return "/api/spaces/", "/spaces/", nil
	}
	return "", "", invalid("repo_type", "%q is not one of %s", repoType, strings.Join(RepoTypes, ", "))
}

// escapeRepoPath escapes each segment of a slash-separated path.
func escapeRepoPath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// Revision returns the commit a revision ("" for main) of a repo resolves to, and its files.
func (c *Client) Revision(ctx context.Context, repoType, id, revision string) (*RepoRevision, error) {
	api, _, err := repoPrefixes(repoType)
	if err != nil {
		return nil, err
	}
	if _, _, err := splitRepoID(id, false); err != nil {
		return nil, err
	}
	if revision == "" {
		revision = "main"
	}
	out, err := send[RepoRevision](ctx, c, Call{Method: http.MethodGet, Path: api + escapeRepoPath(id) + "/revision/" + url.PathEscape(revision), Idempotent: true})
	if err != nil {
		return nil, err
	}
	if !commitSHA().MatchString(out.SHA) {
		return nil, fmt.Errorf("the hub answered %s %s at %s with the commit %q, which is not a commit ID", repoType, id, revision, out.SHA)
	}
	return out, nil
}

// Download returns one file of a repo at a revision (best a commit, as Revision gives). A file over
// the client's cap (WithDownloadCaps; 64 MiB by default) is an error naming it and the cap
// (fault.Upstream), never a part of it.
func (c *Client) Download(ctx context.Context, repoType, id, revision, file string) ([]byte, error) {
	_, files, err := repoPrefixes(repoType)
	if err != nil {
		return nil, err
	}
	if _, _, err := splitRepoID(id, false); err != nil {
		return nil, err
	}
	if _, err := localPath(file); err != nil {
		return nil, err
	}
	var body rawBody
	p := files + escapeRepoPath(id) + "/resolve/" + url.PathEscape(revision) + "/" + escapeRepoPath(file)
	if _, err := c.do(ctx, Call{Method: http.MethodGet, Path: p, Idempotent: true, maxBytes: c.maxFile}, &body); err != nil {
		var over *overCapError
		if errors.As(err, &over) {
			return nil, fault.New(fault.Upstream, "the file %s of %s %s is larger than the cap of %s per file: it is not downloaded (the hub client's download caps)",
				file, repoType, id, byteSize(over.limit))
		}
		return nil, err
	}
	return body, nil
}

// localPath checks a file name a hub gave and returns it as a relative path of this system:
// nothing absolute, no "..", no backslash or NUL, nothing Windows reserves.
func localPath(file string) (string, error) {
	if file == "" || strings.ContainsAny(file, "\\\x00") || path.Clean(file) != file {
		return "", invalid("file", "%q is not a clean relative path of a repo", file)
	}
	p, err := filepath.Localize(file)
	if err != nil {
		return "", invalid("file", "%q is not a clean relative path of a repo: %v", file, err)
	}
	return p, nil
}

// Snapshot is a repo's files on disk at one commit.
type Snapshot struct {
	Dir    string // the folder holding the files
	Commit string
	Cached bool // the hub could not be reached: this is what an earlier Snapshot downloaded
}

// SnapshotDownload downloads the files of a repo at a revision ("" for main) that want accepts
// (nil: all) into cacheDir, and returns the folder that holds them. Files already there at that
// commit are not downloaded again. When the hub cannot be reached (no answer, or 5xx), the snapshot
// an earlier call made of that revision is returned (Cached); a hub that answers that the repo
// does not exist is believed (fault.ErrNotFound), whatever the cache holds. A file over the
// client's cap per file, or files together over its cap per snapshot, is an error naming the file
// and the cap (fault.Upstream): nothing cut short is written, and the revision's ref is not, so
// the snapshot is never taken for complete.
func (c *Client) SnapshotDownload(ctx context.Context, repoType, id, revision, cacheDir string, want func(file string) bool) (*Snapshot, error) {
	if revision == "" {
		revision = "main"
	}
	if _, _, err := splitRepoID(id, false); err != nil {
		return nil, err
	}
	repoDir := filepath.Join(cacheDir, repoType+"s--"+strings.ReplaceAll(id, "/", "--"))
	rev, err := c.Revision(ctx, repoType, id, revision)
	if err != nil {
		var te *TransportError
		var he *Error
		if errors.As(err, &te) || (errors.As(err, &he) && he.Status >= 500) {
			if snap := cachedSnapshot(repoDir, revision); snap != nil {
				return snap, nil
			}
		}
		return nil, err
	}
	dir := filepath.Join(repoDir, "snapshots", rev.SHA)
	var total int64
	overTotal := func(f string) error {
		return fault.New(fault.Upstream, "%s %s at %s holds more than the cap of %s per snapshot (reached at the file %s): it is not downloaded (the hub client's download caps)",
			repoType, id, rev.SHA, byteSize(c.maxSnapshot), f)
	}
	for _, f := range rev.Files() {
		if want != nil && !want(f) {
			continue
		}
		local, err := localPath(f)
		if err != nil {
			return nil, fmt.Errorf("%s %s lists the file %q: %w", repoType, id, f, err)
		}
		dst := filepath.Join(dir, local)
		if fi, err := os.Stat(dst); err == nil {
			if total += fi.Size(); total > c.maxSnapshot {
				return nil, overTotal(f)
			}
			continue
		}
		data, err := c.Download(ctx, repoType, id, rev.SHA, f)
		if err != nil {
			return nil, err
		}
		if total += int64(len(data)); total > c.maxSnapshot {
			return nil, overTotal(f)
		}
		if err := writeFileAtomic(dst, data); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if refName().MatchString(revision) {
		if err := writeFileAtomic(filepath.Join(repoDir, "refs", revision), []byte(rev.SHA)); err != nil {
			return nil, err
		}
	}
	return &Snapshot{Dir: dir, Commit: rev.SHA}, nil
}

// CachedSnapshot returns the snapshot of a revision that an earlier SnapshotDownload into
// cacheDir left, without asking a hub; fault.ErrNotFound when there is none.
func CachedSnapshot(cacheDir, repoType, id, revision string) (*Snapshot, error) {
	if _, _, err := splitRepoID(id, false); err != nil {
		return nil, err
	}
	if snap := cachedSnapshot(filepath.Join(cacheDir, repoType+"s--"+strings.ReplaceAll(id, "/", "--")), revision); snap != nil {
		return snap, nil
	}
	return nil, fault.NotFoundf("%s %s at %s was never downloaded into %s", repoType, id, revision, cacheDir)
}

// cachedSnapshot is the snapshot of revision an earlier download left, or nil.
func cachedSnapshot(repoDir, revision string) *Snapshot {
	if !refName().MatchString(revision) {
		return nil
	}
	sha, err := os.ReadFile(filepath.Join(repoDir, "refs", revision))
	if err != nil || !commitSHA().Match(sha) {
		return nil
	}
	dir := filepath.Join(repoDir, "snapshots", string(sha))
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	return &Snapshot{Dir: dir, Commit: string(sha), Cached: true}
}

// writeFileAtomic writes a file so that a reader never sees half of it and an interrupted
// download leaves nothing (renameio: a temporary file, synced, renamed over; on Windows, where
// renameio has no atomic rename, a plain write).
func writeFileAtomic(dst string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := maybe.WriteFile(dst, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	return nil
}
