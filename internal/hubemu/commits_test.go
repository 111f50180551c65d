package hubemu_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
	"github.com/robothub/robothub/internal/hubemu/spaces"
)

// ndjson builds a commit body as the public Python client does: a header, then one line per
// operation.
func ndjson(summary string, ops ...map[string]any) string {
	var b strings.Builder
	line := func(v any) {
		data, _ := json.Marshal(v)
		b.Write(data)
		b.WriteByte('\n')
	}
	line(map[string]any{"key": "header", "value": map[string]string{"summary": summary, "description": ""}})
	for _, op := range ops {
		line(op)
	}
	return b.String()
}

func addFile(path, content string) map[string]any {
	return map[string]any{"key": "file", "value": map[string]string{"path": path, "encoding": "base64",
		"content": base64.StdEncoding.EncodeToString([]byte(content))}}
}

func deleteFile(path string) map[string]any {
	return map[string]any{"key": "deletedFile", "value": map[string]string{"path": path}}
}

func deleteFolder(path string) map[string]any {
	return map[string]any{"key": "deletedFolder", "value": map[string]string{"path": path}}
}

// commit posts an NDJSON commit and returns the status and the body.
func (h *testHub) commit(token, space, rev, body string) (int, []byte) {
	h.t.Helper()
	req, _ := http.NewRequest("POST", h.URL+"/api/spaces/"+space+"/commit/"+rev, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-ndjson")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes()
}

type commitAnswer struct {
	Success   bool   `json:"success"`
	CommitOID string `json:"commitOid"`
	CommitURL string `json:"commitUrl"`
}

func (h *testHub) mustCommit(space, rev, body string) commitAnswer {
	h.t.Helper()
	status, resp := h.commit(h.token, space, rev, body)
	var out commitAnswer
	if status != 200 || json.Unmarshal(resp, &out) != nil || !out.Success {
		h.t.Fatalf("commit: %d %s", status, resp)
	}
	return out
}

// A commit through the API is a git commit on main with the same effects as a push: the clone
// shows it, the catalog's tags are read again, and repo.content carries updatedRefs and headSha.
func TestCommitIsAGitCommitWithThePushEffects(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	g := newGitClient(t)
	rc := newReceiver(t, "s")
	h.createWebhook(h.token, map[string]any{"url": rc.url(), "watched": []map[string]string{{"type": "user", "name": "alice"}}, "secret": "s"})
	h.createSpace(h.token, "wave", false)
	rc.event(t, 0) // repo create

	first := h.mustCommit("alice/wave", "main", ndjson("First upload",
		addFile("README.md", appReadme), addFile("wave/main.py", "print('hi')\n"), addFile("wave/static/index.html", "<p>hi</p>\n"),
		addFile("a file with spaces \"and\" quotes.txt", "odd name\n"), addFile("dir/ünïcode.txt", "utf-8 name\n")))
	if len(first.CommitOID) != 40 || first.CommitURL != h.emu.PublicURL()+"/spaces/alice/wave/commit/"+first.CommitOID {
		t.Fatalf("answer %+v", first)
	}
	ev := rc.event(t, 1)
	if ev.Event.Scope != "repo.content" || ev.Repo.HeadSha != first.CommitOID {
		t.Fatalf("event %s/%s head %s, want repo.content at %s", ev.Event.Scope, ev.Event.Action, ev.Repo.HeadSha, first.CommitOID)
	}
	if got := refsOf(ev)["refs/heads/main"]; got != [2]string{"null", first.CommitOID} {
		t.Fatalf("updatedRefs %v", refsOf(ev))
	}
	if !slices.Contains(ev.Repo.Tags, "robot_python_app") {
		t.Fatalf("event tags %v", ev.Repo.Tags)
	}
	if got := spaceIDs(h.listSpaces("", "?filter=robot_python_app")); !slices.Equal(got, []string{"alice/wave"}) {
		t.Fatalf("catalog %v", got)
	}

	dir := g.clone(h.URL + "/spaces/alice/wave")
	for name, want := range map[string]string{"wave/main.py": "print('hi')\n", "a file with spaces \"and\" quotes.txt": "odd name\n", "dir/ünïcode.txt": "utf-8 name\n"} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Fatalf("%s in the clone: %q %v", name, got, err)
		}
	}
	if msg := g.must(dir, "log", "-1", "--format=%an <%ae>|%s"); msg != "alice <alice@users.noreply.127.0.0.1>|First upload" {
		t.Fatalf("commit %q", msg)
	}

	// A second commit on top: a deletion of a file and of a folder, and a change; git history has both.
	second := h.mustCommit("alice/wave", "main", ndjson("Tidy", deleteFile("dir/ünïcode.txt"), deleteFolder("wave/static"),
		addFile("wave/main.py", "print('bye')\n")))
	g.must(dir, "pull", "--quiet", "--ff-only")
	if head := g.must(dir, "rev-parse", "HEAD"); head != second.CommitOID {
		t.Fatalf("head %s, want %s", head, second.CommitOID)
	}
	if parent := g.must(dir, "rev-parse", "HEAD^"); parent != first.CommitOID {
		t.Fatalf("parent %s, want %s", parent, first.CommitOID)
	}
	files := strings.Fields(g.must(dir, "ls-files", "-z", "--format=%(path)"))
	for _, gone := range []string{"wave/static/index.html", "dir/ünïcode.txt"} {
		if _, err := os.Stat(filepath.Join(dir, gone)); err == nil {
			t.Fatalf("%s was deleted but is in the clone (%v)", gone, files)
		}
	}
	ev = rc.event(t, 2)
	if got := refsOf(ev)["refs/heads/main"]; got != [2]string{first.CommitOID, second.CommitOID} {
		t.Fatalf("second updatedRefs %v", refsOf(ev))
	}
}

// A bad commit changes nothing and says what is wrong; files over 10 MiB get the public hub's
// refusal.
func TestRefusedCommitsChangeNothing(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	h.createSpace(h.token, "wave", false)
	base := h.mustCommit("alice/wave", "main", ndjson("base", addFile("a/b.txt", "b\n"), addFile("c.txt", "c\n")))
	bob, _, err := h.emu.CreateToken(t.Context(), "bob", hubemu.RoleWrite, "t")
	if err != nil {
		t.Fatal(err)
	}
	reader, _, err := h.emu.CreateToken(t.Context(), "alice", hubemu.RoleRead, "r")
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", spaces.MaxInlineFileBytes+1)
	tests := []struct {
		name, token, rev, body string
		status                 int
		msg                    string
	}{
		{"no header", h.token, "main", ndjson("x")[strings.Index(ndjson("x"), "\n")+1:] + `{"key":"file","value":{"path":"x","content":"","encoding":"base64"}}` + "\n", 400, "the header must come first"},
		{"empty summary", h.token, "main", ndjson("", addFile("x", "x")), 400, "header.summary"},
		{"not json", h.token, "main", ndjson("m") + "nope\n", 400, "line 2: not a JSON object"},
		{"bad base64", h.token, "main", ndjson("m", map[string]any{"key": "file", "value": map[string]string{"path": "x", "content": "%%%", "encoding": "base64"}}), 400, "not base64"},
		{"dot dot", h.token, "main", ndjson("m", addFile("../x", "x")), 400, `has a ".." segment`},
		{"inside .git", h.token, "main", ndjson("m", addFile(".git/config", "x")), 400, "inside .git"},
		{"unknown key", h.token, "main", ndjson("m", map[string]any{"key": "rename", "value": map[string]string{}}), 400, `key "rename"`},
		{"lfs", h.token, "main", ndjson("m", map[string]any{"key": "lfsFile", "value": map[string]string{"path": "w.bin", "oid": "ab", "algo": "sha256"}}), 400, "does not store LFS files"},
		{"too large", h.token, "main", ndjson("m", addFile("ok.txt", "ok"), addFile("weights.bin", big)), 400,
			"Your push was rejected because it contains files larger than 10 MiB. Please use https://git-lfs.github.com/ to store large files."},
		{"delete missing file", h.token, "main", ndjson("m", deleteFile("nope.txt")), 404, "A file with this name doesn't exist: nope.txt"},
		{"delete folder as file", h.token, "main", ndjson("m", deleteFile("a")), 404, "is a folder"},
		{"delete missing folder", h.token, "main", ndjson("m", deleteFolder("zzz")), 404, "A folder with this name doesn't exist"},
		{"file over a folder", h.token, "main", ndjson("m", addFile("a", "x")), 400, "a folder of that name exists"},
		{"folder over a file", h.token, "main", ndjson("m", addFile("c.txt/d", "x")), 400, "c.txt is a file"},
		{"no such branch", h.token, "dev", ndjson("m", addFile("x", "x")), 404, "Invalid rev id: dev"},
		{"commit id", h.token, base.CommitOID, ndjson("m", addFile("x", "x")), 400, "is not a branch"},
		{"stale parent", h.token, "main", `{"key":"header","value":{"summary":"m","parentCommit":"0000000"}}` + "\n", 409, "is not the head of main"},
		{"other user", bob, "main", ndjson("m", addFile("x", "x")), 403, "belongs to alice"},
		{"read token", reader, "main", ndjson("m", addFile("x", "x")), 403, "read role"},
		{"no token", "", "main", ndjson("m", addFile("x", "x")), 401, "Authorization"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, resp := h.commit(tt.token, "alice/wave", tt.rev, tt.body)
			var e struct{ Error string }
			_ = json.Unmarshal(resp, &e)
			if status != tt.status || !strings.Contains(e.Error, tt.msg) {
				t.Fatalf("%d %s; want %d %q", status, resp, tt.status, tt.msg)
			}
		})
	}
	var info spaceInfo
	h.mustCall("GET", "/api/spaces/alice/wave", "", nil, 200, &info)
	if info.SHA != base.CommitOID {
		t.Fatalf("head moved to %s after refused commits (was %s)", info.SHA, base.CommitOID)
	}
	// Models and datasets are not stored here: the answer says so.
	status, resp, _ := h.call("POST", "/api/models/alice/bert/commit/main", h.token, ndjson("m"))
	if status != 404 || !strings.Contains(string(resp), "stores spaces only") {
		t.Fatalf("model commit: %d %s", status, resp)
	}
}

// The parentCommit of the header must be the branch's head (a short ID is enough), and a commit
// goes to any branch that exists.
func TestCommitParentAndBranch(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	g := newGitClient(t)
	h.createSpace(h.token, "wave", false)
	first := h.mustCommit("alice/wave", "main", ndjson("one", addFile("x", "1")))
	withParent := `{"key":"header","value":{"summary":"two","parentCommit":"` + first.CommitOID[:7] + `"}}` + "\n"
	second := h.mustCommit("alice/wave", "main", withParent+`{"key":"file","value":{"path":"x","content":"Mg==","encoding":"base64"}}`+"\n")

	var info spaceInfo
	h.mustCall("GET", "/api/spaces/alice/wave", "", nil, 200, &info)
	if info.SHA != second.CommitOID {
		t.Fatalf("head %s, want %s", info.SHA, second.CommitOID)
	}

	// A branch pushed with git takes commits too; main stays where it is.
	dir := g.clone(h.URL + "/spaces/alice/wave")
	g.must(dir, withToken(h.token, "push", "--quiet", "origin", "HEAD:refs/heads/dev")...)
	onDev := h.mustCommit("alice/wave", "dev", ndjson("on dev", addFile("y", "y")))
	g.must(dir, "fetch", "--quiet", "origin")
	if got := g.must(dir, "rev-parse", "origin/dev", "origin/main"); got != onDev.CommitOID+"\n"+second.CommitOID {
		t.Fatalf("dev and main: %q", got)
	}
	h.mustCall("GET", "/api/spaces/alice/wave", "", nil, 200, &info)
	if info.SHA != second.CommitOID {
		t.Fatalf("a commit to dev moved main to %s", info.SHA)
	}
}

// Preupload answers "regular" for every file, the blob ID of files already there (so the client
// leaves unchanged ones out), and shouldIgnore from the .gitignore sent or stored.
func TestPreupload(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	h.createSpace(h.token, "wave", false)
	var empty struct {
		Files []struct {
			Path, UploadMode string
			ShouldIgnore     bool
			OID              *string
		}
	}
	files := map[string]any{"files": []map[string]any{
		{"path": "README.md", "sample": "", "size": 10},
		{"path": "app/__pycache__/m.pyc", "sample": "", "size": 20},
		{"path": "big.bin", "sample": "", "size": 50 << 20},
	}}
	h.mustCall("POST", "/api/spaces/alice/wave/preupload/main", h.token, files, 200, &empty)
	if len(empty.Files) != 3 || empty.Files[0].UploadMode != "regular" || empty.Files[2].UploadMode != "regular" || empty.Files[0].OID != nil || empty.Files[1].ShouldIgnore {
		t.Fatalf("preupload on an empty space: %+v", empty)
	}
	c := h.mustCommit("alice/wave", "main", ndjson("base", addFile("README.md", "# hi\n"), addFile(".gitignore", "__pycache__/\n*.log\n")))
	_ = c
	var got struct {
		Files []struct {
			Path, UploadMode string
			ShouldIgnore     bool
			OID              *string
		}
	}
	h.mustCall("POST", "/api/spaces/alice/wave/preupload/main", h.token, files, 200, &got)
	// git hash-object of "# hi\n"
	if got.Files[0].OID == nil || *got.Files[0].OID != "77ebc6577e3fc2c38b5bc7f233510fafba6822ac" {
		t.Fatalf("README oid %+v", got.Files[0])
	}
	if !got.Files[1].ShouldIgnore || got.Files[2].ShouldIgnore || got.Files[2].OID != nil {
		t.Fatalf("preupload %+v", got)
	}
	files["gitIgnore"] = "*.bin\n"
	h.mustCall("POST", "/api/spaces/alice/wave/preupload/main", h.token, files, 200, &got)
	if got.Files[1].ShouldIgnore || !got.Files[2].ShouldIgnore {
		t.Fatalf("with gitIgnore sent: %+v", got)
	}
	h.mustCall("POST", "/api/spaces/alice/wave/preupload/dev", h.token, files, 404, nil)
}

// validate-yaml answers JSON with errors and warnings, and 400 for front matter that does not read.
func TestValidateYAML(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	var ok struct{ Errors, Warnings []any }
	h.mustCall("POST", "/api/validate-yaml", h.token, map[string]string{"content": appReadme, "repoType": "space"}, 200, &ok)
	if ok.Errors == nil || len(ok.Errors) != 0 || ok.Warnings == nil {
		t.Fatalf("valid card: %+v", ok)
	}
	h.mustCall("POST", "/api/validate-yaml", "", map[string]string{"content": "# no front matter\n", "repoType": "space"}, 200, nil)
	var bad struct {
		Error  string
		Errors []struct{ Message string }
	}
	h.mustCall("POST", "/api/validate-yaml", h.token, map[string]string{"content": "---\ntitle: [a\n---\n", "repoType": "space"}, 400, &bad)
	if len(bad.Errors) != 1 || !strings.Contains(bad.Errors[0].Message, "line 2") {
		t.Fatalf("invalid card: %+v", bad)
	}
}
