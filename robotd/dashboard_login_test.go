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
	if testing.Short() {
		t.Skip("drives headless Chromium as another user: not under -short; make test runs it")
	}
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
	if err := os.Mkdir(profile, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(profile, 65534, 65534); err != nil {
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
		waitPage("the browser sent to /login", `location.pathname === "/login" && !!document.querySelector('form[action="/login"]')`))
	if got := evalString(ctx, `JSON.stringify(Object.entries(localStorage))`); strings.Contains(got, token) {
		t.Fatalf("localStorage holds the token after the dashboard ran: %s", got)
	}

	step("logging in with the form", chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), token),
		chromedp.Submit(chromedp.CSS(`form[action="/login"]`)),
		waitPage("back on the dashboard", `location.pathname === "/"`),
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
	// A stream as the dashboard opens it (EventSource sends no header): the cookie lets it in.
	step("a state event over EventSource with the cookie alone",
		chromedp.Evaluate[chromedp.Void](`window.streamed = false; { const es = new EventSource("/api/state/stream?frequency=10"); es.onmessage = () => { window.streamed = true; es.close(); }; }`),
		waitPage("a state event", `window.streamed === true`))
}

// evalString evaluates a JavaScript expression to a string in the page ("" on error).
func evalString(ctx context.Context, js string) string {
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	return s
}

// waitPage waits until the JavaScript expression is true in the page, across navigations (an
// evaluation that a navigation interrupts is tried again).
func waitPage(what, expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for {
			if ok, err := chromedp.Evaluate[bool](expr)(ctx, t); err == nil && ok {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}
