package hubemu

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// spaceRecord is a space in the public hub's JSON shape (GET /api/spaces, GET /api/spaces/{id}).
type spaceRecord struct {
	MongoID      string         `json:"_id"`
	ID           string         `json:"id"` // owner/name
	Author       string         `json:"author"`
	SHA          string         `json:"sha,omitempty"` // the head of main; absent before the first push
	LastModified time.Time      `json:"lastModified"`
	CreatedAt    time.Time      `json:"createdAt"`
	Private      bool           `json:"private"`
	SDK          string         `json:"sdk"`
	Tags         []string       `json:"tags"`
	Likes        int            `json:"likes"`
	Subdomain    string         `json:"subdomain"`
	CardData     map[string]any `json:"cardData"`
	Siblings     []sibling      `json:"siblings"`
}

// sibling is one file at the head of main.
type sibling struct {
	RFilename string `json:"rfilename"`
	Size      *int64 `json:"size,omitempty"`   // with blobs=true
	BlobID    string `json:"blobId,omitempty"` // with blobs=true
}

func (e *Emulator) spaceRecordOf(sp *Space) spaceRecord {
	rec := spaceRecord{MongoID: sp.RepoID, ID: sp.Name, Author: sp.Owner, SHA: sp.HeadSha, LastModified: sp.LastModified,
		CreatedAt: sp.CreatedAt, Private: sp.Private, SDK: sp.SDK, Tags: sp.Tags, CardData: sp.CardData,
		Subdomain: subdomainOf(sp.Name), Siblings: make([]sibling, len(sp.Files))}
	for i, f := range sp.Files {
		rec.Siblings[i] = sibling{RFilename: f}
	}
	if rec.Tags == nil {
		rec.Tags = []string{}
	}
	if rec.CardData == nil {
		rec.CardData = map[string]any{}
	}
	return rec
}

// publicFunc is a handler of a route that anyone may call; viewer is nil without a token.
type publicFunc func(w http.ResponseWriter, r *http.Request, viewer *Principal) error

// public authenticates the token when there is one (an unknown token is a 401, as on the public
// hub, rather than silently anonymous) and calls fn.
func (e *Emulator) public(fn publicFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var viewer *Principal
		var err error
		if token := bearerToken(r); token != "" {
			var p Principal
			if p, err = e.Authenticate(r.Context(), token); err == nil {
				viewer = &p
			}
		} else if r.Header.Get("Authorization") != "" {
			err = errorf(fault.Unauthenticated, "Authorization header: send Authorization: Bearer <token>")
		}
		if err == nil {
			err = fn(w, r, viewer)
		}
		if err != nil {
			e.writeError(w, r, err)
		}
	})
}

func (e *Emulator) handleCreateRepo(w http.ResponseWriter, r *http.Request, p Principal) error {
	var in CreateRepoInput
	if err := decodeLenient(r, &in); err != nil {
		return err
	}
	sp, err := e.CreateSpace(r.Context(), p, in)
	var exists *RepoExistsError
	if errors.As(err, &exists) {
		w.Header().Set("X-Error-Message", headerSafe(exists.Error()))
		writeJSON(w, http.StatusConflict, map[string]string{"error": exists.Error(), "url": e.publicURL + "/spaces/" + exists.Name})
		return nil
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"url": e.publicURL + "/spaces/" + sp.Name, "name": sp.Name, "id": sp.RepoID})
	return nil
}

func (e *Emulator) handleDeleteRepo(w http.ResponseWriter, r *http.Request, p Principal) error {
	var in RepoRefInput
	if err := decodeLenient(r, &in); err != nil {
		return err
	}
	if err := e.DeleteSpace(r.Context(), p, in); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{})
	return nil
}

func (e *Emulator) handleListSpaces(w http.ResponseWriter, r *http.Request, viewer *Principal) error {
	q := r.URL.Query()
	query := SpaceQuery{Tags: q["filter"], Author: q.Get("author"), Search: q.Get("search")}
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
	spaces, err := e.Spaces(r.Context(), viewer, query)
	if err != nil {
		return err
	}
	out := make([]spaceRecord, len(spaces))
	for i, sp := range spaces {
		out[i] = e.spaceRecordOf(sp)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (e *Emulator) handleSpaceInfo(w http.ResponseWriter, r *http.Request, viewer *Principal) error {
	sp, err := e.SpaceFor(r.Context(), viewer, r.PathValue("owner")+"/"+r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, e.spaceRecordOf(sp))
	return nil
}
