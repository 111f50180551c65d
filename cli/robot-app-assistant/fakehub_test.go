package main

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/robothub/robothub/core/hub/card"
)

// fakeHub is a stand-in for the hub with the public hub's shapes: GET /api/whoami-v2,
// POST /api/repos/create (spaces), GET /api/spaces?filter=<tag>, and each space as a git
// repository over smart HTTP (git http-backend) at /spaces/<owner>/<name>. Reading is public;
// pushing needs HTTP Basic auth with the owner's name and a write token, as on the public hub.
type fakeHub struct {
	t      testing.TB
	srv    *httptest.Server
	root   string
	tokens map[string]fakeToken

	refusePush bool // answer every push with 403, as for a token without access

	mu       sync.Mutex
	creates  []map[string]any
	authSeen []string // Authorization headers of git requests
	urls     []string // every request URL, to look for leaked tokens
}

type fakeToken struct{ user, role string }

var spaceGitPath = regexp.MustCompile(`^/spaces/([^/]+)/([^/]+?)(?:\.git)?(/.*)?$`)

func newFakeHub(t testing.TB) *fakeHub {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skipf("git is not installed: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	h := &fakeHub{t: t, root: t.TempDir(), tokens: map[string]fakeToken{
		"hf_write_alice": {"alice", "write"},
		"hf_read_alice":  {"alice", "read"},
		"hf_write_bob":   {"bob", "write"},
	}}
	git := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + h.root, "GIT_HTTP_EXPORT_ALL=1"}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/whoami-v2", h.whoami)
	mux.HandleFunc("POST /api/repos/create", h.createRepo)
	mux.HandleFunc("GET /api/spaces", h.listSpaces)
	mux.HandleFunc("/spaces/", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.authSeen = append(h.authSeen, r.Header.Get("Authorization"))
		h.mu.Unlock()
		m := spaceGitPath.FindStringSubmatch(r.URL.Path)
		if m == nil {
			http.NotFound(w, r)
			return
		}
		push := strings.HasSuffix(r.URL.Path, "/git-receive-pack") || r.URL.Query().Get("service") == "git-receive-pack"
		if push && h.refusePush {
			http.Error(w, "Forbidden: this token has no access to the space", http.StatusForbidden)
			return
		}
		if push && !h.canPush(r, m[1]) {
			w.Header().Set("WWW-Authenticate", `Basic realm="fake hub"`)
			http.Error(w, "Invalid username or password.", http.StatusUnauthorized)
			return
		}
		git.ServeHTTP(w, r)
	})
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.urls = append(h.urls, r.URL.String())
		h.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *fakeHub) URL() string { return h.srv.URL }

func writeHubError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func (h *fakeHub) bearer(r *http.Request) (fakeToken, bool) {
	tok, ok := h.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	return tok, ok
}

func (h *fakeHub) canPush(r *http.Request, owner string) bool {
	user, pass, ok := r.BasicAuth()
	tok, known := h.tokens[pass]
	return ok && known && tok.role == "write" && tok.user == user && user == owner
}

func (h *fakeHub) whoami(w http.ResponseWriter, r *http.Request) {
	tok, ok := h.bearer(r)
	if !ok {
		writeHubError(w, http.StatusUnauthorized, "Invalid credentials in Authorization header")
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type": "user", "name": tok.user,
		"auth": map[string]any{"type": "access_token", "accessToken": map[string]string{"displayName": "test", "role": tok.role}},
	})
}

func (h *fakeHub) createRepo(w http.ResponseWriter, r *http.Request) {
	tok, ok := h.bearer(r)
	if !ok {
		writeHubError(w, http.StatusUnauthorized, "Invalid credentials in Authorization header")
		return
	}
	if tok.role != "write" {
		writeHubError(w, http.StatusForbidden, "You don't have the rights to create a space under this namespace")
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeHubError(w, http.StatusBadRequest, err.Error())
		return
	}
	h.mu.Lock()
	h.creates = append(h.creates, body)
	h.mu.Unlock()
	name, _ := body["name"].(string)
	if body["type"] != "space" || body["sdk"] == nil || name == "" {
		writeHubError(w, http.StatusBadRequest, "expected a space with an sdk and a name")
		return
	}
	dir := filepath.Join(h.root, "spaces", tok.user, name)
	if _, err := os.Stat(dir); err == nil {
		writeHubError(w, http.StatusConflict, "You already created this space repo")
		return
	}
	// Like the public hub, a new space starts with a commit of its own.
	work := filepath.Join(h.t.TempDir(), "init")
	mustGit(h.t, "", "init", "-q", "-b", "main", work)
	if err := os.WriteFile(filepath.Join(work, "README.md"), []byte("---\ntitle: "+name+"\nsdk: static\n---\n"), 0o644); err != nil {
		h.t.Error(err)
	}
	mustGit(h.t, work, "add", ".")
	mustGit(h.t, work, "commit", "-q", "-m", "initial commit")
	mustGit(h.t, "", "clone", "-q", "--bare", work, dir)
	mustGit(h.t, dir, "config", "http.receivepack", "true")
	_ = json.NewEncoder(w).Encode(map[string]string{"url": h.URL() + "/spaces/" + tok.user + "/" + name})
}

// listSpaces answers GET /api/spaces?filter=<tag> from the tags of each space's README.md.
func (h *fakeHub) listSpaces(w http.ResponseWriter, r *http.Request) {
	filter := r.URL.Query().Get("filter")
	var out []map[string]any
	owners, _ := os.ReadDir(filepath.Join(h.root, "spaces"))
	for _, o := range owners {
		spaces, _ := os.ReadDir(filepath.Join(h.root, "spaces", o.Name()))
		for _, s := range spaces {
			readme, err := exec.Command("git", "-C", filepath.Join(h.root, "spaces", o.Name(), s.Name()), "show", "HEAD:README.md").Output()
			if err != nil {
				continue
			}
			text, first, err := card.Split(readme)
			if err != nil {
				continue
			}
			fm, err := card.Parse(text, first)
			if err != nil || fm == nil {
				continue
			}
			var tags []string
			if t := cardField(fm, "tags"); t != nil {
				for _, it := range t.Content {
					tags = append(tags, it.Value)
				}
			}
			if filter != "" && !slices.Contains(tags, filter) {
				continue
			}
			desc := ""
			if d := cardField(fm, "short_description"); d != nil {
				desc = d.Value
			}
			out = append(out, map[string]any{"id": o.Name() + "/" + s.Name(), "tags": tags, "cardData": map[string]string{"short_description": desc}})
		}
	}
	if out == nil {
		out = []map[string]any{}
	}
	_ = json.NewEncoder(w).Encode(out)
}

// spaceFiles lists the files of a space's main branch.
func (h *fakeHub) spaceFiles(owner, name string) []string {
	out, err := exec.Command("git", "-C", filepath.Join(h.root, "spaces", owner, name), "ls-tree", "-r", "--name-only", "main").Output()
	if err != nil {
		h.t.Fatalf("listing space %s/%s: %v", owner, name, err)
	}
	return strings.Fields(string(out))
}

// spaceLog returns the subjects of the space's commits on main, newest first.
func (h *fakeHub) spaceLog(owner, name string) []string {
	out, err := exec.Command("git", "-C", filepath.Join(h.root, "spaces", owner, name), "log", "--format=%s", "main").Output()
	if err != nil {
		h.t.Fatalf("log of space %s/%s: %v", owner, name, err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

func (h *fakeHub) createCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.creates)
}

func (h *fakeHub) gitAuth() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.authSeen)
}

func (h *fakeHub) requestURLs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.urls)
}

// basicAuth is the Authorization header of a git push by user with token.
func basicAuth(user, token string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+token))
}

func mustGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}
