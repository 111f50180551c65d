package robotd_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/testkit/syncbuf"
	"github.com/robothub/robothub/robotd/cmd/robotdaemon"
)

// nobodyUID is the other local user of these tests.
const nobodyUID = 65534

// asNobody runs curl as the user nobody (another local user than the daemon's) and returns the
// status and the body of its answer. Tests that use it need root (to switch users), setpriv and curl.
func asNobody(t *testing.T, method, url, body string, headers ...string) (int, string) {
	t.Helper()
	args := []string{"--reuid=" + strconv.Itoa(nobodyUID), "--regid=" + strconv.Itoa(nobodyUID), "--clear-groups",
		"curl", "-sS", "--max-time", "30", "-o", "-", "-w", "\n%{http_code}", "-X", method}
	for i := 0; i+1 < len(headers); i += 2 {
		args = append(args, "-H", headers[i]+": "+headers[i+1])
	}
	if body != "" {
		args = append(args, "-H", "Content-Type: application/json", "--data-binary", body)
	}
	out, err := exec.Command("setpriv", append(args, url)...).Output()
	if err != nil {
		t.Fatalf("curl as nobody: %s %s: %v", method, url, err)
	}
	text := strings.TrimRight(string(out), "\n")
	i := strings.LastIndexByte(text, '\n')
	code, err := strconv.Atoi(text[i+1:])
	if err != nil {
		t.Fatalf("curl as nobody: %q", out)
	}
	return code, text[:max(i, 0)]
}

func needOtherUser(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("switching to another local user (setpriv) needs root")
	}
	for _, tool := range []string{"setpriv", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
}

func TestAnotherLocalUserNeedsTheToken(t *testing.T) {
	needOtherUser(t)
	const token = "t0k3n-from-the-flag-0123456789"
	d := startServer(t, serverOptions{token: token})
	d.install("coop_app")

	// What installs code, runs it, or moves the robot: 401 for another user without the token.
	refused := []struct{ method, path, body string }{
		{"POST", "/api/apps/install", `{"url": "` + testdataApp("coop_app") + `"}`},
		{"POST", "/api/apps/start-app/coop_app", ""},
		{"POST", "/api/apps/remove/coop_app", ""},
		{"POST", "/api/move/goto", `{"antennas": [0.5, 0.5], "duration": 0.5}`},
		{"POST", "/api/move/play/wake_up", ""},
		{"POST", "/api/motors/set_mode/disabled", ""},
		{"POST", "/api/sessions", `{"client": "intruder"}`},
		{"PUT", "/api/apps/startup-app", `{"startup_app": "coop_app"}`},
		{"GET", "/api/state/full", ""},
		{"GET", "/api/camera/frame", ""},
	}
	for _, r := range refused {
		code, body := asNobody(t, r.method, d.url+r.path, r.body)
		if code != 401 || !strings.Contains(body, "Authorization: Bearer") {
			t.Errorf("nobody, no token: %s %s: %d %s, want 401 saying how to send the token", r.method, r.path, code, body)
		}
		code, body = asNobody(t, r.method, d.url+r.path, r.body, "Authorization", "Bearer wrong")
		if code != 401 || !strings.Contains(body, "not this daemon's") {
			t.Errorf("nobody, wrong token: %s %s: %d %s, want 401", r.method, r.path, code, body)
		}
	}
	if st := d.status(); st != nil {
		t.Fatalf("a refused request started an app: %+v", st)
	}
	if _, ok := d.list()["coop_app"]; !ok {
		t.Fatal("a refused remove removed coop_app")
	}

	// With the token, another user may.
	bearer := []string{"Authorization", "Bearer " + token}
	if code, body := asNobody(t, "POST", d.url+"/api/move/play/wake_up", "", bearer...); code != 200 {
		t.Fatalf("nobody with the token: wake_up %d %s", code, body)
	}
	if code, body := asNobody(t, "POST", d.url+"/api/apps/install", `{"url": "relative/path"}`, bearer...); code != 422 {
		t.Fatalf("nobody with the token: install of a bad url %d %s, want 422 (past authentication)", code, body)
	}
	if code, body := asNobody(t, "POST", d.url+"/api/apps/start-app/coop_app", "", bearer...); code != 200 || !strings.Contains(body, `"starting"`) {
		t.Fatalf("nobody with the token: start-app %d %s", code, body)
	}
	if code, body := asNobody(t, "POST", d.url+"/api/apps/stop-current-app", "", bearer...); code != 200 {
		t.Fatalf("nobody with the token: stop %d %s", code, body)
	}
	if code, body := asNobody(t, "GET", d.url+"/healthz", ""); code != 200 {
		t.Fatalf("healthz needs no token: %d %s", code, body)
	}

	// The daemon's own user over TCP: the same rule, no identity comes from a connection (its
	// convenience is the owner socket, TestOwnerSocketIsTheOwnersAlone).
	d.expectError("POST", "/api/move/play/wake_up", nil, 401, "Authorization: Bearer <token>", "Authorization", "")
	d.expectError("POST", "/api/move/play/wake_up", nil, 401, "not this daemon's", "Authorization", "Bearer wrong")
	if code := d.call("POST", "/api/move/play/wake_up", nil, nil); code != 200 {
		t.Fatalf("the daemon's user with the token: %d", code)
	}
	if strings.Contains(d.log.String(), token) {
		t.Fatal("the token appears in the daemon's log")
	}
}

func TestTokenIsMadeOnFirstStart(t *testing.T) {
	parallel(t)
	needOtherUser(t)
	dataDir := t.TempDir()
	os.Chmod(dataDir, 0o755)
	getenv := func(k string) string {
		if k == "ROBOT_DAEMON_TOKEN" {
			return ""
		}
		return os.Getenv(k)
	}
	stdout := &syncbuf.Buffer{}
	d := startDaemon(t, daemonOptions{dataDir: dataDir, getenv: getenv, stdout: stdout})
	file := filepath.Join(dataDir, "api-token")
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(file)
	token := strings.TrimSpace(string(data))
	if len(token) < 20 {
		t.Fatalf("token %q is too short to be a secret", token)
	}
	// nobody cannot read it, and is refused without it.
	if out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "cat", file).CombinedOutput(); err == nil {
		t.Fatalf("nobody read the token file: %s", out)
	}
	if code, body := asNobody(t, "GET", d.url+"/api/apps/list", ""); code != 401 {
		t.Fatalf("nobody without the token: %d %s", code, body)
	}
	if code, body := asNobody(t, "GET", d.url+"/api/apps/list", "", "Authorization", "Bearer "+token); code != 200 {
		t.Fatalf("nobody with the file's token: %d %s", code, body)
	}
	log := d.log.String()
	if strings.Contains(log, token) || !strings.Contains(log, file) {
		t.Fatalf("the log must name the token file and never hold the token:\n%s", log)
	}
	if !strings.Contains(stdout.String(), "/login?token="+token) {
		t.Fatalf("stdout has no login link: %q", stdout.String())
	}
	d.stop()

	// The next start keeps the token: links and apps' tokens stay valid.
	d = startDaemon(t, daemonOptions{dataDir: dataDir, getenv: getenv})
	if code, body := asNobody(t, "GET", d.url+"/api/apps/list", "", "Authorization", "Bearer "+token); code != 200 {
		t.Fatalf("after a restart, nobody with the file's token: %d %s", code, body)
	}
}

func TestNoAuthBeyondLoopbackIsRefusedAtStart(t *testing.T) {
	for _, args := range [][]string{
		{"--host", "0.0.0.0", "--no-auth"},
		{"--host", "::", "--no-auth"},
		{"--wireless-version", "--no-auth"},
		{"--host", "192.0.2.1", "--no-auth"},
	} {
		dataDir := t.TempDir()
		var stderr strings.Builder
		err := robotdaemon.Run(context.Background(), append([]string{"robot-daemon", "--sim", "--data-dir", dataDir, "--port", "0"}, args...), os.Getenv, io.Discard, &stderr)
		if err == nil || !strings.Contains(err.Error(), "--no-auth: refusing to listen on") || !strings.Contains(err.Error(), "without authentication") {
			t.Errorf("%v: %v, want a refusal naming --no-auth", args, err)
		}
		if entries, _ := os.ReadDir(dataDir); len(entries) != 0 {
			t.Errorf("%v: the refused start wrote %v", args, entries)
		}
	}
}

func TestNoAuthOnLoopbackLetsEveryLocalUserIn(t *testing.T) {
	parallel(t)
	needOtherUser(t)
	stdout := &syncbuf.Buffer{}
	d := startDaemon(t, daemonOptions{args: []string{"--no-auth"}, stdout: stdout})
	if code, body := asNobody(t, "GET", d.url+"/api/apps/list", ""); code != 200 {
		t.Fatalf("--no-auth, nobody: %d %s", code, body)
	}
	if !strings.Contains(stdout.String(), "authentication is off") {
		t.Fatalf("stdout does not say authentication is off: %q", stdout.String())
	}
}

func TestDashboardLoginFromAnotherUser(t *testing.T) {
	needOtherUser(t)
	const token = "dashboard-login-token-0123456789"
	d := startServer(t, serverOptions{token: token})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	resp, err := noRedirect.Get(d.url + "/login?token=wrong")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || len(resp.Cookies()) != 0 || !strings.Contains(string(page), "That is not this daemon") {
		t.Fatalf("login with a wrong token: %d %v %s", resp.StatusCode, resp.Cookies(), page)
	}
	resp, err = noRedirect.Get(d.url + "/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), `<form method="post" action="/login">`) {
		t.Fatalf("login page: %d %s", resp.StatusCode, page)
	}

	resp, err = noRedirect.Get(d.url + "/login?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/" || resp.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("login: %d to %q, Referrer-Policy %q", resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("Referrer-Policy"))
	}
	setCookie := resp.Header.Get("Set-Cookie")
	for _, attr := range []string{"HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(setCookie, attr) {
			t.Errorf("login cookie %q lacks %s", setCookie, attr)
		}
	}
	if strings.Contains(setCookie, token) {
		t.Errorf("the cookie holds the token itself: %q", setCookie)
	}
	cookie := regexp.MustCompile(`^[^;]+`).FindString(setCookie)

	// The dashboard's fetches, as a browser on another machine would send them: the cookie.
	if code, body := asNobody(t, "GET", d.url+"/api/apps/list", "", "Cookie", cookie, "Sec-Fetch-Site", "same-origin"); code != 200 {
		t.Fatalf("nobody with the login cookie: list %d %s", code, body)
	}
	if code, body := asNobody(t, "POST", d.url+"/api/move/play/wake_up", "", "Cookie", cookie, "Sec-Fetch-Site", "same-origin", "Origin", d.url); code != 200 {
		t.Fatalf("nobody with the login cookie: wake_up %d %s", code, body)
	}
	if code, body := asNobody(t, "GET", d.url+"/api/apps/list", "", "Cookie", "robot_daemon_session=forged"); code != 401 {
		t.Fatalf("nobody with a forged cookie: %d %s", code, body)
	}

	// The form posts the token.
	code, body := asNobody(t, "POST", d.url+"/login", "", "Content-Type", "application/x-www-form-urlencoded")
	if code != 401 {
		t.Fatalf("form without a token: %d %s", code, body)
	}
	out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "curl", "-sS", "-o", "/dev/null",
		"-w", "%{http_code} %header{set-cookie}", "--data-urlencode", "token="+token, d.url+"/login").Output()
	if err != nil || !strings.HasPrefix(string(out), "303 robot_daemon_session=") {
		t.Fatalf("form login: %q %v", out, err)
	}
}

// What Chromium sends for a fetch() or a form post of a page on another site to the daemon on
// loopback, from the browser of the daemon's own user.
func TestCrossSitePageInTheUsersBrowserIsRefused(t *testing.T) {
	d := startServer(t, serverOptions{token: "cross-site-token-0123456789"})
	d.install("coop_app")
	chromium := func(mode, dest string) []string {
		return []string{
			"Origin", "https://evil.example",
			"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", mode, "Sec-Fetch-Dest", dest,
			"User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
			"Sec-Ch-Ua-Platform", `"Linux"`, "Referer", "https://evil.example/",
		}
	}
	// fetch("http://127.0.0.1:8000/api/...", {method: "POST", mode: "no-cors", body: "..."})
	d.expectError("POST", "/api/apps/start-app/coop_app", "{}", 403, "Cross-site requests are refused", chromium("no-cors", "empty")...)
	d.expectError("POST", "/api/apps/install", `{"url":"/tmp"}`, 403, "Cross-site requests are refused", chromium("no-cors", "empty")...)
	// <form method=post action="http://127.0.0.1:8000/api/move/play/wake_up">
	d.expectError("POST", "/api/move/play/wake_up", "", 403, "Cross-site requests are refused", chromium("navigate", "document")...)
	// A GET from that page (an <img>, a fetch, an EventSource) carries no token: 401.
	d.expectError("GET", "/api/state/full", nil, 401, "another site's page needs the token", append(chromium("cors", "empty"), "Authorization", "")...)
	d.expectError("GET", "/api/camera/frame", nil, 401, "another site's page needs the token", append(chromium("no-cors", "image"), "Authorization", "")...)
	if st := d.status(); st != nil {
		t.Fatalf("a cross-site request started %+v", st)
	}
	// The dashboard's own requests (same origin, with the owner's credential) are served.
	if code := d.call("POST", "/api/move/play/wake_up", nil, nil, "Sec-Fetch-Site", "same-origin", "Origin", d.url); code != 200 {
		t.Fatalf("same-origin dashboard request of the daemon's user: %d", code)
	}
}
