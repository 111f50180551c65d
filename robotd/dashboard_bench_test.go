package robotd_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// BenchmarkDashboardStore200 loads the dashboard with 200 apps in the hub's catalog, in headless
// Chromium against robot-daemon --sim: ms-to-store is the time from navigation to the store's 200
// cards rendered (performance.mark "store-rendered"), ms/search one search's filtering of them,
// ms/rerender one rebuild of the store (after each install or removal).
//
//	go test -run '^$' -bench BenchmarkDashboardStore200 -benchtime 10x ./robotd/
func BenchmarkDashboardStore200(b *testing.B) {
	ctx := browser(b)
	hub := catalogHub(b, nil, fillerApps(200))
	d := startDaemon(b, daemonOptions{args: []string{"--hub-url", hub.URL}})
	// The owner logs in once (the link the daemon prints): the cookie then opens the dashboard.
	if err := chromedp.Do(ctx, chromedp.Navigate(d.loginURL())); err != nil {
		b.Fatal(err)
	}
	var load, search, rerender float64
	for b.Loop() {
		steps, cancel := context.WithTimeout(ctx, time.Minute)
		err := chromedp.Do(steps, chromedp.Navigate(d.url+"/"),
			waitJS("the store to render", `performance.getEntriesByName("store-rendered").length > 0`),
			waitText("#store-count", "200 apps on the hub"))
		if err != nil {
			cancel()
			b.Fatal(err)
		}
		ms, err := chromedp.Run(steps, chromedp.Evaluate[float64](`performance.getEntriesByName("store-rendered")[0].startTime`))
		if err != nil {
			cancel()
			b.Fatal(err)
		}
		load += ms
		ms, err = chromedp.Run(steps, chromedp.Evaluate[float64](`(() => {
			const s = document.querySelector("#store-search"), t0 = performance.now();
			s.value = "chess maker3"; s.dispatchEvent(new Event("input"));
			const t = performance.now() - t0;
			s.value = ""; s.dispatchEvent(new Event("input"));
			return t; })()`))
		if err != nil {
			cancel()
			b.Fatal(err)
		}
		search += ms
		ms, err = chromedp.Run(steps, chromedp.Evaluate[float64](`(() => { const t0 = performance.now(); renderStore(); return performance.now() - t0; })()`))
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		rerender += ms
	}
	n := float64(b.N)
	b.ReportMetric(load/n, "ms-to-store")
	b.ReportMetric(search/n, "ms/search")
	b.ReportMetric(rerender/n, "ms/rerender")
	b.ReportMetric(0, "ns/op")
}
