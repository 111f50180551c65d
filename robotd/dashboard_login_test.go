package robotd_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browserAsNobody starts headless Chromium as the user nobody (another local user than the
// daemon's, so that the daemon does not trust its requests by their uid) and returns a tab.
func browserAsNobody(t *testing.T) context.Context {
	t.Helper()
	needOtherUser(t)
	path := chromium()
	if path == "" {
		t.Skip("no chromium binary found (apt-get install chromium)")
	}
	home, err := os.MkdirTemp("", "robotd-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	_ = os.Chmod(home, 0o777)
	wrapper := filepath.Join(home, "chromium-as-nobody")
	script := fmt.Sprintf("#!/bin/sh\nHOME=%s exec setpriv --reuid=65534 --regid=65534 --clear-groups %s \"$@\"\n", home, path)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	profile := filepath.Join(home, "profile")
	if err := os.Mkdir(profile, 0o777); err != nil {
		t.Fatal(err)
	}
	return startBrowser(t, wrapper, profile)
}

// A browser the daemon does not trust (another local user's, or another machine's) that opens the
// dashboard is sent to /login, not asked for the token by a prompt; after the login, the HttpOnly
// cookie is all it holds: no token in localStorage, in document.cookie or in any URL it requested,
// the streams included. A token that an earlier dashboard kept in localStorage is removed.
func TestDashboardSendsARefusedBrowserToLogin(t *testing.T) {
	const token = "dashboard-browser-token-0123456789"
	ctx := browserAsNobody(t)
	d := startServer(t, serverOptions{token: token})
	d.waitRobot(10*time.Second, "awake", func(s robotState) bool { return s.Awake && s.Move == nil })
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		stepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(stepCtx, actions...); err != nil {
			t.Fatalf("%s: %v (the page is %s)", what, err, evalString(ctx, "location.href"))
		}
	}
	step("a token left by an earlier dashboard", chromedp.Navigate(d.url+"/login"),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("robotDaemonToken", %q)`, token)))

	step("opening the dashboard without a login", chromedp.Navigate(d.url+"/"),
		waitJS("the browser sent to /login", `location.pathname === "/login" && !!document.querySelector('form[action="/login"]')`))
	if got := evalString(ctx, `JSON.stringify(Object.entries(localStorage))`); strings.Contains(got, token) {
		t.Fatalf("localStorage holds the token after the dashboard ran: %s", got)
	}

	step("logging in with the form", chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), token),
		chromedp.Submit(chromedp.CSS(`form[action="/login"]`)),
		waitJS("back on the dashboard", `location.pathname === "/"`),
		waitText("#robot-state", "Awake"))
	for what, js := range map[string]string{
		"localStorage":     `JSON.stringify(Object.entries(localStorage))`,
		"sessionStorage":   `JSON.stringify(Object.entries(sessionStorage))`,
		"document.cookie":  `document.cookie`,
		"the URLs fetched": `JSON.stringify(performance.getEntriesByType("resource").map(e => e.name))`,
	} {
		if got := evalString(ctx, js); strings.Contains(got, token) || strings.Contains(got, "token=") || strings.Contains(got, "robot_daemon_session") {
			t.Errorf("%s holds the token or the login: %s", what, got)
		}
	}
	if got := evalString(ctx, `JSON.stringify(performance.getEntriesByType("resource").map(e => e.name))`); !strings.Contains(got, "/api/state/stream") {
		t.Errorf("the dashboard did not open the state stream with its cookie: %s", got)
	}
}

// evalString evaluates a JavaScript expression to a string in the page ("" on error).
func evalString(ctx context.Context, js string) string {
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	return s
}
