package hubemu

import (
	"errors"
	"net/http"
	"strings"

	"github.com/robothub/robothub/core/fault"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/robothub/robothub/core/hub"
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
	if err := checkRepoName(r.PathValue("name")); err != nil {
		return "", repoNotFound(false, name)
	}
	return name, nil
}

type preuploadFile struct {
	Path   string `json:"path"`
	Sample string `json:"sample"`
	Size   int64  `json:"size"`
}

type preuploadAnswer struct {
	Path         string  `json:"path"`
	UploadMode   string  `json:"uploadMode"`
	ShouldIgnore bool    `json:"shouldIgnore"`
	OID          *string `json:"oid,omitempty"`
}

// handlePreupload answers how each file is to be sent. Every file is "regular" (inline in the
// commit): this hub has no LFS storage, and the commit refuses files over MaxInlineFileBytes with
// the public hub's message. oid is the file's blob ID at the revision, so that the client leaves
// out unchanged files; shouldIgnore follows the .gitignore sent (or the revision's).
func (e *Emulator) handlePreupload(w http.ResponseWriter, r *http.Request, p Principal) error {
	name, err := repoPathSpace(r)
	if err != nil {
		return err
	}
	var in struct {
		Files     []preuploadFile `json:"files"`
		GitIgnore *string         `json:"gitIgnore"`
	}
	if err := decodeLenient(r, &in); err != nil {
		return err
	}
	sp, err := e.writableSpace(r.Context(), p, name)
	if err != nil {
		return err
	}
	blobs := map[string]string{}
	ignore := ""
	refs, err := e.git.Refs(r.Context(), sp.Name)
	if err != nil {
		return err
	}
	if _, head, err := commitTarget(r.PathValue("rev"), refs); err != nil {
		return err
	} else if head != "" {
		entries, err := e.git.Tree(r.Context(), sp.Name, head, "", true)
		if err != nil {
			return err
		}
		for _, en := range entries {
			if en.Type != "blob" {
				continue
			}
			blobs[en.Path] = en.OID
			if en.Path == ".gitignore" && in.GitIgnore == nil {
				data, err := e.git.ReadBlob(r.Context(), sp.Name, en.OID, maxRequestBytes)
				if err == nil {
					ignore = string(data)
				}
			}
		}
	}
	if in.GitIgnore != nil {
		ignore = *in.GitIgnore
	}
	matcher := ignoreMatcher(ignore)
	out := make([]preuploadAnswer, len(in.Files))
	for i, f := range in.Files {
		path, err := checkCommitPath(f.Path)
		if err != nil {
			return errorf(fault.Invalid, "files[%d].path: %v", i, err)
		}
		out[i] = preuploadAnswer{Path: f.Path, UploadMode: "regular", ShouldIgnore: matcher.Match(strings.Split(path, "/"), false)}
		if oid, ok := blobs[path]; ok {
			out[i].OID = &oid
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": out})
	return nil
}

// ignoreMatcher reads .gitignore content with git's rules.
func ignoreMatcher(content string) gitignore.Matcher {
	var patterns []gitignore.Pattern
	for _, line := range strings.Split(content, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		patterns = append(patterns, gitignore.ParsePattern(line, nil))
	}
	return gitignore.NewMatcher(patterns)
}

// handleValidateYAML checks the front matter of a README, as the client does before a commit that
// changes README.md. Its answer is always JSON with errors and warnings (the client reads both).
func (e *Emulator) handleValidateYAML(w http.ResponseWriter, r *http.Request, _ *Principal) error {
	var in struct {
		Content  string `json:"content"`
		RepoType string `json:"repoType"`
	}
	if err := decodeLenient(r, &in); err != nil {
		return err
	}
	problem := cardProblem([]byte(in.Content))
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
func (e *Emulator) handleCommit(w http.ResponseWriter, r *http.Request, p Principal) error {
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
	res, err := e.Commit(r.Context(), p, name, r.PathValue("rev"), r.Body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// cardProblem says what keeps a README's front matter from being read, or "" when it reads (a README
// without front matter reads: it has no metadata).
func cardProblem(readme []byte) string {
	text, first, err := hub.SplitCard(readme)
	if errors.Is(err, hub.ErrNoCard) {
		return ""
	}
	if err != nil {
		return err.Error()
	}
	doc, err := hub.ParseCard(text, first)
	if err != nil {
		return err.Error()
	}
	if doc == nil {
		return ""
	}
	if _, ok := hub.CardData(doc).(map[string]any); !ok {
		return "the front matter is not a mapping of keys to values"
	}
	return ""
}
