package http

import (
	"net/http"
	"strconv"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/internal/hubemu"
)

// The discussions that emitted events made, as the public Python client's get_repo_discussions and
// get_discussion_details (hf discussions list and info) read them:
//
//	GET /api/{models|datasets|spaces}/{owner}/{name}/discussions?p=&type=&status=&author=
//	GET /api/{models|datasets|spaces}/{owner}/{name}/discussions/{num}

// discussionRepo returns the repo of a discussions route if viewer may see it.
func (s *Server) discussionRepo(r *http.Request, viewer *hubemu.Principal) (*hubemu.Repo, error) {
	types := map[string]string{"models": "model", "datasets": "dataset", "spaces": "space"}
	typ, ok := types[r.PathValue("type")]
	if !ok {
		return nil, errorf(fault.NotFound, "no such route: %s %s", r.Method, r.URL.Path)
	}
	return s.hub.DiscussionRepo(r.Context(), viewer, typ, r.PathValue("owner")+"/"+r.PathValue("name"))
}

// handleDiscussions lists a repo's discussions, newest first, 50 a page (p from 0).
func (s *Server) handleDiscussions(w http.ResponseWriter, r *http.Request, viewer *hubemu.Principal) error {
	repo, err := s.discussionRepo(r, viewer)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var query hubemu.DiscussionQuery
	switch t := q.Get("type"); t {
	case "", "all":
	case "discussion", "pull_request":
		query.PullRequests = new(t == "pull_request")
	default:
		return errorf(fault.Invalid, "type: %q is not one of all, discussion, pull_request", t)
	}
	switch st := q.Get("status"); st {
	case "", "all":
	case "open", "closed":
		query.Status = st
	default:
		return errorf(fault.Invalid, "status: %q is not one of all, open, closed", st)
	}
	query.Author = q.Get("author")
	page := 0
	if p := q.Get("p"); p != "" {
		if page, err = strconv.Atoi(p); err != nil || page < 0 {
			return errorf(fault.Invalid, "p: %q is not a page number (from 0)", p)
		}
	}
	out, err := s.hub.Discussions(r.Context(), repo, query, page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// handleDiscussion answers one discussion with its history: comments, status and title changes.
func (s *Server) handleDiscussion(w http.ResponseWriter, r *http.Request, viewer *hubemu.Principal) error {
	repo, err := s.discussionRepo(r, viewer)
	if err != nil {
		return err
	}
	num, err := strconv.Atoi(r.PathValue("num"))
	if err != nil || num < 1 {
		return errorf(fault.Invalid, "%q is not a discussion number", r.PathValue("num"))
	}
	out, err := s.hub.DiscussionDetails(r.Context(), repo, num)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
