package hubemu_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/core/apps/catalog"
	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// gitClient runs the real git client against the test hub, with no system or user configuration
// and no prompts.
type gitClient struct {
	t    *testing.T
	home string
}

func newGitClient(t *testing.T) *gitClient {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	return &gitClient{t: t, home: t.TempDir()}
}

// run runs git in dir and returns its combined output and error.
func (g *gitClient) run(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + g.home, "LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=",
		"GIT_AUTHOR_NAME=Alice", "GIT_AUTHOR_EMAIL=alice@example.com",
		"GIT_COMMITTER_NAME=Alice", "GIT_COMMITTER_EMAIL=alice@example.com",
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (g *gitClient) must(dir string, args ...string) string {
	g.t.Helper()
	out, err := g.run(dir, args...)
	if err != nil {
		g.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(out)
}

// bearer is the option that makes git send the token as a bearer token.
func bearer(token string) []string {
	return []string{"-c", "http.extraHeader=Authorization: Bearer " + token}
}

// withToken prefixes a git command with the bearer option.
func withToken(token string, args ...string) []string { return append(bearer(token), args...) }

// clone clones url into a new directory and returns it.
func (g *gitClient) clone(url string, opts ...string) string {
	g.t.Helper()
	dir := filepath.Join(g.t.TempDir(), "work")
	g.must("", append(opts, "clone", "--quiet", url, dir)...)
	return dir
}

// commitFile writes a file and commits it.
func (g *gitClient) commitFile(dir, name, content, message string) string {
	g.t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
		g.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		g.t.Fatal(err)
	}
	g.must(dir, "add", name)
	g.must(dir, "commit", "--quiet", "-m", message)
	return g.must(dir, "rev-parse", "HEAD")
}

type createdRepo struct {
	URL  string `json:"url"`
	Name string `json:"name"`
	ID   string `json:"id"`
}

func (h *testHub) createSpace(token, name string, private bool) createdRepo {
	h.t.Helper()
	var out createdRepo
	h.mustCall("POST", "/api/repos/create", token, map[string]any{"name": name, "type": "space", "private": private, "sdk": "static"}, 200, &out)
	return out
}

type spaceInfo struct {
	ID           string         `json:"id"`
	Author       string         `json:"author"`
	SHA          string         `json:"sha"`
	Private      bool           `json:"private"`
	SDK          string         `json:"sdk"`
	Tags         []string       `json:"tags"`
	LastModified time.Time      `json:"lastModified"`
	CardData     map[string]any `json:"cardData"`
	Siblings     []struct {
		RFilename string `json:"rfilename"`
	} `json:"siblings"`
}

func (h *testHub) listSpaces(token, query string) []spaceInfo {
	h.t.Helper()
	var out []spaceInfo
	h.mustCall("GET", "/api/spaces"+query, token, nil, 200, &out)
	return out
}

func spaceIDs(list []spaceInfo) []string {
	ids := make([]string, len(list))
	for i, s := range list {
		ids[i] = s.ID
	}
	slices.Sort(ids)
	return ids
}

const appReadme = `---
title: Wave
sdk: static
short_description: Waves the antennas
tags:
  - robot
  - robot_python_app
---
# Wave
`

// event waits until the receiver has payloads of n+1 different events and returns the n-th (from
// 0) in order of arrival. A delivery whose answer came after the emulator's timeout is sent again
// (delivery is at least once), so a slow machine may deliver one event twice: duplicates count once.
func (rc *receiver) event(t *testing.T, n int) *webhook.Payload {
	t.Helper()
	var events []*webhook.Payload
	wait.For(t, 10*time.Second, "event "+strconv.Itoa(n+1), func() bool {
		events = events[:0]
		seen := map[string]bool{}
		for _, p := range rc.received() {
			if !seen[string(p.Raw)] {
				seen[string(p.Raw)] = true
				events = append(events, p)
			}
		}
		return len(events) > n
	})
	return events[n]
}

func refsOf(p *webhook.Payload) map[string][2]string {
	out := map[string][2]string{}
	for _, r := range p.UpdatedRefs {
		var old, new string = "null", "null"
		if r.OldSha != nil {
			old = *r.OldSha
		}
		if r.NewSha != nil {
			new = *r.NewSha
		}
		out[r.Ref] = [2]string{old, new}
	}
	return out
}

func TestSpacePushesEmitContentUpdates(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	g := newGitClient(t)
	rc := newReceiver(t, "s3cret")
	h.createWebhook(h.token, map[string]any{"url": rc.url(), "watched": watch("space:alice/wave"), "secret": "s3cret", "domains": []string{"repo"}})

	created := h.createSpace(h.token, "wave", false)
	if created.URL != hubemu.DefaultPublicURL+"/spaces/alice/wave" || created.Name != "alice/wave" || created.ID == "" {
		t.Fatalf("create answered %+v", created)
	}
	if p := rc.event(t, 0); p.Event.Scope != "repo" || p.Event.Action != "create" || p.Repo.Type != "space" || p.Repo.Name != "alice/wave" || p.Repo.HeadSha != "" {
		t.Fatalf("create event: %s", p.Raw)
	}

	// A public space clones without a token, empty at first.
	work := g.clone(h.URL + "/spaces/alice/wave")
	if out := g.must(work, "status", "--short", "--branch"); !strings.Contains(out, "No commits yet on main") {
		t.Fatalf("a new space is not an empty repository on main: %q", out)
	}
	first := g.commitFile(work, "README.md", strings.Replace(appReadme, "tags:\n  - robot\n  - robot_python_app", "tags: [robot, robot_python_app]", 1), "first")
	g.must(work, withToken(h.token, "push", "--quiet", "origin", "main")...)

	p := rc.event(t, 1)
	if p.Event.Scope != "repo.content" || p.Event.Action != "update" || p.Repo.HeadSha != first {
		t.Fatalf("first push: scope %s action %s headSha %s, want repo.content update %s: %s", p.Event.Scope, p.Event.Action, p.Repo.HeadSha, first, p.Raw)
	}
	if got := refsOf(p); len(got) != 1 || got["refs/heads/main"] != [2]string{"null", first} {
		t.Fatalf("first push: updatedRefs %v, want main from null to %s", got, first)
	}
	if !slices.Equal(p.Repo.Tags, []string{"robot", "robot_python_app", "static"}) {
		t.Fatalf("first push: tags %v", p.Repo.Tags)
	}

	// A second push: oldSha is the previous head. The block form of tags is read too.
	second := g.commitFile(work, "README.md", strings.Replace(appReadme, "  - robot\n", "  - robot\n  - waving\n", 1), "second")
	g.must(work, withToken(h.token, "push", "--quiet", "origin", "main")...)
	p = rc.event(t, 2)
	if got := refsOf(p); len(got) != 1 || got["refs/heads/main"] != [2]string{first, second} || p.Repo.HeadSha != second {
		t.Fatalf("second push: updatedRefs %v headSha %s, want main from %s to %s", got, p.Repo.HeadSha, first, second)
	}
	if !slices.Equal(p.Repo.Tags, []string{"robot", "waving", "robot_python_app", "static"}) {
		t.Fatalf("second push: tags %v", p.Repo.Tags)
	}

	// A branch and a tag in one push, then deleting the branch: newSha null, headSha still main's.
	g.must(work, "branch", "dev")
	g.must(work, "tag", "v1")
	g.must(work, withToken(h.token, "push", "--quiet", "origin", "dev", "v1")...)
	p = rc.event(t, 3)
	if got := refsOf(p); len(got) != 2 || got["refs/heads/dev"] != [2]string{"null", second} || got["refs/tags/v1"] != [2]string{"null", second} || p.Repo.HeadSha != second {
		t.Fatalf("branch push: updatedRefs %v headSha %s", got, p.Repo.HeadSha)
	}
	g.must(work, withToken(h.token, "push", "--quiet", "origin", "--delete", "dev")...)
	p = rc.event(t, 4)
	if got := refsOf(p); len(got) != 1 || got["refs/heads/dev"] != [2]string{second, "null"} || p.Repo.HeadSha != second {
		t.Fatalf("branch deletion: updatedRefs %v headSha %s", got, p.Repo.HeadSha)
	}

	// The space's info follows main.
	var info spaceInfo
	h.mustCall("GET", "/api/spaces/alice/wave", "", nil, 200, &info)
	if info.SHA != second || info.Author != "alice" || info.CardData["short_description"] != "Waves the antennas" ||
		len(info.Siblings) != 1 || info.Siblings[0].RFilename != "README.md" {
		t.Fatalf("space info %+v", info)
	}
	if commit := g.must(work, "show", "-s", "--format=%cI", second); !info.LastModified.Equal(mustTime(t, commit)) {
		t.Fatalf("lastModified %s, want the commit time %s", info.LastModified, commit)
	}

	// Every delivery went through the webhook's activity, like an emitted event.
	var list []record
	h.mustCall("GET", "/api/settings/webhooks", h.token, nil, 200, &list)
	if a := h.activity(h.token, list[0].ID); len(a.Deliveries) != 5 {
		t.Fatalf("activity has %d deliveries, want 5", len(a.Deliveries))
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestRefusedPushesChangeNothing(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	g := newGitClient(t)
	rc := newReceiver(t, "")
	h.createWebhook(h.token, map[string]any{"url": rc.url(), "watched": watch("user:alice")})
	readToken, _, err := h.emu.CreateToken(context.Background(), "alice", hubemu.RoleRead, "read")
	if err != nil {
		t.Fatal(err)
	}
	bobToken, _, err := h.emu.CreateToken(context.Background(), "bob", hubemu.RoleWrite, "bob")
	if err != nil {
		t.Fatal(err)
	}
	h.createSpace(h.token, "wave", false)
	work := g.clone(h.URL + "/spaces/alice/wave")
	head := g.commitFile(work, "README.md", appReadme, "first")
	g.must(work, withToken(h.token, "push", "--quiet", "origin", "main")...)
	rc.event(t, 1) // create and push

	g.commitFile(work, "app.py", "print('hi')\n", "second")
	for _, c := range []struct {
		name  string
		args  []string
		wants string
	}{
		{"read token", withToken(readToken, "push", "origin", "main"), "403"},
		{"someone else's write token", withToken(bobToken, "push", "origin", "main"), "403"},
		{"no token", []string{"push", "origin", "main"}, "could not read Username"},
		{"unknown token", withToken("hf_not_a_token", "push", "origin", "main"), "could not read Username"},
	} {
		out, err := g.run(work, c.args...)
		if err == nil || !strings.Contains(out, c.wants) {
			t.Errorf("push with %s: err %v, output %q; want a refusal with %q", c.name, err, out, c.wants)
		}
	}
	// A push to a space that does not exist, with a good token: not found.
	g.must(work, "remote", "add", "nowhere", h.URL+"/spaces/alice/nowhere")
	if out, err := g.run(work, withToken(h.token, "push", "nowhere", "main")...); err == nil || !strings.Contains(out, "Repository not found") {
		t.Errorf("push to a missing space: err %v, output %q", err, out)
	}

	check := g.clone(h.URL + "/spaces/alice/wave")
	if got := g.must(check, "rev-parse", "HEAD"); got != head {
		t.Fatalf("after refused pushes main is %s, want %s", got, head)
	}
	var info spaceInfo
	h.mustCall("GET", "/api/spaces/alice/wave", "", nil, 200, &info)
	if info.SHA != head {
		t.Fatalf("after refused pushes the space's sha is %s, want %s", info.SHA, head)
	}
	// The owner's push that follows is the event to wait for: pushes to a space are recorded one at
	// a time, in order, so once its event has arrived, any event of a refused push would have too.
	g.must(work, withToken(h.token, "push", "--quiet", "origin", "main")...)
	if p := rc.event(t, 2); p.Repo.HeadSha == head {
		t.Fatalf("the third event is for %s, the first push's head: a refused push emitted it", head)
	}
	var list []record
	h.mustCall("GET", "/api/settings/webhooks", h.token, nil, 200, &list)
	if a := h.activity(h.token, list[0].ID); len(a.Deliveries) != 3 {
		t.Fatalf("refused pushes emitted events: %d deliveries, want 3 (create, the first push, the owner's second push)", len(a.Deliveries))
	}
}

func TestPrivateSpaceNeedsTheOwnersToken(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	g := newGitClient(t)
	bobToken, _, err := h.emu.CreateToken(context.Background(), "bob", hubemu.RoleWrite, "bob")
	if err != nil {
		t.Fatal(err)
	}
	h.createSpace(h.token, "secret-app", true)
	url := h.URL + "/spaces/alice/secret-app"

	// Seed it through the .git form of the URL, with HTTP Basic from a credential helper: git gets
	// a 401 with a Basic challenge, asks the helper, and sends the token as the password.
	helper := "credential.helper=!f() { echo username=anyone; echo password=" + h.token + "; }; f"
	work := g.clone(url+".git", "-c", helper)
	head := g.commitFile(work, "README.md", appReadme, "first")
	g.must(work, "-c", helper, "push", "--quiet", "origin", "main")

	dst := filepath.Join(t.TempDir(), "anon")
	if out, err := g.run("", "clone", url, dst); err == nil || !strings.Contains(out, "could not read Username") {
		t.Fatalf("anonymous clone of a private space: err %v, output %q; want an authentication failure", err, out)
	}
	if out, err := g.run("", withToken(bobToken, "clone", url, dst+"-bob")...); err == nil || !strings.Contains(out, "not found") {
		t.Fatalf("someone else's clone of a private space: err %v, output %q; want not found", err, out)
	}
	mine := g.clone(url, bearer(h.token)...)
	if got := g.must(mine, "rev-parse", "HEAD"); got != head {
		t.Fatalf("the owner's clone has %s, want %s", got, head)
	}

	// The API hides it the same way: 401 without a token, 404 for bob, shown to alice.
	status, _, hdr := h.call("GET", "/api/spaces/alice/secret-app", "", nil)
	if status != http.StatusUnauthorized || hdr.Get("X-Error-Code") != "RepoNotFound" {
		t.Fatalf("anonymous info of a private space: %d %s", status, hdr.Get("X-Error-Code"))
	}
	h.mustCall("GET", "/api/spaces/alice/secret-app", bobToken, nil, 404, nil)
	h.mustCall("GET", "/api/spaces/alice/secret-app", h.token, nil, 200, nil)
}

func TestSpaceListingIsTheAppCatalog(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	g := newGitClient(t)
	bobToken, _, err := h.emu.CreateToken(context.Background(), "bob", hubemu.RoleWrite, "bob")
	if err != nil {
		t.Fatal(err)
	}
	publish := func(token, owner, name string, private bool, readme string) {
		h.createSpace(token, name, private)
		work := g.clone(h.URL+"/spaces/"+owner+"/"+name, bearer(token)...)
		g.commitFile(work, "README.md", readme, "publish")
		g.commitFile(work, name+"/main.py", "print('hi')\n", "code")
		g.must(work, withToken(token, "push", "--quiet", "origin", "main")...)
	}
	publish(h.token, "alice", "wave", false, appReadme)
	publish(bobToken, "bob", "dance", false, "---\ntags: [robot_python_app]\nshort_description: \"Dances: a lot\"\n---\n")
	publish(h.token, "alice", "hidden", true, appReadme)
	publish(h.token, "alice", "notes", false, "# no front matter\ntags: [robot_python_app]\n")
	h.createSpace(h.token, "empty", false)

	if got := spaceIDs(h.listSpaces("", "?filter=robot_python_app&full=true")); !slices.Equal(got, []string{"alice/wave", "bob/dance"}) {
		t.Fatalf("anonymous catalog %v, want alice/wave and bob/dance", got)
	}
	if got := spaceIDs(h.listSpaces(h.token, "?filter=robot_python_app")); !slices.Equal(got, []string{"alice/hidden", "alice/wave", "bob/dance"}) {
		t.Fatalf("alice's catalog %v, want her private space too", got)
	}
	if got := spaceIDs(h.listSpaces(bobToken, "?filter=robot_python_app&author=alice")); !slices.Equal(got, []string{"alice/wave"}) {
		t.Fatalf("bob's view of alice's apps %v", got)
	}
	if got := spaceIDs(h.listSpaces("", "?filter=robot_python_app&filter=robot")); !slices.Equal(got, []string{"alice/wave"}) {
		t.Fatalf("two filters %v, want the spaces with both tags", got)
	}
	if got := spaceIDs(h.listSpaces("", "")); !slices.Equal(got, []string{"alice/empty", "alice/notes", "alice/wave", "bob/dance"}) {
		t.Fatalf("all public spaces %v", got)
	}
	if got := h.listSpaces("", "?search=empty"); len(got) != 1 || got[0].SHA != "" || !slices.Equal(got[0].Tags, []string{"static"}) {
		t.Fatalf("a space without commits: %+v", got)
	}
	h.mustCall("GET", "/api/spaces", "hf_not_a_token", nil, 401, nil)
	h.mustCall("GET", "/api/spaces?limit=x", "", nil, 400, nil)

	// The robot daemon's catalog reads this listing, and installs by cloning the URL it makes.
	cat := &catalog.Catalog{HubURL: h.URL, TTL: time.Minute}
	list, err := cat.List(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]catalog.App{}
	for _, a := range list {
		byName[a.Name] = a
	}
	if len(list) != 2 || byName["wave"].Description != "Waves the antennas" || byName["dance"].Description != "Dances: a lot" ||
		byName["wave"].GitURL != h.URL+"/spaces/alice/wave" {
		t.Fatalf("catalog %+v", list)
	}
	dir := filepath.Join(t.TempDir(), "install")
	g.must("", "clone", "--depth", "1", "--quiet", "--", byName["wave"].GitURL, dir)
	if _, err := os.Stat(filepath.Join(dir, "wave", "main.py")); err != nil {
		t.Fatalf("the shallow clone of the catalog's URL lacks the app: %v", err)
	}
}

func TestSpacesSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	dsn := filepath.Join(dir, "hub.db")
	h := newTestHub(t, localhub.Config{DSN: dsn})
	g := newGitClient(t)
	h.createSpace(h.token, "wave", true)
	work := g.clone(h.URL+"/spaces/alice/wave", bearer(h.token)...)
	head := g.commitFile(work, "README.md", appReadme, "first")
	g.must(work, withToken(h.token, "push", "--quiet", "origin", "main")...)
	if _, err := os.Stat(filepath.Join(dir, "repos", "spaces", "alice", "wave.git", "HEAD")); err != nil {
		t.Fatalf("the repository is not beside the database: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}

	h2 := serveTestHub(t, localhub.Config{DSN: dsn})
	var info spaceInfo
	h2.mustCall("GET", "/api/spaces/alice/wave", h.token, nil, 200, &info)
	if info.SHA != head || !info.Private || !slices.Contains(info.Tags, "robot_python_app") {
		t.Fatalf("after a restart: %+v", info)
	}
	again := g.clone(h2.URL+"/spaces/alice/wave", bearer(h.token)...)
	if got := g.must(again, "rev-parse", "HEAD"); got != head {
		t.Fatalf("after a restart main is %s, want %s", got, head)
	}
	h2.mustCall("POST", "/api/repos/create", h.token, map[string]any{"name": "wave", "type": "space"}, 409, nil)
}

func TestCreateAndDeleteRepo(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	g := newGitClient(t)
	rc := newReceiver(t, "")
	h.createWebhook(h.token, map[string]any{"url": rc.url(), "watched": watch("user:alice")})
	readToken, _, err := h.emu.CreateToken(context.Background(), "alice", hubemu.RoleRead, "read")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		token  string
		body   string
		status int
		says   string
	}{
		{h.token, `{"name": "app", "type": "model"}`, 400, "only spaces"},
		{h.token, `{"name": "app"}`, 400, "only spaces"},
		{h.token, `{"name": "a..b", "type": "space"}`, 400, "'..'"},
		{h.token, `{"name": "-app", "type": "space"}`, 400, "cannot start or end"},
		{h.token, `{"name": "app!", "type": "space"}`, 400, "letters, digits"},
		{h.token, `{"name": "app.git", "type": "space"}`, 400, ".git"},
		{h.token, `{"name": "` + strings.Repeat("a", 97) + `", "type": "space"}`, 400, "longer than 96"},
		{h.token, `{"name": "app", "type": "space", "sdk": "flask"}`, 400, "sdk"},
		{h.token, `{"name": "app", "organization": "acme", "type": "space"}`, 403, "own name"},
		{h.token, `{"name": "bob/app", "type": "space"}`, 403, "own name"},
		{readToken, `{"name": "app", "type": "space"}`, 403, "write role"},
		{"", `{"name": "app", "type": "space"}`, 401, "Authorization"},
		{h.token, `{"name": 3, "type": "space"}`, 400, "name"},
	} {
		status, body, _ := h.call("POST", "/api/repos/create", c.token, c.body)
		if status != c.status || !strings.Contains(string(body), c.says) {
			t.Errorf("create %s: %d %s; want %d with %q", c.body, status, body, c.status, c.says)
		}
	}
	if list := h.listSpaces(h.token, ""); len(list) != 0 {
		t.Fatalf("refused creations made spaces: %v", spaceIDs(list))
	}

	// The public client's body: organization null, extra fields it sends for spaces are ignored.
	var created createdRepo
	h.mustCall("POST", "/api/repos/create", h.token, `{"name": "app", "organization": null, "type": "space", "private": false, "sdk": "gradio", "hardware": "cpu-basic"}`, 200, &created)
	h.mustCall("POST", "/api/repos/create", h.token, `{"name": "app", "organization": "alice", "type": "space", "sdk": "gradio"}`, 409, nil)
	var info spaceInfo
	h.mustCall("GET", "/api/spaces/alice/app", "", nil, 200, &info)
	if info.SDK != "gradio" || !slices.Equal(info.Tags, []string{"gradio"}) {
		t.Fatalf("created space %+v", info)
	}
	// An emitted push would contradict the git data: refused.
	h.mustCall("POST", "/api/emulator/events", h.token, hubemu.EmitInput{Repo: "space:alice/app", Scope: "repo.content", Action: "update"}, 409, nil)

	h.mustCall("DELETE", "/api/repos/delete", readToken, `{"name": "app", "type": "space"}`, 403, nil)
	h.mustCall("DELETE", "/api/repos/delete", h.token, `{"name": "nope", "type": "space"}`, 404, nil)
	h.mustCall("DELETE", "/api/repos/delete", h.token, `{"name": "app", "organization": "alice", "type": "space"}`, 200, nil)
	h.mustCall("GET", "/api/spaces/alice/app", h.token, nil, 404, nil)
	if out, err := g.run("", "clone", h.URL+"/spaces/alice/app", filepath.Join(t.TempDir(), "x")); err == nil {
		t.Fatalf("a deleted space still clones: %s", out)
	}
	if p := rc.event(t, 1); p.Event.Scope != "repo" || p.Event.Action != "delete" || p.Repo.Name != "alice/app" {
		t.Fatalf("delete event %s", p.Raw)
	}
	// The name is free again, and the new space starts empty.
	h.createSpace(h.token, "app", false)
	work := g.clone(h.URL + "/spaces/alice/app")
	if out := g.must(work, "branch", "--all"); out != "" {
		t.Fatalf("a re-created space has branches: %q", out)
	}
}

func TestWhoamiShowsTheTokensRole(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	readToken, _, err := h.emu.CreateToken(context.Background(), "alice", hubemu.RoleRead, "ci")
	if err != nil {
		t.Fatal(err)
	}
	for token, role := range map[string]string{h.token: "write", readToken: "read"} {
		var me struct {
			Name string `json:"name"`
			Auth struct {
				AccessToken struct {
					Role string `json:"role"`
				} `json:"accessToken"`
			} `json:"auth"`
		}
		h.mustCall("GET", "/api/whoami-v2", token, nil, 200, &me)
		if me.Name != "alice" || me.Auth.AccessToken.Role != role {
			t.Errorf("whoami %+v, want alice with role %s", me, role)
		}
	}
}

func TestLargePushIsSpooled(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	g := newGitClient(t)
	h.createSpace(h.token, "big", false)
	work := g.clone(h.URL + "/spaces/alice/big")
	// Random bytes do not compress: the pack is larger than git's 1 MiB post buffer, so git sends
	// it in chunks, which CGI cannot take as they come.
	data := make([]byte, 3<<20)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(data)
	if err := os.WriteFile(filepath.Join(work, "blob.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	g.must(work, "add", "blob.bin")
	g.must(work, "commit", "--quiet", "-m", "big")
	head := g.must(work, "rev-parse", "HEAD")
	g.must(work, withToken(h.token, "-c", "http.postBuffer=65536", "push", "--quiet", "origin", "main")...)
	var info spaceInfo
	h.mustCall("GET", "/api/spaces/alice/big", "", nil, 200, &info)
	if info.SHA != head {
		t.Fatalf("after a chunked push the space's sha is %q, want %s", info.SHA, head)
	}
}

func TestSpaceListingJSONShape(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	h.createSpace(h.token, "wave", false)
	_, body, _ := h.call("GET", "/api/spaces", "", nil)
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || len(raw) != 1 {
		t.Fatalf("listing %s: %v", body, err)
	}
	for _, field := range []string{"_id", "id", "author", "lastModified", "createdAt", "private", "sdk", "tags", "likes", "cardData", "siblings"} {
		if _, ok := raw[0][field]; !ok {
			t.Errorf("a listed space has no %q: %s", field, body)
		}
	}
}
