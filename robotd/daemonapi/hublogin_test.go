package daemonapi_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/robothub/robothub/internal/testkit/apitest"
	"github.com/robothub/robothub/robotd/daemonapi"
)

const goodToken = "hf_good_0123456789"

// fakeHub answers whoami for goodToken (user alice) and refuses any other token, as the hub does.
func fakeHub(t *testing.T) (url string, calls *atomic.Int32) {
	t.Helper()
	calls = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/whoami-v2" {
			http.NotFound(w, r)
			return
		}
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+goodToken {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error": "Invalid credentials in Authorization header"}`))
			return
		}
		_, _ = w.Write([]byte(`{"type": "user", "id": "1", "name": "alice"}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, calls
}

func newLogin(t *testing.T, hubURL, dataDir string) (*daemonapi.Handlers, http.Handler) {
	t.Helper()
	h := daemonapi.New(daemonapi.Config{Apps: &fakeApps{}, Robot: &fakeRobot{}, DataDir: dataDir, HubURL: hubURL})
	return h, routes(h)
}

func TestSaveTokenLogsTheRobotIn(t *testing.T) {
	hubURL, _ := fakeHub(t)
	dir := t.TempDir()
	h, mux := newLogin(t, hubURL, dir)
	if code, body := call(t, mux, "GET", "/api/hf-auth/status", ""); code != http.StatusOK || body["is_logged_in"] != false {
		t.Fatalf("status before: %d %v", code, body)
	}
	code, body := call(t, mux, "POST", "/api/hf-auth/save-token", `{"token": " `+goodToken+` "}`)
	if code != http.StatusOK || body["status"] != "success" || body["username"] != "alice" {
		t.Fatalf("save-token: %d %v", code, body)
	}
	p := filepath.Join(dir, "hub-token")
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the kept token: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	if h.HubToken() != goodToken {
		t.Fatalf("HubToken() = %q, want the saved token", h.HubToken())
	}
	if code, body := call(t, mux, "GET", "/api/hf-auth/status", ""); code != http.StatusOK || body["is_logged_in"] != true || body["username"] != "alice" {
		t.Fatalf("status after: %d %v", code, body)
	}
	if _, body := call(t, mux, "POST", "/api/hf-auth/refresh-relay", ""); body["token_available"] != true || body["status"] != "unavailable" {
		t.Fatalf("refresh-relay: %v", body)
	}

	if code, body := call(t, mux, "DELETE", "/api/hf-auth/token", ""); code != http.StatusOK || body["status"] != "success" {
		t.Fatalf("delete: %d %v", code, body)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("the token file after a logout: %v", err)
	}
	if _, body := call(t, mux, "GET", "/api/hf-auth/status", ""); body["is_logged_in"] != false || body["username"] != nil {
		t.Fatalf("status after logout: %v", body)
	}
	// Logging out twice is no error.
	if code, _ := call(t, mux, "DELETE", "/api/hf-auth/token", ""); code != http.StatusOK {
		t.Fatalf("second delete: %d", code)
	}
}

func TestSaveTokenRefusedKeepsTheSavedOne(t *testing.T) {
	hubURL, calls := fakeHub(t)
	dir := t.TempDir()
	h, mux := newLogin(t, hubURL, dir)
	if code, body := call(t, mux, "POST", "/api/hf-auth/save-token", `{"token": "`+goodToken+`"}`); code != http.StatusOK {
		t.Fatalf("save-token: %d %v", code, body)
	}
	bad := "hf_wrong_secret_9876543210"
	code, body := call(t, mux, "POST", "/api/hf-auth/save-token", `{"token": "`+bad+`"}`)
	apitest.WantDetail(t, code, body, http.StatusBadRequest, "the hub refused the token: ")
	if d, _ := body["detail"].(string); strings.Contains(d, bad) {
		t.Fatalf("the answer shows the token: %q", d)
	}
	if h.HubToken() != goodToken {
		t.Fatalf("a refused token replaced the saved one: %q", h.HubToken())
	}

	n := calls.Load()
	for _, c := range []struct{ body, detail string }{
		{`{}`, "body: field token is required: a hub access token"},
		{`{"token": "  "}`, "body: field token is required"},
		{`{"token": 42}`, "body: field token: expected string"},
		{`[`, "body: invalid JSON"},
	} {
		code, body := call(t, mux, "POST", "/api/hf-auth/save-token", c.body)
		apitest.WantDetail(t, code, body, http.StatusUnprocessableEntity, c.detail)
	}
	if calls.Load() != n {
		t.Fatalf("malformed bodies reached the hub (%d calls)", calls.Load()-n)
	}
	if h.HubToken() != goodToken {
		t.Fatalf("a malformed body changed the saved token: %q", h.HubToken())
	}
}

func TestSaveTokenWithoutAHubOrADataDir(t *testing.T) {
	_, mux := newLogin(t, "", t.TempDir())
	code, body := call(t, mux, "POST", "/api/hf-auth/save-token", `{"token": "`+goodToken+`"}`)
	apitest.WantDetail(t, code, body, http.StatusBadRequest, "this daemon has no hub (--hub-url none)")

	hubURL, _ := fakeHub(t)
	h, mux := newLogin(t, hubURL, "")
	code, body = call(t, mux, "POST", "/api/hf-auth/save-token", `{"token": "`+goodToken+`"}`)
	apitest.WantDetail(t, code, body, http.StatusServiceUnavailable, "this daemon keeps no data directory: the token cannot be saved")
	if h.HubToken() != "" {
		t.Fatalf("HubToken() = %q without a data dir", h.HubToken())
	}
}

// A kept token the hub no longer accepts: the robot is logged out, and the answer says why
// without the token.
func TestAuthStatusWithARevokedToken(t *testing.T) {
	hubURL, _ := fakeHub(t)
	dir := t.TempDir()
	revoked := "hf_revoked_token_555"
	if err := os.WriteFile(filepath.Join(dir, "hub-token"), []byte(revoked+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, mux := newLogin(t, hubURL, dir)
	code, body := call(t, mux, "GET", "/api/hf-auth/status", "")
	e, _ := body["error"].(string)
	if code != http.StatusOK || body["is_logged_in"] != false || e == "" || strings.Contains(e, revoked) {
		t.Fatalf("status: %d %v; want logged out with an error that hides the token", code, body)
	}
}

func TestOAuthAndRelayRoutesSayThereAreNone(t *testing.T) {
	_, mux := newLogin(t, "", "")
	for _, path := range []string{"/api/hf-auth/oauth/start"} {
		code, body := call(t, mux, "GET", path, "")
		apitest.WantDetail(t, code, body, http.StatusServiceUnavailable, "OAuth login is not configured on this daemon: log the robot in with a hub token (POST /api/hf-auth/save-token)")
	}
	code, body := call(t, mux, "POST", "/api/hf-auth/oauth/device/start", "")
	apitest.WantDetail(t, code, body, http.StatusServiceUnavailable, "OAuth login is not configured")
	if _, body := call(t, mux, "GET", "/api/hf-auth/oauth/configured", ""); body["configured"] != false {
		t.Fatalf("configured: %v", body)
	}
	_, body = call(t, mux, "GET", "/api/hf-auth/oauth/status/abc", "")
	if m, _ := body["message"].(string); body["status"] != "not_found" || !strings.HasPrefix(m, "no OAuth session abc: ") {
		t.Fatalf("session status: %v", body)
	}
	code, body = call(t, mux, "DELETE", "/api/hf-auth/oauth/session/abc", "")
	apitest.WantDetail(t, code, body, http.StatusNotFound, "Session not found")
	if _, body := call(t, mux, "GET", "/api/hf-auth/relay-status", ""); body["state"] != "unavailable" || body["is_connected"] != false {
		t.Fatalf("relay-status: %v", body)
	}
	if _, body := call(t, mux, "GET", "/api/hf-auth/central-robot-status", ""); body["available"] != false || body["reason"] != "no_central_relay" {
		t.Fatalf("central-robot-status: %v", body)
	}
	if _, body := call(t, mux, "POST", "/api/hf-auth/refresh-relay", ""); body["token_available"] != false {
		t.Fatalf("refresh-relay without a login: %v", body)
	}
}
