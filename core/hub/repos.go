package hub

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The calls in this file are the hub's repo API as publishing needs it: who the token belongs to,
// and creating, deleting, listing and reading spaces. The public hub and the local emulator (which
// stores spaces only) both serve them.

// Paths of the repo API.
const (
	DeleteRepoPath = "/api/repos/delete"
	SpacesPath     = "/api/spaces"
)

// RepoTypes are the kinds of repo the hub has.
var RepoTypes = []string{"model", "dataset", "space"}

// SpaceSDKs are the sdk values a space may have.
var SpaceSDKs = []string{"gradio", "streamlit", "docker", "static"}

// WhoAmI is the user a token belongs to, and what the token may do.
type WhoAmI struct {
	Type string `json:"type"` // "user"
	ID   string `json:"id"`
	Name string `json:"name"`
	Auth struct {
		Type        string `json:"type"` // "access_token"
		AccessToken struct {
			DisplayName string `json:"displayName"`
			Role        string `json:"role"` // "read", "write", or "fineGrained" on the public hub
			// FineGrained is what a fine-grained token of the public hub may do, per user or organization.
			FineGrained *struct {
				Global []string `json:"global"`
				Scoped []struct {
					Entity struct {
						Type string `json:"type"` // "user" or "org"
						Name string `json:"name"`
					} `json:"entity"`
					Permissions []string `json:"permissions"` // e.g. "repo.content.read", "repo.write"
				} `json:"scoped"`
			} `json:"fineGrained,omitempty"`
		} `json:"accessToken"`
	} `json:"auth"`
}

// Role returns the token's role: "read", "write" or "fineGrained".
func (w *WhoAmI) Role() string { return w.Auth.AccessToken.Role }

// CanWrite reports whether the token may create and push to repos of owner (a user or an
// organization): a write (or admin) token may, and a fine-grained token with repo.write on owner.
func (w *WhoAmI) CanWrite(owner string) bool {
	switch w.Role() {
	case "write", "admin":
		return true
	case "fineGrained":
		if fg := w.Auth.AccessToken.FineGrained; fg != nil {
			for _, s := range fg.Scoped {
				if s.Entity.Name == owner && slices.Contains(s.Permissions, "repo.write") {
					return true
				}
			}
		}
	}
	return false
}

// WhoAmI returns the token's user and role.
func (c *Client) WhoAmI(ctx context.Context) (*WhoAmI, error) {
	return send[WhoAmI](ctx, c, Call{Method: http.MethodGet, Path: "/api/whoami-v2", Idempotent: true})
}

// CreateRepoRequest describes a new repo.
type CreateRepoRequest struct {
	Type    string // model, dataset or space (required: the hub's default is model)
	ID      string // "name" (under the token's user) or "owner/name"
	Private bool
	SDK     string // for a space: gradio, streamlit, docker or static
}

// RepoURL is a created repo.
type RepoURL struct {
	URL  string `json:"url"`  // <hub>/spaces/<owner>/<name> for a space
	Name string `json:"name"` // owner/name
	ID   string `json:"id"`   // the hub's ID of the repo (the emulator sends it; the public hub may not)
}

// repoRefBody names a repo in the bodies of the create and delete calls.
type repoRefBody struct {
	Name         string  `json:"name"`
	Organization *string `json:"organization"`
	Type         string  `json:"type"`
}

type createRepoBody struct {
	repoRefBody
	Private bool   `json:"private"`
	SDK     string `json:"sdk,omitempty"`
}

var repoIDChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]*$`) })

// splitRepoID checks "name" or "owner/name" and returns its parts (owner "" when not given). With
// needOwner, a name without its owner is refused.
func splitRepoID(id string, needOwner bool) (owner, name string, err error) {
	owner, name, hasOwner := strings.Cut(id, "/")
	if !hasOwner {
		owner, name = "", id
	}
	switch {
	case name == "" || (hasOwner && owner == "") || strings.Contains(name, "/"):
		return "", "", invalid("repo_id", "%q is not name or owner/name", id)
	case !repoIDChars().MatchString(owner) || !repoIDChars().MatchString(name):
		return "", "", invalid("repo_id", "%q: use letters, digits, '-', '_' and '.' only", id)
	case needOwner && owner == "":
		return "", "", invalid("repo_id", "%q: give owner/name", id)
	}
	return owner, name, nil
}

// repoRef checks a repo's type and ID ("name" or "owner/name").
func repoRef(typ, id string) (repoRefBody, error) {
	if !slices.Contains(RepoTypes, typ) {
		return repoRefBody{}, invalid("repo_type", "%q is not one of %s", typ, strings.Join(RepoTypes, ", "))
	}
	owner, name, err := splitRepoID(id, false)
	ref := repoRefBody{Name: name, Type: typ}
	if owner != "" {
		ref.Organization = &owner
	}
	return ref, err
}

// CreateRepo makes a repo. It is sent once and never retried; a repo that exists already is an
// error that errors.Is matches with fault.ErrRefused.
func (c *Client) CreateRepo(ctx context.Context, r CreateRepoRequest) (*RepoURL, error) {
	ref, err := repoRef(r.Type, r.ID)
	switch {
	case err != nil:
		return nil, err
	case r.SDK != "" && r.Type != "space":
		return nil, invalid("sdk", "only a space has an sdk")
	case r.SDK != "" && !slices.Contains(SpaceSDKs, r.SDK):
		return nil, invalid("sdk", "%q is not one of %s", r.SDK, strings.Join(SpaceSDKs, ", "))
	}
	body := createRepoBody{repoRefBody: ref, Private: r.Private, SDK: r.SDK}
	out, err := send[RepoURL](ctx, c, Call{Method: http.MethodPost, Path: "/api/repos/create", Body: body})
	if err == nil && out.Name == "" {
		out.Name = repoIDFromURL(out.URL)
	}
	return out, err
}

// repoIDFromURL returns owner/name from the end of a repo's URL.
func repoIDFromURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 {
		return ""
	}
	return parts[len(parts)-2] + "/" + parts[len(parts)-1]
}

// DeleteRepo deletes a repo ("name" or "owner/name") with everything in it.
func (c *Client) DeleteRepo(ctx context.Context, repoType, id string) error {
	body, err := repoRef(repoType, id)
	if err != nil {
		return err
	}
	_, err = c.do(ctx, Call{Method: http.MethodDelete, Path: DeleteRepoPath, Body: body}, nil)
	return err
}

// Space is a space as the hub lists it.
type Space struct {
	ID           string         `json:"id"` // owner/name
	Author       string         `json:"author"`
	SHA          string         `json:"sha"` // the head of main; "" before anything was pushed
	LastModified time.Time      `json:"lastModified"`
	CreatedAt    time.Time      `json:"createdAt"`
	Private      bool           `json:"private"`
	SDK          string         `json:"sdk"`
	Tags         []string       `json:"tags"`
	Likes        int            `json:"likes"`
	CardData     map[string]any `json:"cardData"` // the README's front matter
	Siblings     []struct {
		RFilename string `json:"rfilename"`
	} `json:"siblings"` // the files at the head of main
}

// SpaceQuery filters ListSpaces.
type SpaceQuery struct {
	Filter []string // tags the spaces must all carry, such as robot_python_app
	Author string   // the owner
	Search string   // a part of the ID
	Limit  int      // 0: the hub's default
}

// ListSpaces returns the spaces that match q: the public ones and, with a token, the caller's own.
func (c *Client) ListSpaces(ctx context.Context, q SpaceQuery) ([]Space, error) {
	v := url.Values{}
	for _, f := range q.Filter {
		v.Add("filter", f)
	}
	if q.Author != "" {
		v.Set("author", q.Author)
	}
	if q.Search != "" {
		v.Set("search", q.Search)
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	v.Set("full", "true")
	return list[Space](ctx, c, SpacesPath+"?"+v.Encode())
}

// SpaceInfo returns one space ("owner/name"). A space that does not exist, or that the token may
// not see, is fault.ErrNotFound (or fault.ErrUnauthenticated without a token, as the public hub answers).
func (c *Client) SpaceInfo(ctx context.Context, id string) (*Space, error) {
	owner, name, err := splitRepoID(id, true)
	if err != nil {
		return nil, err
	}
	path := SpacesPath + "/" + url.PathEscape(owner) + "/" + url.PathEscape(name)
	return send[Space](ctx, c, Call{Method: http.MethodGet, Path: path, Idempotent: true})
}

// SpaceAt returns a space as it is at revision (a commit or a branch): SHA is the commit revision
// names there. A revision the hub does not have is fault.ErrNotFound.
func (c *Client) SpaceAt(ctx context.Context, id, revision string) (*Space, error) {
	owner, name, err := splitRepoID(id, true)
	if err != nil {
		return nil, err
	}
	if revision == "" {
		return nil, invalid("revision", "is empty")
	}
	path := SpacesPath + "/" + url.PathEscape(owner) + "/" + url.PathEscape(name) + "/revision/" + url.PathEscape(revision)
	return send[Space](ctx, c, Call{Method: http.MethodGet, Path: path, Idempotent: true})
}

// SpaceGitURL returns the address to clone and push a space ("owner/name"): <hub>/spaces/owner/name.
// It never holds the token: git gets it from a credential helper or an http.extraHeader.
func (c *Client) SpaceGitURL(id string) string { return c.base + "/spaces/" + id }
