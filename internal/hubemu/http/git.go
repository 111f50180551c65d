package http

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/spaces"
)

// Caps of one git request body, over which the answer is 413: a pushed pack (git-receive-pack), and
// a fetch's negotiation (git-upload-pack: want and have lines, a few KiB even for a large history).
// A body git sends in chunks is spooled to a file first, because CGI needs its length.
const (
	maxGitPushBytes  = 1 << 30
	maxGitFetchBytes = 16 << 20
)

// gitAccess is what a git request does to a space.
type gitAccess int

const (
	gitRead  gitAccess = iota + 1 // clone, fetch (git-upload-pack, and the dumb protocol's files)
	gitWrite                      // push (git-receive-pack)
)

// gitRequest classifies a request under /spaces/<owner>/<name>[.git]: the space, the path that
// follows it, and the access it needs. path "" is the space itself, not a git request.
func gitRequest(r *http.Request) (space, path string, access gitAccess) {
	name, rest, _ := strings.Cut(r.PathValue("rest"), "/")
	space = r.PathValue("owner") + "/" + strings.TrimSuffix(name, ".git")
	if rest == "" {
		return space, "", 0
	}
	path = "/" + rest
	switch {
	case path == "/git-receive-pack",
		path == "/info/refs" && r.URL.Query().Get("service") == "git-receive-pack":
		return space, path, gitWrite
	}
	return space, path, gitRead
}

// gitURLProblem refuses, before anything else, what the router would otherwise read in more than one
// way: an empty path segment (// or an empty owner), an encoded slash (%2F joins two segments into
// one name), and a repeated service parameter (the hub would check one, git http-backend use
// another). The first two are 404 (no such space), the last 400.
func gitURLProblem(r *http.Request) error {
	if strings.Contains(strings.ToLower(r.URL.EscapedPath()), "%2f") {
		return errorf(fault.NotFound, "%s: no space has an encoded slash (%%2F) in its path", r.URL.EscapedPath())
	}
	segs := strings.Split(r.PathValue("rest"), "/")
	for i, seg := range segs {
		// "owner/name/" (the space's landing page with a trailing slash) is the one empty segment.
		if seg == "" && !(i == 1 && len(segs) == 2) {
			return errorf(fault.NotFound, "%s: no space has an empty segment in its path", r.URL.EscapedPath())
		}
	}
	if r.PathValue("owner") == "" {
		return errorf(fault.NotFound, "%s: no space has an empty owner", r.URL.EscapedPath())
	}
	if n := len(r.URL.Query()["service"]); n > 1 {
		return errorf(fault.Invalid, "service: give it once, not %d times", n)
	}
	return nil
}

// emptyGitSegment reports a space path with an empty segment (/spaces//x, a//b), which the router
// would otherwise redirect to another path: such a path is a 404 (one path, one space).
func emptyGitSegment(r *http.Request) error {
	if p := r.URL.EscapedPath(); strings.HasPrefix(p, "/spaces/") && strings.Contains(p, "//") {
		return errorf(fault.NotFound, "%s: no space has an empty segment in its path", p)
	}
	return nil
}

// gitBodyProblem refuses a body over its cap (413) before any of it is read, when its length is
// known; a body of unknown length is cut off at the cap by spoolBody.
func gitBodyProblem(r *http.Request, limit int64) error {
	if r.ContentLength > limit {
		return errorf(fault.TooLarge, "the request body (%d bytes) is larger than the limit of %d bytes", r.ContentLength, limit)
	}
	return nil
}

// gitPathOK refuses the paths that git http-backend fails on without an answer (the CGI handler
// then answers 500): "." and ".." segments, and control characters (a NUL cannot even reach it).
func gitPathOK(path string) bool {
	for _, seg := range strings.Split(path, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return !strings.ContainsFunc(path, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// handleGit serves a space's git repository through git http-backend: anyone may read a public
// space, only its owner a private one, and only the owner with a write token may push. After a push
// that moved refs, the space's tags are read again and a repo.content update is emitted.
func (s *Server) handleGit(w http.ResponseWriter, r *http.Request) {
	if err := gitURLProblem(r); err != nil {
		s.writeGitError(w, r, err)
		return
	}
	name, path, access := gitRequest(r)
	if err := spaces.CheckRepoName(strings.TrimPrefix(name, r.PathValue("owner")+"/")); err != nil {
		s.writeGitError(w, r, hubemu.RepoNotFound(false, name))
		return
	}
	viewer, err := s.gitPrincipal(r)
	if err != nil {
		s.writeGitError(w, r, err)
		return
	}
	sp, err := s.spaces.SpaceFor(r.Context(), viewer, name)
	if err != nil {
		s.writeGitError(w, r, err)
		return
	}
	if path == "" {
		s.writeSpaceLanding(w, r, sp)
		return
	}
	if !gitPathOK(path) {
		s.writeGitError(w, r, errorf(fault.NotFound, "%s has no %q", name, path))
		return
	}
	if access == gitWrite {
		switch {
		case viewer == nil:
			err = errorf(fault.Unauthenticated, "pushing to %s needs a write token of its owner: git sends it as the password (any user name)", name)
		case viewer.User.ID != sp.OwnerID:
			err = errorf(fault.Forbidden, "%s belongs to %s: you (%s) cannot push to it", name, sp.Owner, viewer.User.Name)
		case !viewer.CanWrite():
			err = errorf(fault.Forbidden, "this token has the read role: pushing to %s needs a token with the write role", name)
		}
		if err != nil {
			s.writeGitError(w, r, err)
			return
		}
	}
	if err := s.spaces.Git().Available(); err != nil {
		s.writeGitError(w, r, err)
		return
	}
	limit := int64(maxGitFetchBytes)
	if access == gitWrite {
		limit = maxGitPushBytes
	}
	if err := gitBodyProblem(r, limit); err != nil {
		s.writeGitError(w, r, err)
		return
	}
	if r.ContentLength < 0 || len(r.TransferEncoding) > 0 {
		cleanup, err := spoolBody(r, s.spaces.Git().TempDir(), limit)
		if err != nil {
			s.writeGitError(w, r, err)
			return
		}
		defer cleanup()
	}
	remoteUser := ""
	if viewer != nil {
		remoteUser = viewer.User.Name
	}
	if !(access == gitWrite && r.Method == http.MethodPost) {
		s.backend.Serve(w, r, sp.Name, path, remoteUser, s.log)
		return
	}
	err = s.spaces.Push(r.Context(), *viewer, sp, func() { s.backend.Serve(w, r, sp.Name, path, remoteUser, s.log) })
	if err != nil {
		s.writeGitError(w, r, err)
	}
}

// gitPrincipal returns the caller of a git request: nil without credentials, an error for a token
// the hub does not know. git sends the token as the password of HTTP Basic (the user name is not
// checked, as on the public hub), or as a bearer token through http.extraHeader.
func (s *Server) gitPrincipal(r *http.Request) (*hubemu.Principal, error) {
	token := bearerToken(r)
	if token == "" {
		if _, password, ok := r.BasicAuth(); ok {
			token = password
		}
	}
	if token == "" {
		return nil, nil
	}
	p, err := s.hub.Authenticate(r.Context(), token)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// writeGitError answers a git client: a status git understands, the message in text (git shows it
// for some statuses) and in X-Error-Message, and on 401 a Basic challenge so that git asks its
// credential helpers for the token.
func (s *Server) writeGitError(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := statusOf(err)
	if status == http.StatusInternalServerError {
		s.log.Error("git request failed", "method", r.Method, "path", r.URL.Path, "request_id", w.Header().Get("X-Request-Id"), "err", err)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="robothub hub emulator"`)
	}
	closeUnread(w, status)
	var known *fault.Error
	if errors.As(err, &known) && known.Code != "" {
		w.Header().Set("X-Error-Code", known.Code)
	}
	w.Header().Set("X-Error-Message", headerSafe(msg))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(msg)+1))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}

// writeSpaceLanding answers a browser (or curl) at the space's own address with how to clone it.
func (s *Server) writeSpaceLanding(w http.ResponseWriter, r *http.Request, sp *hubemu.Space) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.writeGitError(w, r, errorf(fault.Invalid, "%s %s: a space's address takes GET; git uses the paths under it", r.Method, r.URL.Path))
		return
	}
	visibility := "public"
	if sp.Private {
		visibility = "private"
	}
	public := s.hub.PublicURL()
	body := fmt.Sprintf("%s: a %s %s space on the local hub.\n\n  git clone %s/spaces/%s\n\nDetails: %s/api/spaces/%s\n",
		sp.Name, visibility, sp.SDK, public, sp.Name, public, sp.Name)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = io.WriteString(w, body)
	}
}

// spoolBody replaces a request body of unknown length with a file holding it, so that CGI can pass
// CONTENT_LENGTH.
func spoolBody(r *http.Request, dir string, limit int64) (cleanup func(), err error) {
	f, err := os.CreateTemp(dir, "push-*.tmp")
	if err != nil {
		return nil, err
	}
	cleanup = func() { f.Close(); os.Remove(f.Name()) }
	n, err := io.Copy(f, io.LimitReader(r.Body, limit+1))
	if err == nil && n > limit {
		err = &fault.Error{Kind: fault.TooLarge, Msg: fmt.Sprintf("the request body is larger than the limit of %d bytes", limit)}
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		cleanup()
		var known *fault.Error
		if !errors.As(err, &known) {
			err = errorf(fault.Invalid, "reading the request body: %v", err)
		}
		return nil, err
	}
	r.Body, r.ContentLength, r.TransferEncoding = f, n, nil
	return cleanup, nil
}
