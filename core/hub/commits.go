package hub

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// CommitRequest is a commit made through the hub's commit API, without git: what the public Python
// client's create_commit and upload_folder send. Files travel inline (base64), so each must be
// under the hub's inline limit (10 MiB); larger files need LFS, which this client does not speak.
type CommitRequest struct {
	RepoType       string // space, model or dataset
	RepoID         string // owner/name
	Revision       string // a branch; "" is main
	Summary        string // the commit message's first line (required)
	Description    string
	ParentCommit   string       // if set, the commit fails unless the branch's head is this commit
	Files          []CommitFile // added or replaced
	DeletedFiles   []string     // paths of files to delete
	DeletedFolders []string     // paths of folders to delete with everything in them
}

// CommitFile is one file of a commit.
type CommitFile struct {
	Path    string // in the repo, with "/" separators
	Content []byte
}

// CommitInfo is a commit the hub made.
type CommitInfo struct {
	OID string `json:"commitOid"` // the new commit's ID
	URL string `json:"commitUrl"`
}

// Commit sends a commit to the hub's commit API (POST /api/{type}s/{id}/commit/{revision}, as
// NDJSON). It is sent once and never retried: a commit whose answer was lost may have been made.
func (c *Client) Commit(ctx context.Context, r CommitRequest) (*CommitInfo, error) {
	if _, err := repoRef(r.RepoType, r.RepoID); err != nil {
		return nil, err
	}
	owner, name, err := splitRepoID(r.RepoID, true)
	switch {
	case err != nil:
		return nil, err
	case strings.TrimSpace(r.Summary) == "":
		return nil, invalid("summary", "the commit message is empty")
	}
	header := map[string]string{"summary": r.Summary, "description": r.Description}
	if r.ParentCommit != "" {
		header["parentCommit"] = r.ParentCommit
	}
	type line struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	}
	lines := []line{{"header", header}}
	for _, p := range r.DeletedFolders {
		lines = append(lines, line{"deletedFolder", map[string]string{"path": p}})
	}
	for _, p := range r.DeletedFiles {
		lines = append(lines, line{"deletedFile", map[string]string{"path": p}})
	}
	for _, f := range r.Files {
		if f.Path == "" || strings.HasPrefix(f.Path, "/") {
			return nil, invalid("files", "%q is not a path in the repo", f.Path)
		}
		v := map[string]string{"path": f.Path, "encoding": "base64", "content": base64.StdEncoding.EncodeToString(f.Content)}
		lines = append(lines, line{"file", v})
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return nil, err
		}
	}
	rev := cmp.Or(r.Revision, "main")
	path := "/api/" + r.RepoType + "s/" + url.PathEscape(owner) + "/" + url.PathEscape(name) + "/commit/" + url.PathEscape(rev)
	return send[CommitInfo](ctx, c, Call{Method: http.MethodPost, Path: path, raw: body.Bytes(), contentType: "application/x-ndjson"})
}
