//go:build linux

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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
		req, _ := http.NewRequest(method, endpoint+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
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

// TestHubFullDiskWithPendingDeliveries: a full disk stops the local hub's delivery loop, which
// cannot record attempts any more, and with it hub serve: it exits 1 naming the database and the
// cause. Its pending deliveries stay in the database: once there is space, the next start sends
// them.
func TestHubFullDiskWithPendingDeliveries(t *testing.T) {
	dir := faultfs.Tmpfs(t, 4<<20)
	rc := newTestReceiver(t, "fill-secret") // listening, but the webhook first points elsewhere
	args := []string{"hub", "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--log-level", "error",
		"--retry-delay", "20ms", "--retry-max-delay", "50ms", "--delivery-attempts", "1000"}
	p := start(t, nil, args...)
	endpoint := p.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)
	token := p.waitFor(t, `(?m)^export HF_TOKEN=(hf_[A-Za-z]{34})$`)
	env := map[string]string{"HF_ENDPOINT": endpoint, "HF_TOKEN": token}
	code, out, errOut := runCLI(t, env, "", "webhooks", "create", "--url", "http://127.0.0.1:1/webhooks/hook",
		"--watch", "user:local", "--secret", "fill-secret", "--format", "quiet")
	if code != 0 {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	id := strings.TrimSpace(out)
	if code, out, errOut := runCLI(t, env, "", "hub", "emit", "--repo", "model:local/demo"); code != 0 {
		t.Fatalf("emit: %d %s %s", code, out, errOut)
	}
	time.Sleep(100 * time.Millisecond) // a few refused attempts
	filler := faultfs.Fill(t, dir)
	select {
	case code := <-p.done:
		p.done <- code
		if code != exitError || !strings.Contains(p.stderr.String(), filepath.Join(dir, "hub.db")) || !strings.Contains(p.stderr.String(), "disk is full") {
			t.Fatalf("hub serve on a full disk: exit %d\n%s", code, p.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("hub serve went on without recording its deliveries")
	}

	os.Remove(filler)
	p = start(t, nil, args...)
	endpoint = p.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)
	env["HF_ENDPOINT"] = endpoint
	if code, out, errOut := runCLI(t, env, "", "webhooks", "update", id, "--url", rc.url); code != 0 {
		t.Fatalf("update: %d %s %s", code, out, errOut)
	}
	if got := rc.wait(t, 1); got[0].Repo.Name != "local/demo" {
		t.Fatalf("delivered %s", got[0].Raw)
	}
}
