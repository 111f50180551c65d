package robotd_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDashboardCancelsAnInstall: the install card's Cancel stops an install that waits on its
// dependencies (an index that holds them), the card says why it failed, nothing is installed, and
// the next install runs.
func TestDashboardCancelsAnInstall(t *testing.T) {
	parallel(t)
	indexURL, release := gatedIndex(t, "slowdep")
	d := startDaemon(t, daemonOptions{venv: ownVenv(t), args: []string{"--index-url", indexURL}})
	ctx := browser(t)
	must := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		stepCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
		if err := chromedp.Do(stepCtx, actions...); err != nil {
			t.Fatalf("%s: %v\n(the page shows: error %q, job %q, log %q)", what, err,
				textOf(ctx, "#action-error"), textOf(ctx, "#job-status"), textOf(ctx, "#job-log"))
		}
	}
	must("starting an install that waits on its dependency", chromedp.Navigate(d.loginURL()),
		waitText("#robot-state", "Awake"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#store details").open = true`),
		chromedp.SendKeys(chromedp.CSS("#install-url"), localApp(t, "waiting_app", "slowdep")),
		chromedp.Click(chromedp.CSS("#install-btn")),
		waitText("#job-status", "installing its dependencies"),
		waitJS("the Cancel button shown", `!document.querySelector("#job-cancel").hidden`))
	must("cancelling it", clickEnabled("#job-cancel"),
		waitText("#job-status", "Failed."),
		waitText("#job-summary", "cancelled on request"),
		waitJS("the Cancel button hidden", `document.querySelector("#job-cancel").hidden`))
	release()
	if _, ok := d.list()["waiting_app"]; ok {
		t.Fatal("the cancelled install left waiting_app installed")
	}
	must("closing the finished job's panel", closeJobPanel())
	must("installing it again", chromedp.Evaluate[chromedp.Void](`document.querySelector("#install-url").value = ""`),
		chromedp.SendKeys(chromedp.CSS("#install-url"), localApp(t, "waiting_app", "slowdep")),
		chromedp.Click(chromedp.CSS("#install-btn")),
		waitText("#job-status", "Done: installed waiting_app."))
	if log := textOf(ctx, "#job-log"); !strings.Contains(log, "Installing dependencies: slowdep") {
		t.Errorf("the second install's log: %s", log)
	}
}
