package robotd_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/robotd/cmd/robotdaemon"
)

// postLogin posts the login form as the daemon's own user and returns the status, Retry-After and page.
func postLogin(t *testing.T, d *daemon, token string) (int, string, string) {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(d.url+"/login", url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(page)
}

// Wrong tokens at /login: a client gets five tries at once, then one per 10 s; beyond that it is
// answered 429 with Retry-After, even with the right token, while another client logs in.
func TestLoginFailuresAreLimitedPerClient(t *testing.T) {
	const token = "login-limit-token-0123456789abcdef"
	d := startServer(t, serverOptions{token: token})
	for i := range 5 {
		if code, _, page := postLogin(t, d, "guess-"+strconv.Itoa(i)); code != 401 || !strings.Contains(page, "That is not this daemon") {
			t.Fatalf("wrong token %d: %d %s", i+1, code, page)
		}
	}
	code, retry, page := postLogin(t, d, "guess-6")
	secs, _ := strconv.Atoi(retry)
	if code != 429 || secs < 1 || secs > 10 || !strings.Contains(page, "Too many wrong tokens from this client: try again in "+retry+" seconds") {
		t.Fatalf("a sixth wrong token at once: %d, Retry-After %q, %s", code, retry, page)
	}
	if code, _, _ := postLogin(t, d, token); code != 429 {
		t.Fatalf("the right token while the client waits: %d, want 429 (a guess that hit would show)", code)
	}
	if strings.Contains(d.log.String(), token) || strings.Contains(d.log.String(), "guess-") {
		t.Fatal("the log holds a token sent to /login")
	}
	// Failed logins are counted per address, since nothing else names a client that has no
	// credential: every user on loopback waits with this one. The API with the owner's token (and
	// its socket) is not held up by them.
	if code := d.call("GET", "/api/daemon/status", nil, nil); code != 200 {
		t.Fatalf("the owner's token while loopback's logins wait: %d", code)
	}
	if os.Getuid() == 0 {
		needOtherUser(t)
		if code, body := asNobody(t, "POST", d.url+"/login", "", "Content-Type", "application/x-www-form-urlencoded"); code != 429 {
			t.Fatalf("nobody's try from the same address while it waits: %d %s, want 429", code, body)
		}
	}
}

// A token of fewer than 128 bits is refused at start, naming where it came from, never the token.
func TestWeakTokensAreRefused(t *testing.T) {
	for _, c := range []struct {
		name   string
		args   []string
		env    string
		file   string
		source string
	}{
		{"a short flag", []string{"--token", "s3cr3t-letmein"}, "", "", "--token:"},
		{"16 hex digits (64 bits)", []string{"--token", "0123456789abcdef"}, "", "", "16 characters of hex digits carry about 64 bits"},
		{"the environment", nil, "hunter2", "", "ROBOT_DAEMON_TOKEN:"},
		{"a one-character token file", nil, "", "§", "the token file "},
	} {
		t.Run(c.name, func(t *testing.T) {
			dataDir := t.TempDir()
			if c.file != "" {
				if err := os.WriteFile(filepath.Join(dataDir, "api-token"), []byte(c.file+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			getenv := func(k string) string {
				if k == "ROBOT_DAEMON_TOKEN" {
					return c.env
				}
				return os.Getenv(k)
			}
			var stderr strings.Builder
			args := append([]string{"robot-daemon", "--sim", "--data-dir", dataDir, "--port", "0", "--hub-url", "none"}, c.args...)
			// A daemon that took the token would serve until the context ends: not for long.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := robotdaemon.Run(ctx, args, getenv, io.Discard, &stderr)
			if err == nil || !strings.Contains(err.Error(), c.source) || !strings.Contains(err.Error(), "at least 128") {
				t.Fatalf("%v: %v, want a refusal naming %q", args, err, c.source)
			}
			secret := c.env + c.file
			if len(c.args) > 1 {
				secret = c.args[1]
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(stderr.String(), secret) {
				t.Fatalf("the refusal shows the token: %v %s", err, stderr.String())
			}
		})
	}
	// 26 characters of base32, what the daemon makes itself (130 bits), and 32 hex digits pass.
	for _, ok := range []string{"ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789abcdef0123456789abcdef"} {
		err := robotdaemon.Run(context.Background(), []string{"robot-daemon", "--sim", "--data-dir", t.TempDir(), "--token", ok, "--port", "-1"}, os.Getenv, io.Discard, io.Discard)
		if err == nil || strings.Contains(err.Error(), "too weak") {
			t.Fatalf("token of %d characters: %v, want it accepted (the run then stops at --port -1)", len(ok), err)
		}
	}
}
