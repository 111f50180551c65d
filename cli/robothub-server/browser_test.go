package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser starts headless Chromium (Debian's chromium; .ci/run installs it) for one test.
func browser(t *testing.T) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("no chromium on PATH: install Debian's chromium (apt-get install chromium) to run browser tests")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// TestLandingPageInBrowser opens the receiver's landing page in Chromium: every route is listed with
// its full URL, and the page says a secret is set without showing it.
func TestLandingPageInBrowser(t *testing.T) {
	p := start(t, map[string]string{"WEBHOOK_SECRET": "browser-secret"},
		"serve", "--addr", "127.0.0.1:0", "--route", "hello=log", "--route", "ci/retrain=log", "--route", "relay=forward:http://127.0.0.1:9/x")
	base := p.waitFor(t, `Webhook receiver listening on (http://\S+)`)
	ctx := browser(t)

	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible("#routes")); err != nil {
		t.Fatal(err)
	}
	urls, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#routes .route-url")].map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	secretText, err := chromedp.Run(ctx, chromedp.Text("#secret-status"))
	if err != nil {
		t.Fatal(err)
	}
	body, err := chromedp.Run(ctx, chromedp.Text("body"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{base + "/webhooks/ci/retrain", base + "/webhooks/hello", base + "/webhooks/relay"}
	if strings.Join(urls, " ") != strings.Join(want, " ") {
		t.Errorf("routes shown: %q, want %q", urls, want)
	}
	if !strings.Contains(secretText, "A secret is set") {
		t.Errorf("secret status: %q", secretText)
	}
	if strings.Contains(body, "browser-secret") {
		t.Error("the landing page shows the secret")
	}
}
