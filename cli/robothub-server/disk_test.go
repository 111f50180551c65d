//go:build linux

package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/internal/testkit/faultfs"
)

// TestHubServeOnReadOnlyDataDir: the local hub refuses to start on a data directory it cannot
// write, saying which path and why, and writes no token file.
func TestHubServeOnReadOnlyDataDir(t *testing.T) {
	dir := faultfs.Tmpfs(t, 1<<20)
	faultfs.ReadOnly(t, dir, true)
	tokenFile := filepath.Join(t.TempDir(), "token")
	p := start(t, nil, "hub", "serve", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "hub"), "--token-file", tokenFile)
	select {
	case code := <-p.done:
		p.done <- code
		if code != exitError || !strings.Contains(p.stderr.String(), dir) || !strings.Contains(p.stderr.String(), "read-only file system") {
			t.Fatalf("exit %d, stderr:\n%s\nwant exit %d naming %s and the cause", code, p.stderr, exitError, dir)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("hub serve on a read-only data dir did not exit:\n%s", p.stdout)
	}
	if _, err := os.Stat(tokenFile); !os.IsNotExist(err) {
		t.Errorf("a token file was written: %v", err)
	}
}

// TestHubAPIOnFullDisk: when the local hub's database can no longer be written because its disk
// is full, a change answers 507 with a message that names the database and the cause, reads still
// work, nothing of the refused change is kept, and the hub works again once there is space. (A
// filesystem cannot become read-only while SQLite holds its files open for writing: EBUSY;
// TestHubServeOnReadOnlyDataDir starts on one instead.)
func TestHubAPIOnFullDisk(t *testing.T) {
	dir := faultfs.Tmpfs(t, 4<<20)
	p := start(t, nil, "hub", "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--log-level", "error")
	endpoint := p.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)
	token := p.waitFor(t, `(?m)^export HF_TOKEN=(hf_[A-Za-z]{34})$`)
	call := func(method, path, body string) (int, string) {
		t.Helper()
		return hubAPI(t, endpoint, token, method, path, body)
	}
	create := func(url string) (int, string) {
		return call("POST", "/api/settings/webhooks", `{"url":"`+url+`","watched":[{"type":"user","name":"local"}]}`)
	}
	if code, body := create("https://example.com/before"); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	_, before := call("GET", "/api/settings/webhooks", "")

	filler := faultfs.Fill(t, dir)
	for _, c := range []struct{ what, method, path, body string }{
		{"create a webhook", "POST", "/api/settings/webhooks", `{"url":"https://example.com/during","watched":[{"type":"user","name":"local"}]}`},
		{"emit an event", "POST", "/api/emulator/events", `{"repo":"model:local/demo","scope":"repo","action":"update"}`},
	} {
		code, body := call(c.method, c.path, c.body)
		var e struct{ Error string }
		_ = json.Unmarshal([]byte(body), &e)
		if code != 507 || !strings.Contains(e.Error, filepath.Join(dir, "hub.db")) || !strings.Contains(e.Error, "disk is full") {
			t.Errorf("%s on a full disk: %d %s, want 507 naming the database", c.what, code, body)
		}
	}
	if code, list := call("GET", "/api/settings/webhooks", ""); code != 200 || list != before {
		t.Errorf("the list while the disk is full: %d %s, want %s", code, list, before)
	}

	os.Remove(filler)
	if code, list := call("GET", "/api/settings/webhooks", ""); code != 200 || list != before {
		t.Errorf("the list after the disk is repaired: %d %s, want %s (nothing of the refused changes)", code, list, before)
	}
	if code, body := create("https://example.com/after"); code != 200 {
		t.Errorf("create once the disk can be written: %d %s", code, body)
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("hub serve exited %d:\n%s", code, p.stderr)
	}
}

// TestHubFullDiskStopsAndRestartDelivers: when the local hub's disk fills up while it delivers,
// hub serve exits 1 with an error that names the database, what failed and the cause. Nothing it
// accepted is lost: restarted on the same data directory once there is space, it sends the event
// that was still pending, and sends again the delivery whose result it could not record. That
// second send is a duplicate the receiver sees, which at-least-once delivery allows. Restarted
// while the disk is still full, it exits 1 again.
func TestHubFullDiskStopsAndRestartDelivers(t *testing.T) {
	dir := faultfs.Tmpfs(t, 4<<20)
	db := filepath.Join(dir, "hub.db")
	// The receiver holds the first delivery until the disk is full, then takes it: the hub has to
	// record a delivery it made while its database refuses writes. Later deliveries it takes at once.
	var mu sync.Mutex
	var arrivals []string // repo names, in order of arrival
	count := func(repo string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, r := range arrivals {
			if r == repo {
				n++
			}
		}
		return n
	}
	arrived, answer := make(chan struct{}), make(chan struct{})
	var first sync.Once
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct{ Repo struct{ Name string } }
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		mu.Lock()
		arrivals = append(arrivals, p.Repo.Name)
		mu.Unlock()
		first.Do(func() {
			close(arrived)
			select {
			case <-answer:
			case <-r.Context().Done():
			}
		})
	}))
	t.Cleanup(rc.Close)
	var answered sync.Once
	release := func() { answered.Do(func() { close(answer) }) }
	t.Cleanup(release)

	// One worker: the second event waits, pending, while the first is held.
	args := []string{"hub", "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--workers", "1",
		"--retry-delay", "20ms", "--retry-max-delay", "50ms", "--allow-delivery-to", strings.TrimPrefix(rc.URL, "http://")}
	p := start(t, nil, args...)
	endpoint := p.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)
	token := p.waitFor(t, `(?m)^export HF_TOKEN=(hf_[A-Za-z]{34})$`)
	env := map[string]string{"HF_ENDPOINT": endpoint, "HF_TOKEN": token}
	code, out, errOut := runCLI(t, env, "", "webhooks", "create", "--url", rc.URL+"/webhooks/hook", "--watch", "user:local", "--format", "quiet")
	if code != 0 {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	whID := strings.TrimSpace(out)
	emit := func(repo string) {
		t.Helper()
		if code, out, errOut := runCLI(t, env, "", "hub", "emit", "--repo", repo); code != 0 {
			t.Fatalf("emit %s: %d %s %s", repo, code, out, errOut)
		}
	}
	emit("model:local/one")
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the hub did not send the first event")
	}
	emit("model:local/two") // accepted: pending until the worker is free

	filler := faultfs.Fill(t, dir)
	release() // the receiver takes the first delivery now: the hub cannot record that
	select {
	case code := <-p.done:
		p.done <- code
		stderr := p.stderr.String()
		if code != exitError {
			t.Errorf("hub serve exited %d on a full disk, want %d:\n%s", code, exitError, stderr)
		}
		for _, want := range []string{db, "recording deliveries", "disk is full", "Nothing accepted is lost"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("hub serve's error does not say %q:\n%s", want, stderr)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("hub serve did not exit when its disk was full:\n%s", p.stderr)
	}
	if n := count("local/two"); n != 0 {
		t.Fatalf("the second event was sent %d times before the hub stopped; the test wants it pending", n)
	}

	// Started again too early, it stops again with the same kind of error, and still loses nothing.
	early := start(t, nil, args...)
	select {
	case code := <-early.done:
		early.done <- code
		if stderr := early.stderr.String(); code != exitError || !strings.Contains(stderr, db) || !strings.Contains(stderr, "disk is full") {
			t.Errorf("hub serve started on the full disk: exit %d, want %d naming %s and the cause:\n%s", code, exitError, db, stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("hub serve started on the full disk did not exit:\n%s", early.stderr)
	}

	os.Remove(filler)
	p2 := start(t, nil, args...)
	env["HF_ENDPOINT"] = p2.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)
	wait.For(t, 10*time.Second, "both events at the receiver after the restart", func() bool {
		return count("local/one") >= 2 && count("local/two") >= 1
	})
	type activity struct {
		Deliveries []struct {
			State string `json:"state"`
		} `json:"deliveries"`
	}
	var a activity
	wait.For(t, 10*time.Second, "both deliveries recorded as delivered", func() bool {
		code, out, _ := runCLI(t, env, "", "webhooks", "activity", whID, "--format", "json")
		a = activity{}
		if code != 0 || json.Unmarshal([]byte(out), &a) != nil || len(a.Deliveries) != 2 {
			return false
		}
		return a.Deliveries[0].State == "delivered" && a.Deliveries[1].State == "delivered"
	})
	if code := p2.stop(t); code != 0 {
		t.Errorf("the restarted hub serve exited %d:\n%s", code, p2.stderr)
	}
}
