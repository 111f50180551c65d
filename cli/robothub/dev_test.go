package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/core/hub"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestDevPushUpdatesTheRobot is the whole system on one machine, each step real: robothub dev runs
// the local hub, the receiver and the simulated robot; an app is pushed to a space with git, installed
// on the robot and started; a second push reaches the robot through the hub's webhook and the
// receiver's robot-update route, and the robot runs the new version.
func TestDevPushUpdatesTheRobot(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole system")
	}
	dir := t.TempDir()
	hubAddr, recvAddr := freeAddr(t), freeAddr(t)
	_, daemonPort, _ := net.SplitHostPort(freeAddr(t))
	t.Setenv("ROBOT_DAEMON_URL", "http://127.0.0.1:"+daemonPort) // apps find the daemon through it
	p := start(t, map[string]string{"HOME": dir},
		"dev", "--data-dir", filepath.Join(dir, "dev"), "--hub-addr", hubAddr, "--receiver-addr", recvAddr, "--daemon-port", daemonPort)
	p.waitForWithin(t, 3*time.Minute, `robothub dev is running`)
	hubURL, daemonURL := "http://"+hubAddr, "http://127.0.0.1:"+daemonPort
	token, err := os.ReadFile(filepath.Join(dir, "dev", "hub", "token"))
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSpace(string(token))

	// Publish an app to a space: create it through the API, push it with git.
	ctx := context.Background()
	client, err := hub.New(hubURL, hub.WithToken(tok))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateRepo(ctx, hub.CreateRepoRequest{Type: "space", ID: "local/catalog_app", SDK: "static"}); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "catalog_app")
	if err := os.CopyFS(work, os.DirFS("../../core/apps/testdata/apps/catalog_app")); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "http.extraHeader=Authorization: Bearer " + tok}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args[0], err, out)
		}
		return strings.TrimSpace(string(out))
	}
	space := hubURL + "/spaces/local/catalog_app"
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "first version")
	git("push", "-q", space, "main")

	// Install it on the robot and start it.
	daemon := &http.Client{Timeout: 30 * time.Second}
	call := func(method, path string, body, out any) int {
		t.Helper()
		var rd *strings.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = strings.NewReader(string(b))
		} else {
			rd = strings.NewReader("")
		}
		req, _ := http.NewRequest(method, daemonURL+path, rd)
		req.Header.Set("Content-Type", "application/json")
		resp, err := daemon.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			_ = json.NewDecoder(resp.Body).Decode(out)
		}
		return resp.StatusCode
	}
	var job struct {
		JobID string `json:"job_id"`
	}
	if code := call("POST", "/api/apps/install", map[string]string{"url": space}, &job); code != 200 {
		t.Fatalf("install: %d", code)
	}
	type appInfo struct {
		Name  string
		Extra struct{ Version, Revision string }
	}
	installedApp := func() *appInfo {
		var list []appInfo
		call("GET", "/api/apps/list", nil, &list)
		for i := range list {
			if list[i].Name == "catalog_app" {
				return &list[i]
			}
		}
		return nil
	}
	first := git("rev-parse", "HEAD")
	waitUntil(t, 3*time.Minute, "catalog_app installed at the first commit", func() bool {
		a := installedApp()
		return a != nil && a.Extra.Revision == first
	})
	if code := call("POST", "/api/apps/start-app/catalog_app", nil, nil); code != 200 {
		t.Fatalf("start-app: %d", code)
	}
	type status struct {
		State string
		Info  struct {
			Name  string
			Extra struct{ Version string }
		}
	}
	current := func() status {
		var st status
		call("GET", "/api/apps/current-app-status", nil, &st)
		return st
	}
	waitUntil(t, 30*time.Second, "catalog_app running", func() bool { return current().State == "running" })

	// A plain git push of a new version: the robot installs and restarts it by itself.
	pyproject := filepath.Join(work, "pyproject.toml")
	b, _ := os.ReadFile(pyproject)
	if err := os.WriteFile(pyproject, []byte(strings.Replace(string(b), `version = "1.0.0"`, `version = "1.1.0"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	git("commit", "-q", "-am", "second version")
	pushed := time.Now()
	git("push", "-q", space, "main")
	second := git("rev-parse", "HEAD")
	waitUntil(t, 2*time.Minute, "the robot running the pushed version", func() bool {
		a, st := installedApp(), current()
		return a != nil && a.Extra.Revision == second && st.State == "running" && st.Info.Extra.Version == "1.1.0"
	})
	t.Logf("push to the robot running the new version: %s", time.Since(pushed).Round(time.Millisecond))

	if code := p.stop(t); code != 0 {
		t.Errorf("robothub dev exited with %d after Ctrl-C\n%s", code, p.stderr)
	}
	if !strings.Contains(p.stdout.String(), "robothub dev stopped.") {
		t.Errorf("no clean stop:\n%s", p.stdout)
	}
}

func waitUntil(t *testing.T, timeout time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestSameLocalRoute(t *testing.T) {
	same := sameLocalRoute("http://127.0.0.1:7860/webhooks/" + devUpdateRoute)
	for u, want := range map[string]bool{
		"http://127.0.0.1:7860/webhooks/" + devUpdateRoute:  true,
		"http://127.0.0.1:22860/webhooks/" + devUpdateRoute: true,
		"http://[::1]:7860/webhooks/" + devUpdateRoute:      true,
		"http://localhost:1/webhooks/" + devUpdateRoute:     true,
		"http://127.0.0.1:7860/webhooks/" + devLogRoute:     false,
		"https://127.0.0.1:7860/webhooks/" + devUpdateRoute: false,
		"https://example.com/webhooks/" + devUpdateRoute:    false,
		"http://10.0.0.2:7860/webhooks/" + devUpdateRoute:   false,
	} {
		if got := same(u); got != want {
			t.Errorf("same route as the dev receiver's: %q = %v, want %v", u, got, want)
		}
	}
	if sameLocalRoute("https://example.com/webhooks/x") != nil {
		t.Error("a receiver elsewhere replaces webhooks")
	}
}
