package robotd_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/hubtest"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
	hubspaces "github.com/robothub/robothub/internal/hubemu/spaces"
	"github.com/robothub/robothub/internal/testkit/pyindex"
)

// screenshotDir is where the dashboard tests write their screenshots (gitignored; the README links
// to it and shows the one committed image, docs/dashboard.png).
const screenshotDir = "../docs/screenshots"

func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser starts headless Chromium for one test and returns a tab's context; flags are added to
// the usual ones.
func browser(t testing.TB, flags ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("drives headless Chromium (seconds a test): not under -short; make test runs it")
	}
	path := chromium()
	if path == "" {
		t.Skip("no chromium binary found (apt-get install chromium); the dashboard tests drive headless Chromium")
	}
	return startBrowser(t, path, t.TempDir(), flags...)
}

// startBrowser starts the headless Chromium at path with its profile in dir; flags are added to
// the usual ones.
func startBrowser(t testing.TB, path, dir string, flags ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(dir), chromedp.WindowSize(desktopWidth, desktopHeight),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	opts = append(opts, flags...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	// The first action starts the browser, which lives as long as the context it ran on: this
	// one, not the shorter ones of the test's steps.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

const (
	desktopWidth, desktopHeight = 1280, 900
	phoneWidth, phoneHeight     = 390, 844
)

// clickEnabled clicks the button sel once it exists and is enabled. The dashboard re-renders its
// lists as the daemon's state changes (a Start button is disabled while an app runs), so the button
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

// closeJobPanel closes the finished job's panel, as a user does before the next install: it floats
// over the page's bottom right, where it may cover the store's install form.
func closeJobPanel() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := clickEnabled("#job-dismiss")(ctx, t); err != nil {
			return err
		}
		_, err := waitJS("the job panel hidden", `document.querySelector("#job").hidden`)(ctx, t)
		return err
	})
}

// waitJS waits until the JavaScript expression is true in the page; what names it in errors.
func waitJS(what, expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for {
			ok, err := chromedp.Evaluate[bool](expr)(ctx, t)
			if err != nil {
				return err
			}
			if ok {
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

// waitText waits until the text of the element matching sel contains want (the element may be
// hidden: textContent, not what is rendered).
func waitText(sel, want string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e ? e.textContent : "<no element>"; })()`, sel)
		for {
			text, err := chromedp.Evaluate[string](js)(ctx, t)
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

// textOf is the textContent of the element sel.
func textOf(ctx context.Context, sel string) string {
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, sel)))
	return s
}

// colorScheme makes the page see prefers-color-scheme as scheme ("" stops the override).
func colorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		var features []*emulation.MediaFeature
		if scheme != "" {
			features = []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}
		}
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: features})
		return err
	})
}

// screenshots writes the page as it is now at desktop and at phone width, as
// <screenshotDir>/<name>-desktop.png (the whole page) and -phone.png (the screen at the element
// focus), and fails if the phone layout scrolls sideways.
func screenshots(t *testing.T, ctx context.Context, name, focus string) {
	t.Helper()
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, size := range []struct {
		suffix        string
		width, height int64
		mobile        bool
	}{{"phone", phoneWidth, phoneHeight, true}, {"desktop", desktopWidth, desktopHeight, false}} {
		opts := []chromedp.EmulateViewportOption{}
		if size.mobile {
			opts = append(opts, chromedp.EmulateMobile, chromedp.EmulatePortrait)
		}
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(size.width, size.height, opts...)); err != nil {
			t.Fatal(err)
		}
		if size.mobile {
			// Wait for the layout at the new width, then check nothing is wider than the screen.
			overflow, err := chromedp.Run(ctx, chromedp.Evaluate[int](`new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(() => ok(document.documentElement.scrollWidth - document.documentElement.clientWidth))))`, chromedp.EvalAsValue, chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatal(err)
			}
			if overflow > 0 {
				t.Errorf("%s: the page is %d px wider than a %d px phone screen", name, overflow, size.width)
			}
		}
		// The desktop page whole; on a phone, the screen's worth around what the state is about.
		shot := chromedp.FullScreenshot(100)
		if size.mobile {
			if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).scrollIntoView({block: "start"})`, focus))); err != nil {
				t.Fatal(err)
			}
			shot = chromedp.CaptureScreenshot()
		}
		png, err := chromedp.Run(ctx, shot)
		if err != nil {
			t.Fatalf("screenshot %s-%s: %v", name, size.suffix, err)
		}
		if err := os.WriteFile(filepath.Join(screenshotDir, name+"-"+size.suffix+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readmeImage writes <screenshotDir>/readme.png, the top of the page in a small window: the image
// the README shows is a copy of it (docs/dashboard.png).
func readmeImage(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1100, 700), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(screenshotDir, "readme.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// space is an app published on the test hub: its README's card and its files.
type space struct {
	owner, name string
	card        string            // the README's front matter, without the --- lines
	dir         string            // the app's package source, copied whole; "" for a listing only
	files       map[string]string // more files
	private     bool
}

// catalogHub runs the local hub emulator (internal/hubemu) in-process with spaces published to it
// through its commit API, as `robot-app-assistant publish` would, and serves it on loopback.
//
// listed are more catalog entries, added to the emulator's answer to GET /api/spaces in the same
// record shape: publishing a git space takes the emulator a third of a second on a busy machine,
// and a store of 200 apps needs only a few of them to be installable.
func catalogHub(t testing.TB, spaces []space, listed []map[string]any) *localHub {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skipf("git is not installed: %v", err)
	}
	ctx := context.Background()
	emu := hubtest.Start(t, localhub.Config{}, hubtest.WithHandler(func(hub http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || r.URL.Path != "/api/spaces" || len(listed) == 0 {
				hub.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			hub.ServeHTTP(rec, r)
			var records []map[string]any
			if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &records) != nil {
				t.Errorf("the hub emulator answered GET %s with %d %s", r.URL, rec.Code, rec.Body)
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(append(records, listed...))
		})
	}))
	h := &localHub{URL: emu.URL, emu: emu.Emulator, owners: map[string]hubemu.Principal{}, tokens: map[string]string{}}
	owners := h.owners
	for _, sp := range spaces {
		p, ok := owners[sp.owner]
		if !ok {
			token, _, err := emu.CreateToken(ctx, sp.owner, hubemu.RoleWrite, "publish")
			if err != nil {
				t.Fatal(err)
			}
			if p, err = emu.Authenticate(ctx, token); err != nil {
				t.Fatal(err)
			}
			owners[sp.owner] = p
			h.tokens[sp.owner] = token
		}
		private := sp.private
		if _, err := emu.CreateSpace(ctx, p, hubspaces.CreateRepoInput{Name: sp.name, Type: "space", Private: &private}); err != nil {
			t.Fatalf("creating space %s/%s: %v", sp.owner, sp.name, err)
		}
		files := map[string]string{}
		if sp.dir != "" {
			err := filepath.WalkDir(sp.dir, func(path string, e fs.DirEntry, err error) error {
				if err != nil || e.IsDir() {
					return err
				}
				if strings.Contains(path, "__pycache__") || strings.Contains(path, ".egg-info") {
					return nil
				}
				rel, _ := filepath.Rel(sp.dir, path)
				data, err := os.ReadFile(path)
				files[filepath.ToSlash(rel)] = string(data)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		for k, v := range sp.files {
			files[k] = v
		}
		files["README.md"] = "---\n" + sp.card + "\n---\n\n# " + sp.name + "\n"
		h.publish(t, sp.owner, sp.name, files)
	}
	return h
}

// localHub is the hub emulator serving on URL, with the principals of the spaces' owners.
type localHub struct {
	URL    string
	emu    *localhub.Emulator
	owners map[string]hubemu.Principal
	tokens map[string]string // each owner's write token
}

// publish commits files to the space owner/name, as the hub's commit API does.
func (h *localHub) publish(t testing.TB, owner, name string, files map[string]string) {
	t.Helper()
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	_ = enc.Encode(map[string]any{"key": "header", "value": map[string]string{"summary": "publish " + name}})
	for path, content := range files {
		_ = enc.Encode(map[string]any{"key": "file", "value": map[string]string{
			"path": path, "content": base64.StdEncoding.EncodeToString([]byte(content)), "encoding": "base64"}})
	}
	if _, err := h.emu.Commit(context.Background(), h.owners[owner], owner+"/"+name, "main", &body); err != nil {
		t.Fatalf("publishing %s/%s: %v", owner, name, err)
	}
}

// fillerApps are n catalog entries by the community, in the hub's space record shape: listed in
// the store, never installed. They have no emoji: headless Chromium has no emoji font, and the
// screenshots would show empty boxes.
func fillerApps(n int) []map[string]any {
	topics := []string{"dance", "weather", "chess", "music", "storytelling", "yoga", "quiz", "pet", "timer", "translator"}
	var out []map[string]any
	for i := range n {
		topic := topics[i%len(topics)]
		owner := fmt.Sprintf("maker%d", i%7)
		out = append(out, map[string]any{
			"id": fmt.Sprintf("%s/%s_app_%d", owner, topic, i), "author": owner, "sdk": "static",
			"tags": []string{"robot_python_app", "static"},
			"cardData": map[string]any{
				"title":             fmt.Sprintf("%s companion %d", strings.ToUpper(topic[:1])+topic[1:], i),
				"short_description": fmt.Sprintf("A %s app for the robot, number %d", topic, i),
				"tags":              []string{"robot_python_app"},
			},
		})
	}
	return out
}

// localApp writes an app package that requires requires, in a temporary directory.
func localApp(t testing.TB, name string, requires ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	deps, _ := json.Marshal(append([]string{"robot-sdk"}, requires...))
	files := map[string]string{
		"pyproject.toml": fmt.Sprintf("[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n"+
			"[project]\nname = %q\nversion = \"1.0.0\"\ndependencies = %s\n\n[project.entry-points.robot_apps]\n%s = \"%s.main:App\"\n\n"+
			"[tool.setuptools]\npackages = [%q]\n", strings.ReplaceAll(name, "_", "-"), deps, name, name, name),
		name + "/__init__.py": "",
		name + "/main.py": "import threading\nfrom robot_sdk import Robot, RobotApp\n\n\nclass App(RobotApp):\n" +
			"    def run(self, robot: Robot, stop_event: threading.Event) -> None:\n        stop_event.wait()\n",
		"README.md": "---\ntitle: " + name + "\ntags:\n  - robot_python_app\n---\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// gatedIndex is a package index on loopback whose answers about project wait until the returned
// function is called: an install that needs project stays in its dependencies step until then.
func gatedIndex(t testing.TB, project string) (indexURL string, release func()) {
	t.Helper()
	idx := pyindex.New()
	t.Cleanup(idx.Close)
	idx.Publish(project, "1.0")
	target, _ := url.Parse(idx.URL())
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	gate := make(chan struct{})
	closed := false
	release = func() {
		if !closed {
			closed = true
			close(gate)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/"+pyindex.Normalize(project)+"/") {
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(release)
	return srv.URL + target.Path, release
}

// The dashboard as an owner uses it, in headless Chromium against a simulated robot and a local
// hub with 200 apps: browse and search the store, install from it and watch the log arrive, start
// an app and see the drawing move, read a crashed app's traceback, read why an install failed,
// reload during an install and see it resume, and see the page come back after a daemon restart.
// Each state is written as desktop and phone screenshots to docs/screenshots.
func TestDashboard(t *testing.T) {
	// Its own apps venv (the store must offer apps that other tests install into the shared one),
	// so that it runs in parallel with the tests of the shared one.
	t.Parallel()
	venv := ownVenv(t)
	ctx := browser(t)
	indexURL, releaseIndex := gatedIndex(t, "slowdep")
	spaces := []space{
		{owner: "pollen", name: "catalog_app", dir: testdataApp("catalog_app"),
			card: "title: Nodding head\nshort_description: Nods until asked to stop\ntags:\n  - robot_python_app"},
		{owner: "pollen", name: "crash_app", dir: testdataApp("crash_app"),
			card: "title: Crash test\nshort_description: Crashes as it starts, to show a traceback\ntags:\n  - robot_python_app"},
		{owner: "tinkerer", name: "slow_app", dir: localApp(t, "slow_app", "slowdep>=1"),
			card: "title: Slow starter\nshort_description: Needs a package from a slow index\ntags:\n  - robot_python_app"},
		{owner: "tinkerer", name: "secret_app", dir: localApp(t, "secret_app"), private: true,
			card: "title: Secret\nshort_description: Not published yet\ntags:\n  - robot_python_app"},
	}
	began := time.Now()
	hub := catalogHub(t, spaces, fillerApps(197))
	hubURL := hub.URL
	t.Logf("the hub: %.1f s", time.Since(began).Seconds())
	port := freePort(t)
	args := []string{"--hub-url", hubURL, "--index-url", indexURL}
	began = time.Now()
	d := startDaemon(t, daemonOptions{args: args, port: port, venv: venv})
	t.Logf("the daemon: %.1f s", time.Since(began).Seconds())

	steps := ctx
	must := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		// An install from the hub takes some 20 s on a busy 2-core machine.
		stepCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
		defer cancel()
		began := time.Now()
		defer func() { t.Logf("%s: %.1f s", what, time.Since(began).Seconds()) }()
		if err := chromedp.Do(stepCtx, actions...); err != nil {
			t.Fatalf("%s: %v\n(the page shows: error %q, job %q, log %q)", what, err,
				textOf(ctx, "#action-error"), textOf(ctx, "#job-status"), textOf(ctx, "#job-log"))
		}
	}
	search := func(q string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.querySelector("#store-search"); s.value = %q; s.dispatchEvent(new Event("input")); })()`, q))
	}

	must("opening the dashboard", chromedp.Navigate(d.loginURL()),
		waitText("#robot-state", "Awake"),
		waitText("#store-count", "200 apps on the hub"),
		waitText(`li[data-app="catalog_app"] .title`, "Nodding head"),
		waitText(`li[data-app="catalog_app"] .author`, "by pollen"),
		waitText(`li[data-app="catalog_app"] .description`, "Nods until asked to stop"),
	)
	screenshots(t, ctx, "store", "#store")

	// Search: words match title, name, author and description.
	must("searching the store", chromedp.SendKeys(chromedp.CSS("#store-search"), "nods"),
		waitText("#store-count", "1 of 200 apps match"))
	visible, _ := chromedp.Run(steps, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#store-list li:not([hidden])")].map((li) => li.dataset.app)`))
	if fmt.Sprint(visible) != "[catalog_app]" {
		t.Fatalf("searching nods shows %v, want [catalog_app]", visible)
	}
	must("searching by author", search("maker3 chess"), waitText("#store-count", "of 200 apps match"))
	if n := textOf(ctx, "#store-count"); n == "0 of 200 apps match" {
		t.Fatalf("searching an author and a topic matches nothing")
	}
	must("searching nods again", search("nods"), waitText("#store-count", "1 of 200 apps match"))
	screenshots(t, ctx, "search", "#store")

	// Install from the store; the log arrives as the job runs; the card is then marked installed.
	// The cards keep their columns when the job panel appears (they jumped to the next grid cell);
	// the store goes down as the installed list grows, which is no jump.
	const cardPlaces = `["robot", "current", "installed", "settings", "store"].map((id) => { const r = document.getElementById(id).getBoundingClientRect(); return id + "@" + Math.round(r.left + window.scrollX) + "," + Math.round(r.width); }).join(" ")`
	placesBefore, err := chromedp.Run(steps, chromedp.Evaluate[string](cardPlaces))
	if err != nil {
		t.Fatal(err)
	}
	must("installing from the store", clickEnabled(`li[data-app="catalog_app"] button.install`),
		chromedp.WaitVisible(chromedp.CSS("#job")),
		waitText("#job-log", "Cloning "+hubURL+"/spaces/pollen/catalog_app"),
		waitText("#job-status", "Done: installed catalog_app."),
		waitText(`#store-list li[data-app="catalog_app"] .actions`, "Installed"),
		waitText(`#apps li[data-app="catalog_app"]`, "catalog_app"),
	)
	if log := textOf(ctx, "#job-log"); !strings.Contains(log, "Installed catalog_app") {
		t.Errorf("the install log lacks the install's outcome:\n%s", log)
	}
	if placesAfter, _ := chromedp.Run(steps, chromedp.Evaluate[string](cardPlaces)); placesAfter != placesBefore {
		t.Errorf("the cards moved when the job panel appeared:\nbefore %s\nafter  %s", placesBefore, placesAfter)
	}
	// The revision installed shows beside the version (the version stays the same across pushes).
	if rev := textOf(ctx, `#apps li[data-app="catalog_app"] .revision`); !regexp.MustCompile(`^ @[0-9a-f]{7}$`).MatchString(rev) {
		t.Errorf("the installed app's revision shows as %q", rev)
	}
	screenshots(t, ctx, "installed", "#job")

	// The space moves on: a check for updates marks the app, and Update brings the new revision.
	hub.publish(t, "pollen", "catalog_app", map[string]string{"CHANGELOG.md": "1.0.1: nods faster\n"})
	must("checking for updates", closeJobPanel(), chromedp.Click(chromedp.CSS("#check-updates")),
		waitText("#updates-status", "1 app has an update: catalog_app"),
		waitText(`#apps li[data-app="catalog_app"] .update-available`, "update available"),
		clickEnabled(`#apps li[data-app="catalog_app"] button.update`),
		waitText("#job-title", "Updating catalog_app"),
		waitText("#job-status", "Done: updated catalog_app."),
		waitJS("the update mark to go", `!document.querySelector('#apps li[data-app="catalog_app"] .update-available')`),
		waitText("#updates-status", "Everything is up to date."),
		// Nothing changed since: Update is off; the last update shows when and to what.
		waitJS("Update to be disabled when nothing changed", `document.querySelector('#apps li[data-app="catalog_app"] button.update').disabled`),
		waitText(`#apps li[data-app="catalog_app"] .last-update`, "Updated to "))

	// Start the app: the drawing of the head follows the robot as it nods.
	must("starting the app", search(""), clickEnabled(`#apps li[data-app="catalog_app"] button.start`),
		waitText("#current-state", "running"),
	)
	first, err := chromedp.Run(steps, chromedp.Evaluate[string](`document.querySelector("#svg-eyes").getAttribute("transform") || ""`))
	if err != nil {
		t.Fatal(err)
	}
	must("seeing the drawing move", waitJS("the head drawing to move", fmt.Sprintf(`(document.querySelector("#svg-eyes").getAttribute("transform") || "") !== %q`, first)))
	screenshots(t, ctx, "running", "#robot")
	if head := textOf(ctx, "#robot-head"); strings.Count(head, "°") != 3 {
		t.Errorf("the head's angles show without units: %q", head)
	}
	readmeImage(t, ctx)
	must("stopping the app", chromedp.Click(chromedp.CSS("#stop-btn")), waitText("#current-name", "none"))

	// A crashed app: its cause and its Python traceback.
	var created struct {
		JobID string `json:"job_id"`
	}
	d.call("POST", "/api/apps/install", map[string]string{"url": hubURL + "/spaces/pollen/crash_app"}, &created)
	if j := d.waitJob(created.JobID); j.Status != "done" {
		t.Fatalf("installing crash_app: %s %v", j.Status, j.Error)
	}
	must("reading the crash", clickEnabled(`#apps li[data-app="crash_app"] button.start`),
		waitText("#current-state", "error"),
		chromedp.WaitVisible(chromedp.CSS("#crash")),
		waitText("#current-error", "App exited with code 1"),
		waitText("#current-error", "Traceback (most recent call last):"),
		waitText("#current-error", "RuntimeError: crash_app cannot start: calibration file missing"),
		waitText("#app-log .stderr", "Traceback"),
		// The error is the traceback's last line: the view shows its end, and Restart runs it again.
		waitJS("the crash view to show the traceback's end", `(() => { const p = document.querySelector("#current-error"); return p.scrollTop + p.clientHeight >= p.scrollHeight - 2; })()`),
		waitJS("Restart to be enabled after the crash", `!document.querySelector("#restart-btn").disabled`),
	)
	screenshots(t, ctx, "crashed", "#current")
	startedRx := regexp.MustCompile(`msg="app started".* app=crash_app `)
	started := func() int { return len(startedRx.FindAllStringIndex(d.log.String(), -1)) }
	runs := started()
	must("restarting the crashed app", clickEnabled("#restart-btn"))
	for deadline := time.Now().Add(30 * time.Second); started() <= runs && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // polls the daemon's log for the new run, up to the deadline
	}
	if runs == 0 || started() <= runs || textOf(ctx, "#action-error") != "" {
		t.Errorf("Restart after the crash: runs before %d, after %d; the page says %q", runs, started(), textOf(ctx, "#action-error"))
	}

	// An app with its own page: the settings link to it, pointed at the host serving the dashboard.
	d.install("webui_app")
	must("the running app's page", clickEnabled(`#apps li[data-app="webui_app"] button.start`),
		waitText("#current-state", "running"),
		chromedp.WaitVisible(chromedp.CSS("#app-page-link")),
		chromedp.WaitVisible(chromedp.CSS("#current-settings")))
	href, _ := chromedp.Run(steps, chromedp.Evaluate[string](`document.querySelector("#app-page-link").href`))
	if href != webUIAppURL+"/" {
		t.Errorf("the app page link is %q, want %s/", href, webUIAppURL)
	}
	must("stopping the web UI app", chromedp.Click(chromedp.CSS("#stop-btn")), waitText("#current-name", "none"),
		waitJS("the app page link to go", `document.querySelector("#app-page").hidden`))

	// An install that pip cannot complete: the reason in plain words, the full log one click away.
	broken := localApp(t, "broken_dep_app", "missing-dep>=1")
	must("a failed install", closeJobPanel(), chromedp.Evaluate[chromedp.Void](`document.querySelector("#store details").open = true`),
		chromedp.SendKeys(chromedp.CSS("#install-url"), broken),
		closeJobPanel(), chromedp.Click(chromedp.CSS("#install-btn")),
		waitText("#job-status", "Failed."),
		waitText("#job-summary", "needs the Python package missing-dep>=1, which the package index does not have"),
		chromedp.Click(chromedp.CSS("#job-details summary")),
		chromedp.WaitVisible(chromedp.CSS("#job-log")),
		waitText("#job-log", "No matching distribution found for missing-dep>=1"),
	)
	if _, ok := d.list()["broken_dep_app"]; ok {
		t.Fatal("the failed install left broken_dep_app installed")
	}
	screenshots(t, ctx, "install-failed", "#job")

	// A private space (not in the store, 404 to anyone else) installs with its owner's token.
	must("installing a private space", closeJobPanel(), chromedp.SendKeys(chromedp.CSS("#private-space"), "tinkerer/secret_app"),
		chromedp.SendKeys(chromedp.CSS("#private-token"), hub.tokens["tinkerer"]),
		chromedp.Click(chromedp.CSS("#private-btn")),
		waitText("#job-status", "Done: installed secret_app."),
		waitJS("the token field emptied", `document.querySelector("#private-token").value === ""`))
	if strings.Contains(d.log.String(), hub.tokens["tinkerer"]) || strings.Contains(textOf(ctx, "#job-log"), hub.tokens["tinkerer"]) {
		t.Fatal("the hub token shows in the daemon's log or the job's")
	}

	// Reload during an install: the page finds the job again, with its log so far, and follows it
	// to the end. The index holds slowdep until the reloaded page shows the job in progress.
	must("installing slow_app", search("slow"), clickEnabled(`li[data-app="slow_app"] button.install`),
		waitText("#job-status", "installing its dependencies"),
		chromedp.Reload(),
		waitText("#job-title", "Installing Slow starter"),
		waitText("#job-log", "Installing dependencies: slowdep"),
		waitText("#job-status", "installing its dependencies"),
	)
	screenshots(t, ctx, "install-resumed", "#job")
	releaseIndex()
	must("the resumed install finishing", waitText("#job-status", "Done: installed slow_app."),
		waitText(`#apps li[data-app="slow_app"]`, "slow_app"))

	// Dark theme.
	must("dark theme", colorScheme("dark"))
	bg, _ := chromedp.Run(steps, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
	if bg != "rgb(17, 20, 24)" {
		t.Errorf("body background in the dark theme: %s", bg)
	}
	screenshots(t, ctx, "dark", "#robot")
	must("light theme", colorScheme(""))

	// The daemon goes away: the page says so; it comes back on the same port: the page reconnects.
	d.stop()
	must("the daemon unreachable", chromedp.WaitVisible(chromedp.CSS("#offline")))
	screenshots(t, ctx, "unreachable", "body")
	startDaemon(t, daemonOptions{dataDir: d.dataDir, args: args, port: port, venv: venv})
	must("reconnecting", chromedp.WaitNotVisible(chromedp.CSS("#offline")),
		waitText("#robot-state", "Awake"),
		waitText(`#apps li[data-app="slow_app"]`, "slow_app"),
		waitText("#store-count", "200 apps on the hub"))
}
