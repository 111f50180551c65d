package robotd_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/robothub/robothub/core/apps"
)

// apiGate holds the daemon's API answers (every /api/ request) until it is opened: the dashboard's
// page and scripts load, its data does not, as on a slow link or a busy robot.
type apiGate struct {
	mu   sync.Mutex
	open chan struct{}
}

func (g *apiGate) close() {
	g.mu.Lock()
	g.open = make(chan struct{})
	g.mu.Unlock()
}

func (g *apiGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

func (g *apiGate) wait(ctx context.Context) bool {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	select {
	case <-open:
		return true
	case <-ctx.Done():
		return false
	}
}

// The dashboard's first paint, in headless Chromium at desktop and phone widths, with the daemon's
// answers held back: it says "loading…" where it knows nothing yet, never "No app installed yet",
// "No app is running" or "none" beside an app that runs. Then, with the answers: the running app,
// an update that failed said in plain words (pip's output one click away), and the antennas drawn
// on the head at wide angles.
func TestDashboardFirstPaintSaysLoading(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	d := startServer(t, serverOptions{})
	finished := time.Now()
	rawPip := "updating my_app: resolving the dependencies: python exited with code 1: ERROR: Could not find a version that satisfies " +
		"the requirement missing-dep>=1 (from versions: none); ERROR: No matching distribution found for missing-dep>=1"
	d.apps.mu.Lock()
	d.apps.installed["my_app"] = apps.AppInfo{Name: "my_app", SourceKind: apps.SourceInstalled, Description: "waves",
		Extra: apps.AppExtra{Module: "my_app.main", Version: "0.1.0", Installed: true, Source: "http://127.0.0.1:7861/spaces/local/my_app",
			Revision: "0123456789abcdef0123456789abcdef01234567",
			LastUpdate: &apps.UpdateRecord{JobID: "j1", Status: apps.JobFailed, Revision: "89abcdef0123456789abcdef0123456789abcdef",
				Error: rawPip, Started: finished.Add(-time.Second), Finished: &finished}}}
	d.apps.mu.Unlock()
	if code := d.call("POST", "/api/apps/start-app/my_app", nil, nil); code != 200 {
		t.Fatalf("start-app: %d", code)
	}

	gate := &apiGate{}
	gate.close()
	target, _ := url.Parse(d.url)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // the event streams flow as they come
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") && !gate.wait(r.Context()) {
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	// Close waits for the requests under way: the page's proxied event streams stayed open for
	// 60 s after the tab left the page (the test took 64 s, 60 of them in Close). The browser's
	// connections are closed first; every check is done by then.
	t.Cleanup(func() { front.CloseClientConnections(); front.Close() })
	t.Cleanup(gate.release)
	t.Cleanup(func() { _ = chromedp.Do(ctx, chromedp.Navigate("about:blank")) })
	// The owner logs in once: the cookie is the host's (127.0.0.1), so the page behind the front
	// server sends it too.
	login, cancelLogin := context.WithTimeout(ctx, 30*time.Second)
	err := chromedp.Do(login, chromedp.Navigate(d.loginURL()), chromedp.Navigate("about:blank"))
	cancelLogin()
	if err != nil {
		t.Fatalf("logging in: %v", err)
	}

	const firstPaint = `(() => {
	  const text = (sel) => (document.querySelector(sel) || {}).textContent || "<none>";
	  return JSON.stringify({apps: text("#apps"), current: text("#current-name"), log: text("#app-log"),
	    startup: text("#startup-app"), body: document.body.innerText});
	})()`
	for _, size := range []struct {
		name          string
		width, height int64
		mobile        bool
	}{{"desktop", desktopWidth, desktopHeight, false}, {"phone", phoneWidth, phoneHeight, true}} {
		t.Run(size.name, func(t *testing.T) {
			gate.close()
			step, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			opts := []chromedp.EmulateViewportOption{}
			if size.mobile {
				opts = append(opts, chromedp.EmulateMobile, chromedp.EmulatePortrait)
			}
			if err := chromedp.Do(step, chromedp.EmulateViewport(size.width, size.height, opts...), chromedp.Navigate(front.URL+"/"),
				waitJS("the page's script to have run", `document.readyState === "complete"`)); err != nil {
				t.Fatal(err)
			}
			// The script has asked for everything; give the page time to paint what it has.
			time.Sleep(300 * time.Millisecond) // lets a wrong first paint happen before it is read
			got, err := chromedp.Run(step, chromedp.Evaluate[string](firstPaint))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{`"apps":"loading…"`, `"current":"loading…"`, `"log":"loading…"`, `"startup":"loading…"`} {
				if !strings.Contains(got, want) {
					t.Errorf("before the daemon answers, the page shows %s; want %s", got, want)
				}
			}
			for _, lie := range []string{"No app installed yet", "No app is running", `"current":"none"`, `"startup":"none"`} {
				if strings.Contains(got, lie) {
					t.Errorf("before the daemon answers, the page says %q: %s", lie, got)
				}
			}
			gate.release()
			if err := chromedp.Do(step, waitText("#current-name", "my_app"), waitText("#current-state", "running"),
				waitText(`#apps li[data-app="my_app"] .last-update`, "failed")); err != nil {
				t.Fatalf("the page with the daemon's answers: %v", err)
			}
			shown := textOf(ctx, `#apps li[data-app="my_app"] .last-update .error`)
			if !strings.Contains(shown, "This app needs the Python package missing-dep>=1, which the package index does not have") ||
				!strings.Contains(shown, "The installed version stays.") {
				t.Errorf("the failed update says %q, not in plain words", shown)
			}
			for _, raw := range []string{"ERROR:", "exited with code", "resolving the dependencies"} {
				if strings.Contains(shown, raw) {
					t.Errorf("the failed update shows pip's raw output (%q): %q", raw, shown)
				}
			}
			if details := textOf(ctx, `#apps li[data-app="my_app"] .last-update details pre`); details != rawPip {
				t.Errorf("the update's full error, one click away, is %q", details)
			}
			if got := textOf(ctx, "#app-log"); strings.Contains(got, "No app is running") || strings.Contains(got, "loading…") {
				t.Errorf("the running app's output view says %q", got)
			}
		})
	}

	// The antennas at wide angles, each still on the head: it turns about its own base.
	for _, angles := range [][2]float64{{2.6, -2.6}, {-2.6, 2.6}, {1.2, 2.9}} {
		body := fmt.Sprintf(`{"target_antennas": [%g, %g]}`, angles[0], angles[1])
		if code := d.call("POST", "/api/move/set_target", body, nil); code != 200 {
			t.Fatalf("set_target %s: %d", body, code)
		}
		step, cancel := context.WithTimeout(ctx, 30*time.Second)
		// The drawing follows the state stream at 10 Hz: wait until it shows the angles (degrees).
		err := chromedp.Do(step, waitJS("the antennas drawn at "+body, fmt.Sprintf(`(() => {
		  const angle = (id) => parseFloat((document.getElementById(id).getAttribute("transform") || "rotate(NaN").slice(7));
		  return Math.abs(angle("svg-antenna-right") - %f) < 2 && Math.abs(angle("svg-antenna-left") + %f) < 2;
		})()`, angles[0]*180/math.Pi, angles[1]*180/math.Pi)))
		cancel()
		if err != nil {
			t.Fatalf("%v (the page shows the antennas at %s)", err, textOf(ctx, "#robot-antennas"))
		}
		geometry, err := chromedp.Run(ctx, chromedp.Evaluate[string](`["svg-antenna-right", "svg-antenna-left"].map((id) => {
		  const l = document.getElementById(id), m = l.transform.baseVal.consolidate();
		  const mat = m ? m.matrix : new DOMMatrix();
		  const base = new DOMPoint(l.x1.baseVal.value, l.y1.baseVal.value).matrixTransform(mat);
		  const tip = new DOMPoint(l.x2.baseVal.value, l.y2.baseVal.value).matrixTransform(mat);
		  return id + " base " + (base.x - l.x1.baseVal.value).toFixed(2) + "," + (base.y - l.y1.baseVal.value).toFixed(2) +
		    " tip moved " + Math.hypot(tip.x - l.x2.baseVal.value, tip.y - l.y2.baseVal.value).toFixed(1);
		}).join("; ")`))
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range strings.Split(geometry, "; ") {
			if !strings.Contains(part, " base 0.00,0.00 ") && !strings.Contains(part, " base -0.00,0.00 ") &&
				!strings.Contains(part, " base 0.00,-0.00 ") && !strings.Contains(part, " base -0.00,-0.00 ") {
				t.Errorf("antennas at %v: an antenna's base left the head: %s", angles, part)
			}
			if strings.HasSuffix(part, " tip moved 0.0") {
				t.Errorf("antennas at %v: an antenna is drawn unturned: %s", angles, part)
			}
		}
	}
	screenshots(t, ctx, "first-paint-then-antennas", "#robot")
}
