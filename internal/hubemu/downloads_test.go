package hubemu_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// get sends a GET (or HEAD) with optional token and headers and returns the response with its body.
func (h *testHub) get(method, path, token string, hdr map[string]string) (*http.Response, string) {
	h.t.Helper()
	req, _ := http.NewRequest(method, h.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// What hf_hub_download reads: a HEAD with X-Repo-Commit, the ETag and the size, then the file,
// whole or by range.
func TestResolveServesFilesWithTheHeadersTheClientReads(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	h.createSpace(h.token, "wave", false)
	first := h.mustCommit("alice/wave", "main", ndjson("one", addFile("README.md", appReadme), addFile("wave/main.py", "print('hi')\n")))
	second := h.mustCommit("alice/wave", "main", ndjson("two", addFile("wave/main.py", "print('bye')\n")))

	resp, body := h.get("HEAD", "/spaces/alice/wave/resolve/main/wave/main.py", "", map[string]string{"Accept-Encoding": "identity"})
	if resp.StatusCode != 200 || body != "" {
		t.Fatalf("HEAD: %d %q", resp.StatusCode, body)
	}
	etag := resp.Header.Get("ETag")
	if resp.Header.Get("X-Repo-Commit") != second.CommitOID || resp.Header.Get("Content-Length") != "13" || len(etag) != 42 {
		t.Fatalf("HEAD headers %v", resp.Header)
	}
	resp, body = h.get("GET", "/spaces/alice/wave/resolve/main/wave/main.py", "", nil)
	if resp.StatusCode != 200 || body != "print('bye')\n" || resp.Header.Get("ETag") != etag {
		t.Fatalf("GET: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	// A commit ID reads the file as it was; a range reads part of it (a resumed download).
	resp, body = h.get("GET", "/spaces/alice/wave/resolve/"+first.CommitOID+"/wave/main.py", "", map[string]string{"Range": "bytes=6-"})
	if resp.StatusCode != 206 || body != "'hi')\n" || resp.Header.Get("X-Repo-Commit") != first.CommitOID {
		t.Fatalf("range at the first commit: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, _ = h.get("GET", "/spaces/alice/wave/resolve/main/wave/main.py", "", map[string]string{"If-None-Match": etag})
	if resp.StatusCode != 304 {
		t.Fatalf("If-None-Match: %d", resp.StatusCode)
	}

	for _, tt := range []struct{ path, code, commit string }{
		{"/spaces/alice/wave/resolve/main/nope.txt", "EntryNotFound", second.CommitOID},
		{"/spaces/alice/wave/resolve/main/wave", "EntryNotFound", second.CommitOID},
		{"/spaces/alice/wave/resolve/dev/README.md", "RevisionNotFound", ""},
		{"/spaces/alice/wave/resolve/main~1/README.md", "RevisionNotFound", ""},
		{"/spaces/alice/nope/resolve/main/README.md", "RepoNotFound", ""},
	} {
		resp, _ := h.get("HEAD", tt.path, h.token, nil)
		if resp.StatusCode != 404 || resp.Header.Get("X-Error-Code") != tt.code || resp.Header.Get("X-Repo-Commit") != tt.commit {
			t.Errorf("%s: %d %s %q", tt.path, resp.StatusCode, resp.Header.Get("X-Error-Code"), resp.Header.Get("X-Repo-Commit"))
		}
	}
}

// A private space's files are its owner's only, as its git data is.
func TestResolvePrivateSpace(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	h.createSpace(h.token, "secret", true)
	h.mustCommit("alice/secret", "main", ndjson("one", addFile("key.txt", "k")))
	bob, _, _ := h.emu.CreateToken(t.Context(), "bob", hubemu.RoleRead, "t")
	for _, tt := range []struct {
		token  string
		status int
	}{{"", 401}, {bob, 404}, {h.token, 200}} {
		for _, p := range []string{"/spaces/alice/secret/resolve/main/key.txt", "/api/spaces/alice/secret/revision/main", "/api/spaces/alice/secret/tree/main"} {
			if resp, _ := h.get("GET", p, tt.token, nil); resp.StatusCode != tt.status {
				t.Errorf("%s with token %q: %d, want %d", p, tt.token, resp.StatusCode, tt.status)
			}
		}
	}
}

// snapshot_download asks for the space at a revision, then the tree, then each file by commit.
func TestRevisionAndTree(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	h.createSpace(h.token, "wave", false)
	h.mustCall("GET", "/api/spaces/alice/wave/revision/main", "", nil, 404, nil) // nothing committed yet
	first := h.mustCommit("alice/wave", "main", ndjson("one", addFile("README.md", "# no card\n"), addFile("a/b/c.txt", "c"), addFile("a/d.txt", "dd")))
	second := h.mustCommit("alice/wave", "main", ndjson("two", addFile("README.md", appReadme)))

	var info struct {
		spaceInfo
		Siblings []struct {
			RFilename string `json:"rfilename"`
			Size      *int64 `json:"size"`
			BlobID    string `json:"blobId"`
		} `json:"siblings"`
	}
	h.mustCall("GET", "/api/spaces/alice/wave/revision/"+first.CommitOID, "", nil, 200, &info)
	if info.SHA != first.CommitOID || slices.Contains(info.Tags, "robot_python_app") || len(info.Siblings) != 3 || info.Siblings[0].Size != nil {
		t.Fatalf("at the first commit: %+v", info)
	}
	h.mustCall("GET", "/api/spaces/alice/wave/revision/main?blobs=true", "", nil, 200, &info)
	if info.SHA != second.CommitOID || !slices.Contains(info.Tags, "robot_python_app") || info.CardData["title"] != "Wave" {
		t.Fatalf("at main: %+v", info)
	}
	for _, s := range info.Siblings {
		if s.Size == nil || len(s.BlobID) != 40 {
			t.Fatalf("blobs=true sibling %+v", s)
		}
	}

	type item struct {
		Type, OID, Path string
		Size            int64
	}
	var items []item
	h.mustCall("GET", "/api/spaces/alice/wave/tree/main", "", nil, 200, &items)
	if got := fmt.Sprint(items); !strings.Contains(got, "{directory") || len(items) != 2 {
		t.Fatalf("root: %v", items)
	}
	h.mustCall("GET", "/api/spaces/alice/wave/tree/main?recursive=True", "", nil, 200, &items)
	var paths []string
	for _, it := range items {
		paths = append(paths, it.Type+":"+it.Path)
	}
	want := []string{"file:README.md", "directory:a", "directory:a/b", "file:a/b/c.txt", "file:a/d.txt"}
	if !slices.Equal(paths, want) {
		t.Fatalf("recursive: %v, want %v", paths, want)
	}
	h.mustCall("GET", "/api/spaces/alice/wave/tree/main/a%2Fb", "", nil, 200, &items)
	if len(items) != 1 || items[0].Path != "a/b/c.txt" || items[0].Size != 1 {
		t.Fatalf("a/b: %v", items)
	}
	resp, _ := h.get("GET", "/api/spaces/alice/wave/tree/main/README.md", "", nil)
	if resp.StatusCode != 404 || resp.Header.Get("X-Error-Code") != "EntryNotFound" {
		t.Fatalf("tree of a file: %d %v", resp.StatusCode, resp.Header)
	}
}

// A listing longer than a page is linked with Link: rel="next", which the client follows.
func TestTreePages(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	h.createSpace(h.token, "many", false)
	var ops []map[string]any
	for i := range 1203 {
		ops = append(ops, addFile(fmt.Sprintf("f%04d.txt", i), "x"))
	}
	h.mustCommit("alice/many", "main", ndjson("many", ops...))
	seen := 0
	next := "/api/spaces/alice/many/tree/main?recursive=true"
	for pages := 0; next != ""; pages++ {
		if pages > 3 {
			t.Fatal("too many pages")
		}
		resp, body := h.get("GET", next, "", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", next, resp.StatusCode, body)
		}
		seen += strings.Count(body, `"type":"file"`)
		next = ""
		if link := resp.Header.Get("Link"); link != "" {
			u := strings.TrimPrefix(strings.SplitN(link, ">", 2)[0], "<"+h.emu.PublicURL())
			if !strings.HasSuffix(link, `rel="next"`) || !strings.Contains(u, "recursive=true") {
				t.Fatalf("Link %q", link)
			}
			next = u
		}
	}
	if seen != 1203 {
		t.Fatalf("%d files over the pages, want 1203", seen)
	}
}
