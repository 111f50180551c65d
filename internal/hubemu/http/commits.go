package http

import (
	"net/http"
	"strings"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/spaces"
)

// The HTTP side of uploads, as the public Python client calls it before and for a commit:
//
//	POST /api/spaces/{owner}/{name}/preupload/{rev}  how each file is sent (always "regular" here)
//	POST /api/validate-yaml                          whether README.md's front matter reads
//	POST /api/spaces/{owner}/{name}/commit/{rev}     the commit (NDJSON)
//
// The routes take models and datasets in the path too, and answer that this hub stores spaces only.

// repoPathSpace returns owner/name from a route /api/{type}/{owner}/{name}/...: type must be spaces.
func repoPathSpace(r *http.Request) (string, error) {
	name := r.PathValue("owner") + "/" + r.PathValue("name")
	if t := r.PathValue("type"); t != "spaces" {
		return "", &fault.Error{Kind: fault.NotFound, Code: "RepoNotFound",
			Msg: "Repository not found: " + strings.TrimSuffix(t, "s") + " " + name + ": this local hub stores spaces only (use repo_type=\"space\")"}
	}
	if err := spaces.CheckRepoName(r.PathValue("name")); err != nil {
		return "", hubemu.RepoNotFound(false, name)
	}
	return name, nil
}

// handlePreupload answers how each file of a coming commit is to be sent (hubemu.Preupload).
func (s *Server) handlePreupload(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	name, err := repoPathSpace(r)
	if err != nil {
		return err
	}
	var in struct {
		Files     []spaces.PreuploadFile `json:"files"`
		GitIgnore *string                `json:"gitIgnore"`
	}
	if err := decodeLenient(r, &in); err != nil {
		return err
	}
	out, err := s.spaces.Preupload(r.Context(), p, name, r.PathValue("rev"), in.Files, in.GitIgnore)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": out})
	return nil
}

// handleValidateYAML checks the front matter of a README, as the client does before a commit that
// changes README.md. Its answer is always JSON with errors and warnings (the client reads both).
func (s *Server) handleValidateYAML(w http.ResponseWriter, r *http.Request, _ *hubemu.Principal) error {
	var in struct {
		Content  string `json:"content"`
		RepoType string `json:"repoType"`
	}
	if err := decodeLenient(r, &in); err != nil {
		return err
	}
	problem := spaces.CardProblem([]byte(in.Content))
	if problem != "" {
		msg := "Invalid metadata in README.md: " + problem
		w.Header().Set("X-Error-Message", headerSafe(msg))
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": msg, "errors": []map[string]string{{"message": problem}}, "warnings": []any{}})
		return nil
	}
	writeJSON(w, http.StatusOK, map[string]any{"errors": []any{}, "warnings": []any{}})
	return nil
}

// handleCommit makes a commit from the NDJSON body.
func (s *Server) handleCommit(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	name, err := repoPathSpace(r)
	if err != nil {
		return err
	}
	if r.URL.Query().Get("create_pr") == "1" || r.URL.Query().Get("create_pr") == "true" {
		return errorf(fault.Invalid, "create_pr: this local hub makes no pull requests from commits: commit to a branch")
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/x-ndjson") {
		return errorf(fault.Invalid, "Content-Type %q: send the commit as application/x-ndjson (a header line, then one line per file or deletion)", ct)
	}
	res, err := s.spaces.Commit(r.Context(), p, name, r.PathValue("rev"), r.Body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
