//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHubSecretsAreOwnerOnly is issue 20's note that hub.db was made 0644 with webhook secrets in it.
// The built robothub hub serve runs under umask 000, with a token file an earlier run left 0666; the
// database, its write-ahead log and shared memory, and the token file are all 0600 once a webhook
// with a secret is stored.
func TestHubSecretsAreOwnerOnly(t *testing.T) {
	bin, err := exec.LookPath("robothub")
	if err != nil {
		t.Fatalf("robothub is not on PATH (testscript puts it there): %v", err)
	}
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("old\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tokenFile, 0o666); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", `umask 000 && exec "$0" hub serve --addr 127.0.0.1:0 --data-dir "$1" --token-file "$2"`,
		bin, dir, tokenFile)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	p := runHubProcess(t, cmd)
	endpoint := p.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)
	token := p.waitFor(t, `(?m)^export HF_TOKEN=(\S+)$`)
	if status, body := hubAPI(t, endpoint, token, "POST", "/api/settings/webhooks",
		`{"url":"https://example.com/hook","secret":"s3cret-value","watched":[{"type":"user","name":"local"}]}`); status != 200 {
		t.Fatalf("webhook: %d %s", status, body)
	}
	if b, err := os.ReadFile(tokenFile); err != nil || strings.TrimSpace(string(b)) != token {
		t.Fatalf("token file: %q %v", b, err)
	}
	for _, name := range []string{"hub.db", "hub.db-wal", "hub.db-shm", "token"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if perm := st.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s is %04o, want 0600 (it holds secrets)", name, perm)
		}
	}
}
