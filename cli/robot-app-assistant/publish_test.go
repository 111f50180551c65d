package main

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// closedURL is an http URL on loopback where nothing listens.
func closedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String()
}

func hubEnv(h *fakeHub, token string) map[string]string {
	return map[string]string{"HF_ENDPOINT": h.URL(), "HF_TOKEN": token}
}

// The token is checked before anything else happens: no space, no git repository.
func TestPublishNeedsAWriteToken(t *testing.T) {
	h := newFakeHub(t)
	dir := mustCreate(t, "tokenless")
	tests := []struct {
		name string
		env  map[string]string
		args []string
		msg  string
	}{
		{"no token", map[string]string{"HF_ENDPOINT": h.URL()}, nil,
			"publishing needs a hub token with write permission: pass --token, set HF_TOKEN, or save the token in "},
		{"unknown token", hubEnv(h, "hf_nobody"), nil,
			"the hub at " + h.URL() + " refused the token from HF_TOKEN (401: Invalid credentials in Authorization header): the local hub's tokens come from robothub hub token create"},
		{"hub not running", map[string]string{"HF_ENDPOINT": closedURL(t), "HF_TOKEN": "hf_write_alice"}, nil,
			"is the local hub running there? (robothub dev, make run, or robothub hub serve)"},
		{"read token", hubEnv(h, "hf_read_alice"), nil,
			"the token from HF_TOKEN (user alice) has read permission: publishing needs write permission"},
		{"read token by flag", map[string]string{"HF_ENDPOINT": h.URL()}, []string{"--token", "hf_read_alice"},
			"the token from --token (user alice) has read permission"},
		{"bad endpoint", map[string]string{"HF_ENDPOINT": "ftp://hub", "HF_TOKEN": "x"}, nil,
			`HF_ENDPOINT: "ftp://hub" is not an http(s) URL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.env, append([]string{"publish", dir}, tt.args...)...)
			if r.code != exitError || !strings.Contains(r.stderr, tt.msg) {
				t.Fatalf("exit %d, stderr %q; want %q", r.code, r.stderr, tt.msg)
			}
			if strings.Contains(r.stderr+r.stdout, "hf_read_alice") || strings.Contains(r.stderr+r.stdout, "hf_nobody") {
				t.Fatalf("the token shows in the output: %s %s", r.stdout, r.stderr)
			}
		})
	}
	if n := h.createCount(); n != 0 {
		t.Fatalf("%d spaces created", n)
	}
	if isDir(filepath.Join(dir, ".git")) {
		t.Fatal("a git repository was made before the token was checked")
	}
}

func TestPublishCreatesTheSpaceAndPushes(t *testing.T) {
	h := newFakeHub(t)
	dir := mustCreate(t, "pub_app")
	token := "hf_write_alice"
	r := runCLI(t, hubEnv(h, token), "publish", dir)
	if r.code != 0 {
		t.Fatalf("publish: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	spaceURL := h.URL() + "/spaces/alice/pub_app"
	for _, s := range []string{
		"Publishing as alice to " + h.URL(), "All checks passed" /* check ran */, "Created the space alice/pub_app",
		"Made " + dir + " a git repository", "Pushed to " + spaceURL + " (branch main)", "Published alice/pub_app: " + spaceURL,
		`-d '{"url": "` + spaceURL + `"}'`,
	} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
		}
	}
	if want := files(t, dir); !slices.Equal(h.spaceFiles("alice", "pub_app"), excludeGit(want)) {
		t.Errorf("space files %v, want the package's %v", h.spaceFiles("alice", "pub_app"), excludeGit(want))
	}
	if log := h.spaceLog("alice", "pub_app"); !slices.Equal(log, []string{"Update pub_app"}) {
		t.Errorf("space history %v: the push should replace the new space's own commit", log)
	}
	created := h.creates[0]
	if created["name"] != "pub_app" || created["type"] != "space" || created["sdk"] != "static" || created["private"] != false {
		t.Errorf("create request %v", created)
	}
	// The token went to git as Basic auth in a header, never in a URL, .git/config or output.
	if !slices.Contains(h.gitAuth(), basicAuth("alice", token)) {
		t.Errorf("git sent no Basic auth for alice: %v", h.gitAuth())
	}
	for _, u := range h.requestURLs() {
		if strings.Contains(u, token) {
			t.Errorf("token in a request URL: %s", u)
		}
	}
	if cfg := readFile(t, filepath.Join(dir, ".git", "config")); strings.Contains(cfg, token) || !strings.Contains(cfg, "url = "+spaceURL+"\n") {
		t.Errorf(".git/config:\n%s", cfg)
	}
	if strings.Contains(r.stdout+r.stderr, token) {
		t.Error("the token shows in the output")
	}

	// A change, published again with a message: the space exists, a new commit is pushed.
	edit(t, filepath.Join(dir, "pub_app", "main.py"), "self.amplitude_deg = 30.0", "self.amplitude_deg = 45.0")
	r = runCLI(t, hubEnv(h, token), "publish", dir, "Wider waves", "--nocheck")
	if r.code != 0 {
		t.Fatalf("second publish: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, s := range []string{"Skipping the checks (--nocheck).", "The space alice/pub_app exists: updating it", `Committed 1 changed file(s): "Wider waves"`} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
		}
	}
	if log := h.spaceLog("alice", "pub_app"); !slices.Equal(log, []string{"Wider waves", "Update pub_app"}) {
		t.Errorf("space history %v", log)
	}
	// Nothing changed: the same commit is pushed again, which is fine.
	r = runCLI(t, hubEnv(h, token), "publish", "--nocheck", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "Nothing new to commit") {
		t.Fatalf("publish without changes: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func excludeGit(list []string) []string {
	var out []string
	for _, f := range list {
		if !strings.HasPrefix(f, ".git/") {
			out = append(out, f)
		}
	}
	return out
}

func TestPublishTokenFromTheTokenFile(t *testing.T) {
	h := newFakeHub(t)
	dir := mustCreate(t, "file_token_app")
	hfHome := t.TempDir()
	if err := os.WriteFile(filepath.Join(hfHome, "token"), []byte("hf_write_bob\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, map[string]string{"HF_ENDPOINT": h.URL(), "HF_HOME": hfHome}, "publish", "--nocheck", "--private", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "Published bob/file_token_app") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if h.creates[0]["private"] != true {
		t.Errorf("--private not sent: %v", h.creates[0])
	}
}

func TestCreateWithPublish(t *testing.T) {
	h := newFakeHub(t)
	dest := t.TempDir()
	r := runCLI(t, hubEnv(h, "hf_write_alice"), "create", "one_step", dest, "--publish")
	if r.code != 0 {
		t.Fatalf("create --publish: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "Created app one_step") || !strings.Contains(r.stdout, "Published alice/one_step") {
		t.Fatalf("stdout:\n%s", r.stdout)
	}
	if got := h.spaceFiles("alice", "one_step"); !slices.Contains(got, "one_step/main.py") || !slices.Contains(got, "README.md") {
		t.Fatalf("space files %v", got)
	}
	if log := h.spaceLog("alice", "one_step"); log[0] != "Create one_step" {
		t.Fatalf("space history %v", log)
	}
}

// create --publish takes publish's check options as flags (what the README shows for a machine
// without a package index), and a publish that fails keeps no folder: the same command runs again.
func TestCreateWithPublishFailsCleanlyAndRunsAgain(t *testing.T) {
	h := newFakeHub(t)
	dest := t.TempDir()
	// The interpreter comes from the flags only, not from the environment the tests set.
	env := map[string]string{"HF_ENDPOINT": h.URL(), envPython: "", envSystemSite: ""}
	args := []string{"create", "again_app", dest, "--publish", "--python", "/usr/bin/python3", "--system-site-packages"}
	r := runCLI(t, env, args...)
	if r.code != exitError || !strings.Contains(r.stderr, "publishing needs a hub token with write permission") ||
		!strings.Contains(r.stderr, "nothing was kept: "+filepath.Join(dest, "again_app")+" is removed, so that the same command can run again") {
		t.Fatalf("create --publish without a token: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(dest, "again_app")); !os.IsNotExist(err) {
		t.Fatalf("the failed create --publish left its folder: %v", err)
	}
	env["HF_TOKEN"] = "hf_write_alice"
	env["ROBOT_DAEMON_URL"] = "http://127.0.0.1:18000"
	r = runCLI(t, env, args...)
	if r.code != 0 || !strings.Contains(r.stdout, "All checks passed.") || !strings.Contains(r.stdout, "Published alice/again_app") {
		t.Fatalf("the same command once the token is there: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// The install line names the daemon the user's shell names, never a port it may not be on.
	if !strings.Contains(r.stdout, "curl -X POST 'http://127.0.0.1:18000/api/apps/install'") || strings.Contains(r.stdout, "localhost:8000") {
		t.Errorf("the install line does not name $ROBOT_DAEMON_URL:\n%s", r.stdout)
	}
	for _, flag := range []string{"--python", "--system-site-packages", "--wheel-dir"} {
		a := []string{"create", "lone_app", dest, flag}
		if flag != "--system-site-packages" {
			a = append(a, "/usr/bin/python3")
		}
		if r := runCLI(t, nil, a...); r.code != exitUsage || !strings.Contains(r.stderr, flag+" only applies with --publish") {
			t.Errorf("create %s without --publish: exit %d, %s", flag, r.code, r.stderr)
		}
	}
}

func TestPublishStopsOnFailedChecks(t *testing.T) {
	h := newFakeHub(t)
	dir := mustCreate(t, "unfit")
	edit(t, filepath.Join(dir, "README.md"), "  - robot_python_app\n", "")
	r := runCLI(t, hubEnv(h, "hf_write_alice"), "publish", dir)
	if r.code != exitError || !strings.Contains(r.stderr, "not published: check found 1 problem in "+dir+"; fix them, or publish anyway with --nocheck") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "FAIL  README.md:10: tags do not include robot_python_app") {
		t.Errorf("the check's report is not shown:\n%s", r.stdout)
	}
	if h.createCount() != 0 {
		t.Fatal("a space was created despite failed checks")
	}
	r = runCLI(t, hubEnv(h, "hf_write_alice"), "publish", "--nocheck", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "Published alice/unfit") {
		t.Fatalf("--nocheck: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// When the space moved on (someone pushed), publish says how to catch up instead of overwriting.
func TestPublishRefusedPushSaysHowToCatchUp(t *testing.T) {
	h := newFakeHub(t)
	dir := mustCreate(t, "shared_app")
	if r := runCLI(t, hubEnv(h, "hf_write_alice"), "publish", "--nocheck", dir); r.code != 0 {
		t.Fatalf("publish: %s", r.stderr)
	}
	other := filepath.Join(t.TempDir(), "other")
	mustGit(t, "", "clone", "-q", h.URL()+"/spaces/alice/shared_app", other)
	if err := os.WriteFile(filepath.Join(other, "NOTES.md"), []byte("from elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustGit(t, other, "add", ".")
	mustGit(t, other, "commit", "-q", "-m", "elsewhere")
	mustGit(t, other, "-c", "http.extraHeader=Authorization: "+basicAuth("alice", "hf_write_alice"), "push", "-q", "origin", "HEAD:main")

	edit(t, filepath.Join(dir, "style.css"), "margin: 0;", "margin: 1px;")
	r := runCLI(t, hubEnv(h, "hf_write_alice"), "publish", "--nocheck", dir)
	want := "the space has commits that this folder does not have, so the push was refused: run git pull --rebase space main in " + dir + " (your changes on top of the space's), then publish again"
	if r.code != exitError || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if log := h.spaceLog("alice", "shared_app"); log[0] != "elsewhere" {
		t.Fatalf("the space was overwritten: %v", log)
	}
	// What it says works (a plain git pull stops on divergent branches since git 2.27): the next
	// publish has both sides.
	mustGit(t, dir, "pull", "--rebase", "-q", "space", "main")
	if r := runCLI(t, hubEnv(h, "hf_write_alice"), "publish", "--nocheck", dir); r.code != 0 {
		t.Fatalf("publish after the suggested pull: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if log := h.spaceLog("alice", "shared_app"); log[0] == "elsewhere" || !slices.Contains(log, "elsewhere") {
		t.Fatalf("the space after the pull and publish: %v", log)
	}
}

// Publishing the same folder as another user creates that user's space and repoints the remote.
func TestPublishAsAnotherUserRepointsTheRemote(t *testing.T) {
	h := newFakeHub(t)
	dir := mustCreate(t, "mine")
	if r := runCLI(t, hubEnv(h, "hf_write_alice"), "publish", "--nocheck", dir); r.code != 0 {
		t.Fatalf("publish: %s", r.stderr)
	}
	r := runCLI(t, hubEnv(h, "hf_write_bob"), "publish", "--nocheck", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "Published bob/mine") {
		t.Fatalf("bob: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if cfg := readFile(t, filepath.Join(dir, ".git", "config")); !strings.Contains(cfg, "/spaces/bob/mine") {
		t.Fatalf("remote not repointed:\n%s", cfg)
	}
}

// A push the hub refuses fails with git's reason and without the token.
func TestPublishPushRefusedByTheHub(t *testing.T) {
	h := newFakeHub(t)
	h.refusePush = true
	dir := mustCreate(t, "refused")
	r := runCLI(t, hubEnv(h, "hf_write_alice"), "publish", "--nocheck", dir)
	if r.code != exitError || !strings.Contains(r.stderr, "pushing to "+h.URL()+"/spaces/alice/refused: git push:") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "hf_write_alice") || strings.Contains(r.stdout+r.stderr, basicAuth("alice", "hf_write_alice")[6:]) {
		t.Fatalf("the token shows in the output:\n%s", r.stderr)
	}
}
