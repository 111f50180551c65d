package http

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/spaces"
)

// publicFunc is a handler of a route that anyone may call; viewer is nil without a token.
type publicFunc func(w http.ResponseWriter, r *http.Request, viewer *hubemu.Principal) error

// public authenticates the token when there is one (an unknown token is a 401, as on the public
// hub, rather than silently anonymous) and calls fn.
func (s *Server) public(fn publicFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var viewer *hubemu.Principal
		var err error
		if token := bearerToken(r); token != "" {
			var p hubemu.Principal
			if p, err = s.hub.Authenticate(r.Context(), token); err == nil {
				viewer = &p
			}
		} else if r.Header.Get("Authorization") != "" {
			err = errorf(fault.Unauthenticated, "Authorization header: send Authorization: Bearer <token>")
		}
		if err == nil {
			err = fn(w, r, viewer)
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	})
}

func (s *Server) handleCreateRepo(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	var in spaces.CreateRepoInput
	if err := decodeLenient(r, &in); err != nil {
		return err
	}
	sp, err := s.spaces.CreateSpace(r.Context(), p, in)
	var exists *spaces.RepoExistsError
	if errors.As(err, &exists) {
		w.Header().Set("X-Error-Message", headerSafe(exists.Error()))
		writeJSON(w, http.StatusConflict, map[string]string{"error": exists.Error(), "url": s.hub.PublicURL() + "/spaces/" + exists.Name})
		return nil
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"url": s.hub.PublicURL() + "/spaces/" + sp.Name, "name": sp.Name, "id": sp.RepoID})
	return nil
}

func (s *Server) handleDeleteRepo(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	var in spaces.RepoRefInput
	if err := decodeLenient(r, &in); err != nil {
		return err
	}
	if err := s.spaces.DeleteSpace(r.Context(), p, in); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{})
	return nil
}

func (s *Server) handleListSpaces(w http.ResponseWriter, r *http.Request, viewer *hubemu.Principal) error {
	q := r.URL.Query()
	query := spaces.SpaceQuery{Tags: q["filter"], Author: q.Get("author"), Search: q.Get("search")}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return errorf(fault.Invalid, "limit: %q is not a positive number", s)
		}
		query.Limit = n
	}
	if s := q.Get("full"); s != "" && s != "true" && s != "false" && s != "1" && s != "0" {
		return errorf(fault.Invalid, "full: %q is not true or false", s)
	}
	list, err := s.spaces.Spaces(r.Context(), viewer, query)
	if err != nil {
		return err
	}
	out := make([]spaces.SpaceRecord, len(list))
	for i, sp := range list {
		out[i] = spaces.Record(sp)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) handleSpaceInfo(w http.ResponseWriter, r *http.Request, viewer *hubemu.Principal) error {
	sp, err := s.spaces.SpaceFor(r.Context(), viewer, r.PathValue("owner")+"/"+r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, spaces.Record(sp))
	return nil
}
