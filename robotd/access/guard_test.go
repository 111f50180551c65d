package access

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// The scopes of the routes an app needs (the public SDK's) and of those it must not have.
func TestScopeOf(t *testing.T) {
	for pattern, want := range map[string]Scope{
		"GET /api/state/full":               ScopeRobot,
		"POST /api/move/goto":               ScopeRobot,
		"POST /api/motors/set_mode/{mode}":  ScopeRobot,
		"GET /api/kinematics/urdf":          ScopeRobot,
		"POST /api/sessions":                ScopeRobot,
		"DELETE /api/sessions/{session_id}": ScopeRobot,
		"POST /api/media/wobbling/enable":   ScopeRobot,
		"GET /api/media/tracking/face":      ScopeRobot,
		"GET /api/daemon/status":            ScopeRobot,
		"GET /api/daemon/robot-name":        ScopeRobot,
		"GET /api/camera/frame":             ScopeMedia,
		"POST /api/audio/push_sample":       ScopeMedia,
		"POST /api/media/webrtc/offer":      ScopeMedia,
		"GET /api/media/ipc":                ScopeMedia,
		"POST /api/volume/set":              ScopeMedia,
		"POST /api/apps/install":            ScopeApps,
		"GET /api/apps/list":                ScopeApps,
		"PUT /api/apps/startup-app":         ScopeApps,
		"POST /api/daemon/robot-name":       ScopeDaemon,
		"POST /api/daemon/restart":          ScopeDaemon,
		"POST /api/hf-auth/save-token":      ScopeDaemon,
		"GET /api/hf-auth/status":           ScopeDaemon,
		"POST /api/some-route-added-later":  ScopeDaemon, // the owner's until given a scope
		"/api/":                             0,           // the unknown route's 404
		"GET /healthz":                      0,
		"GET /login":                        0,
	} {
		if got := ScopeOf(pattern); got != want {
			t.Errorf("ScopeOf(%q) = %s, want %s", pattern, got, want)
		}
	}
	if AppScopes&(ScopeApps|ScopeDaemon) != 0 || OwnerScopes.String() != "robot, media, apps, daemon" {
		t.Errorf("app scopes %s, owner scopes %s", AppScopes, OwnerScopes)
	}
}

// routes is a small API behind the guard, as robotd's routes.go lays its own out.
func routes() *http.ServeMux {
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }
	mux.HandleFunc("GET /api/state/full", ok)
	mux.HandleFunc("POST /api/apps/install", ok)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	return mux
}

func serve(h http.Handler, method, path string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "http://127.0.0.1:8000"+path, nil)
	req.RemoteAddr = "127.0.0.1:40000"
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// An app's token works for its scopes while the app runs, and not once it is revoked; no
// credential is no one, whatever the address.
func TestTokensAndTheirScopes(t *testing.T) {
	const owner = "owner-token-0123456789abcdefghij"
	g := New(Config{Token: owner, UID: 1000})
	h := g.Handler(routes())
	app, revoke := g.MintAppToken("coop_app")
	for _, c := range []struct {
		method, path, token string
		want                int
		detail              string
	}{
		{"GET", "/api/state/full", "", 401, "Authorization: Bearer"},
		{"GET", "/api/state/full", "wrong", 401, "not this daemon's"},
		{"GET", "/api/state/full", owner, 200, ""},
		{"POST", "/api/apps/install", owner, 200, ""},
		{"GET", "/api/state/full", app, 200, ""},
		{"POST", "/api/apps/install", app, 403, `(app coop_app, by its token) lacks the scope \"apps\"`},
		{"GET", "/api/unknown", app, 404, ""},
	} {
		var header []string
		if c.token != "" {
			header = []string{"Authorization", "Bearer " + c.token}
		}
		rec := serve(h, c.method, c.path, header...)
		if rec.Code != c.want || !strings.Contains(rec.Body.String(), c.detail) {
			t.Errorf("%s %s with %q: %d %s, want %d with %q", c.method, c.path, c.token, rec.Code, rec.Body, c.want, c.detail)
		}
	}
	revoke()
	if rec := serve(h, "GET", "/api/state/full", "Authorization", "Bearer "+app); rec.Code != 401 {
		t.Errorf("a revoked app token: %d", rec.Code)
	}
	revoke() // twice is harmless
}

// BenchmarkTokenCheck is what the guard adds to a request: the host and cross-site checks, the
// credential (the owner's token, compared in constant time; an app's token, looked up by its
// SHA-256; the login cookie, an HMAC), and the route's scope (a second ServeMux lookup). The route
// itself does nothing: the figure is the guard's whole cost. p99-µs is the 99th percentile of one
// request through the handler.
//
//	go test -run '^$' -bench TokenCheck -count 3 ./robotd/access/
func BenchmarkTokenCheck(b *testing.B) {
	const owner = "owner-token-0123456789abcdefghij"
	g := New(Config{Token: owner, UID: 1000})
	app, _ := g.MintAppToken("coop_app")
	for i := range 50 { // other apps' runs: the lookup is a map's
		g.MintAppToken("app" + string(rune('a'+i%26)))
	}
	mux := routes()
	guarded := g.Handler(mux)
	cookie := "robot_daemon_session=" + g.sessionValue()
	for _, c := range []struct {
		name    string
		h       http.Handler
		headers []string
	}{
		{"no guard", mux, nil},
		{"owner token", guarded, []string{"Authorization", "Bearer " + owner}},
		{"app token", guarded, []string{"Authorization", "Bearer " + app}},
		{"login cookie", guarded, []string{"Cookie", cookie}},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", "http://127.0.0.1:8000/api/state/full", nil)
			req.RemoteAddr = "127.0.0.1:40000"
			for i := 0; i+1 < len(c.headers); i += 2 {
				req.Header.Set(c.headers[i], c.headers[i+1])
			}
			var lat []time.Duration
			for b.Loop() {
				rec := httptest.NewRecorder()
				start := time.Now()
				c.h.ServeHTTP(rec, req)
				lat = append(lat, time.Since(start))
				if rec.Code != 200 {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*99/100])/float64(time.Microsecond), "p99-µs")
		})
	}
}
