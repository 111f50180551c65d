package http

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/spaces"
)

// This file is the hub's download side, which the public Python client's hf_hub_download,
// snapshot_download and list_repo_tree (and so `hf download`) use:
//
//	GET /api/spaces/{owner}/{name}/revision/{rev}         the space at a revision: its sha, files, card
//	GET /api/spaces/{owner}/{name}/tree/{rev}[/{path}]    the entries of a folder, paginated by Link
//	GET /spaces/{owner}/{name}/resolve/{rev}/{path}       a file, with X-Repo-Commit, ETag and its size
//
// Reads follow the visibility of the space: anyone for a public one, its owner for a private one.

// treePageSize is how many tree entries one page holds, as on the public hub.
const treePageSize = 1000

// readableSpace returns owner/name of a /api/{type}/{owner}/{name}/... route.
func readableSpace(r *http.Request) (string, error) { return repoPathSpace(r) }

// handleSpaceRevision answers the space as it is at a revision (hubemu.SpaceAt).
func (s *Server) handleSpaceRevision(w http.ResponseWriter, r *http.Request, viewer *hubemu.Principal) error {
	name, err := readableSpace(r)
	if err != nil {
		return err
	}
	b := r.URL.Query().Get("blobs")
	rec, err := s.spaces.SpaceAt(r.Context(), viewer, name, r.PathValue("rev"), b == "true" || b == "1" || b == "True")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rec)
	return nil
}

// treeItem is one entry of a tree listing, in the public hub's shape.
type treeItem struct {
	Type string `json:"type"` // file or directory
	OID  string `json:"oid"`
	Size int64  `json:"size"`
	Path string `json:"path"`
}

// handleTree lists a folder at a revision (list_repo_tree); recursive=true lists everything below
// it, folders included. Pages of treePageSize entries are linked with Link: <...>; rel="next".
func (s *Server) handleTree(w http.ResponseWriter, r *http.Request, viewer *hubemu.Principal) error {
	name, err := readableSpace(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	recursive := false
	switch v := strings.ToLower(q.Get("recursive")); v {
	case "", "false", "0":
	case "true", "1":
		recursive = true
	default:
		return errorf(fault.Invalid, "recursive: %q is not true or false", q.Get("recursive"))
	}
	start := 0
	if c := q.Get("cursor"); c != "" {
		if start, err = strconv.Atoi(c); err != nil || start < 0 {
			return errorf(fault.Invalid, "cursor: %q is not a cursor of this listing", c)
		}
	}
	commit, entries, err := s.spaces.SpaceTree(r.Context(), viewer, name, r.PathValue("rev"), r.PathValue("path"), recursive)
	if commit != "" {
		w.Header().Set("X-Repo-Commit", commit)
	}
	if err != nil {
		return err
	}
	items := []treeItem{}
	for _, en := range entries {
		switch en.Type {
		case "blob":
			items = append(items, treeItem{Type: "file", OID: en.OID, Size: en.Size, Path: en.Path})
		case "tree":
			items = append(items, treeItem{Type: "directory", OID: en.OID, Path: en.Path})
		}
	}
	if start > len(items) {
		start = len(items)
	}
	page := items[start:min(len(items), start+treePageSize)]
	if end := start + len(page); end < len(items) {
		next := url.Values{}
		for k, v := range q {
			next[k] = v
		}
		next.Set("cursor", strconv.Itoa(end))
		w.Header().Set("Link", fmt.Sprintf("<%s%s?%s>; rel=\"next\"", s.hub.PublicURL(), r.URL.EscapedPath(), next.Encode()))
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// handleResolve serves one file of a revision (hf_hub_download): X-Repo-Commit is the commit the
// revision resolved to, ETag the file's blob ID, Content-Length its size; ranges are served. A HEAD
// answers the same headers without the file. A missing file is 404 EntryNotFound, with
// X-Repo-Commit so that the client can remember that the file does not exist at that commit.
func (s *Server) handleResolve(w http.ResponseWriter, r *http.Request, viewer *hubemu.Principal) error {
	name := r.PathValue("owner") + "/" + r.PathValue("name")
	if err := spaces.CheckRepoName(r.PathValue("name")); err != nil {
		return hubemu.RepoNotFound(viewer == nil, name)
	}
	file := r.PathValue("path")
	commit, blob, err := s.spaces.SpaceFile(r.Context(), viewer, name, r.PathValue("rev"), file)
	if commit != "" {
		w.Header().Set("X-Repo-Commit", commit)
	}
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("ETag", `"`+blob.OID+`"`)
	h.Set("Accept-Ranges", "bytes")
	h.Set("Content-Disposition", contentDisposition(path.Base(file)))
	ctype := mime.TypeByExtension(path.Ext(file))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	h.Set("Content-Type", ctype)
	if r.Method == http.MethodHead {
		h.Set("Content-Length", strconv.FormatInt(blob.Size, 10))
		w.WriteHeader(http.StatusOK)
		return nil
	}
	content, err := s.spaces.OpenFile(r.Context(), name, blob)
	if err != nil {
		return err
	}
	defer content.Close()
	// ServeContent answers ranges and If-None-Match against the ETag set above.
	http.ServeContent(w, r, "", time.Time{}, content)
	return nil
}

// contentDisposition names the file for a browser, in ASCII and in UTF-8 (RFC 6266).
func contentDisposition(name string) string {
	ascii := strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '_'
		}
		return r
	}, name)
	return fmt.Sprintf(`inline; filename*=UTF-8''%s; filename="%s";`, url.PathEscape(name), ascii)
}
