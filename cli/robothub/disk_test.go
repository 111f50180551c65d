//go:build linux

package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/faultfs"
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

// TestHubFullDiskWithPendingDeliveries: when the local hub's disk fills up while it delivers,
// its delivery loop pauses instead of stopping hub serve, saying so once, with the database and the
// cause. A delivery sent while the disk was full is recorded once there is space again, and is not
// sent a second time; a delivery left pending is sent then, without a restart, and the hub says
// once that delivery resumed.
func TestHubFullDiskWithPendingDeliveries(t *testing.T) {
	dir := faultfs.Tmpfs(t, 4<<20)
	db := filepath.Join(dir, "hub.db")
	rc := newTestReceiver(t, "fill-secret") // listening, but the second webhook first points elsewhere
	// The first webhook's receiver holds the delivery until the disk is full, then takes it: the
	// hub has to record a delivery it made while its database refuses writes.
	var arrivals atomic.Int32
	arrived, answer := make(chan struct{}, 1), make(chan struct{})
	held := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrivals.Add(1)
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-answer:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(held.Close)
	t.Cleanup(func() {
		select {
		case <-answer:
		default:
			close(answer)
		}
	})

	p := start(t, nil, "hub", "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--log-level", "info",
		"--retry-delay", "20ms", "--retry-max-delay", "50ms", "--delivery-attempts", "1000")
	endpoint := p.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)
	token := p.waitFor(t, `(?m)^export HF_TOKEN=(hf_[A-Za-z]{34})$`)
	env := map[string]string{"HF_ENDPOINT": endpoint, "HF_TOKEN": token}
	create := func(url string) string {
		t.Helper()
		code, out, errOut := runCLI(t, env, "", "webhooks", "create", "--url", url, "--watch", "user:local",
			"--secret", "fill-secret", "--format", "quiet")
		if code != 0 {
			t.Fatalf("create: %d %s %s", code, out, errOut)
		}
		return strings.TrimSpace(out)
	}
	heldID := create(held.URL + "/webhooks/hook")
	pendingID := create("http://127.0.0.1:1/webhooks/hook") // refused: retried until it is moved
	if code, out, errOut := runCLI(t, env, "", "hub", "emit", "--repo", "model:local/demo"); code != 0 {
		t.Fatalf("emit: %d %s %s", code, out, errOut)
	}
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the hub did not send the event to the first webhook")
	}
	time.Sleep(100 * time.Millisecond) // a few refused attempts of the second webhook
	filler := faultfs.Fill(t, dir)
	close(answer) // the first receiver takes the delivery now: the hub cannot record that

	const paused, resumed = "delivery paused", "delivery resumed"
	waitUntil(t, 10*time.Second, "the log line that delivery paused", func() bool { return strings.Contains(p.stderr.String(), paused) })
	time.Sleep(300 * time.Millisecond) // many retry delays: hub serve must still be running
	select {
	case code := <-p.done:
		p.done <- code
		t.Fatalf("hub serve exited %d on a full disk:\n%s", code, p.stderr)
	default:
	}
	line := logLine(p.stderr.String(), paused)
	if !strings.Contains(line, db) || !strings.Contains(line, "disk is full") {
		t.Errorf("the pause line does not name the database %s and the cause:\n%s", db, line)
	}
	if code, out, errOut := runCLI(t, env, "", "webhooks", "ls", "--format", "quiet"); code != 0 || !strings.Contains(out, heldID) {
		t.Errorf("webhooks ls while the disk is full: %d %s %s", code, out, errOut)
	}

	os.Remove(filler)
	waitUntil(t, 10*time.Second, "the log line that delivery resumed", func() bool { return strings.Contains(p.stderr.String(), resumed) })
	if code, out, errOut := runCLI(t, env, "", "webhooks", "update", pendingID, "--url", rc.url); code != 0 {
		t.Fatalf("update: %d %s %s", code, out, errOut)
	}
	if got := rc.wait(t, 1); got[0].Repo.Name != "local/demo" {
		t.Fatalf("delivered %s", got[0].Raw)
	}

	code, out, errOut := runCLI(t, env, "", "webhooks", "activity", heldID, "--format", "json")
	var a struct {
		Deliveries []struct {
			State    string `json:"state"`
			Attempts []struct {
				Status int `json:"status"`
			} `json:"attempts"`
		} `json:"deliveries"`
	}
	if err := json.Unmarshal([]byte(out), &a); code != 0 || err != nil {
		t.Fatalf("activity: %d %v %s %s", code, err, out, errOut)
	}
	if len(a.Deliveries) != 1 || a.Deliveries[0].State != "delivered" || len(a.Deliveries[0].Attempts) != 1 || a.Deliveries[0].Attempts[0].Status != 200 {
		t.Errorf("the delivery made while the disk was full is not recorded as delivered once: %s", out)
	}
	time.Sleep(200 * time.Millisecond) // a second send would come within a few retry delays
	if n := arrivals.Load(); n != 1 {
		t.Errorf("the event reached the first receiver %d times, want once", n)
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("hub serve exited %d:\n%s", code, p.stderr)
	}
	if n, m := strings.Count(p.stderr.String(), paused), strings.Count(p.stderr.String(), resumed); n != 1 || m != 1 {
		t.Errorf("%d lines say %q and %d say %q, want one each:\n%s", n, paused, m, resumed, p.stderr)
	}
}

// logLine is the first line of logs that contains s.
func logLine(logs, s string) string {
	for l := range strings.SplitSeq(logs, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
