package robotd_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// waitText waits until the text of the element matching sel contains want.
// clickEnabled clicks the button sel once it exists and is enabled. The dashboard re-renders its
// table as the daemon's state changes (a Start button is disabled while an app runs), so the button
// is looked up and clicked in one step in the page, not found first and clicked at its place later.
func clickEnabled(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		js := fmt.Sprintf(`(() => { const b = document.querySelector(%q); if (!b || b.disabled) return false; b.click(); return true; })()`, sel)
		for {
			clicked, err := chromedp.Evaluate[bool](js)(ctx, t)
			if err != nil {
				return err
			}
			if clicked {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s never became an enabled button: %w", sel, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}

func waitText(sel, want string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for {
			text, err := chromedp.Text(chromedp.CSS(sel))(ctx, t)
			if err != nil {
				return err
			}
			if strings.Contains(text, want) {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s shows %q, want %q: %w", sel, text, want, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}

// The dashboard, driven in headless Chromium: install an app from a path, start it, stop it.
func TestDashboardInstallStartStop(t *testing.T) {
	path := chromium()
	if path == "" {
		t.Skip("no chromium binary found (apt-get install chromium); the dashboard test drives headless Chromium")
	}
	d := startDaemon(t, daemonOptions{})
	if _, ok := d.list()["parent_app"]; ok { // installed by another test: start from a clean slate
		var created struct {
			JobID string `json:"job_id"`
		}
		d.call("POST", "/api/apps/remove/parent_app", nil, &created)
		d.waitJob(created.JobID)
	}

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(d.url+"/")); err != nil {
		t.Fatalf("opening the dashboard: %v", err)
	}
	steps, cancelSteps := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelSteps()
	err := chromedp.Do(steps,
		waitText("#robot-state", "awake"),
		chromedp.SendKeys(chromedp.CSS("#install-url"), testdataApp("parent_app")),
		chromedp.Click(chromedp.CSS("#install-btn")),
		waitText("#job-status", ": done (parent_app)"),
	)
	if err != nil {
		t.Fatalf("installing from the dashboard: %v", err)
	}
	jobLog, err := chromedp.Run(steps, chromedp.Text(chromedp.CSS("#job-log")))
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(steps,
		clickEnabled(`tr[data-app="parent_app"] button.start`),
		waitText("#current-name", "parent_app"),
		waitText("#current-state", "running"),
		chromedp.Click(chromedp.CSS("#stop-btn")),
		waitText("#current-name", "none"), // a stopped app is no current app
	)
	if err != nil {
		t.Fatalf("starting and stopping from the dashboard: %v", err)
	}
	if st := d.status(); st != nil {
		t.Fatalf("status after the dashboard stopped the app: %+v, want null", st)
	}

	// An app with a web UI gets the settings icon, pointing at the host that serves the dashboard.
	d.install("webui_app")
	err = chromedp.Do(steps,
		clickEnabled(`tr[data-app="webui_app"] button.start`),
		waitText("#current-state", "running"),
		chromedp.WaitVisible(chromedp.CSS("#current-settings")),
	)
	if err != nil {
		shown, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#action-error")))
		t.Fatalf("starting the web UI app from the dashboard: %v (the dashboard shows the error %q; apps %v)", err, shown, d.list())
	}
	href, err := chromedp.Run(steps, chromedp.Evaluate[string](`document.querySelector("#current-settings").href`))
	if err != nil || href != webUIAppURL+"/" {
		t.Fatalf("settings icon links to %q (%v), want the app's web UI %s/", href, err, webUIAppURL)
	}
	if err := chromedp.Do(steps, chromedp.Click(chromedp.CSS("#stop-btn")), waitText("#current-name", "none")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(jobLog, "Successfully installed parent-app-1.0.0") {
		t.Errorf("the dashboard's job log lacks pip's output:\n%s", jobLog)
	}
}
