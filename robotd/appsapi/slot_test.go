package appsapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/fault"
)

func TestTheAppSlot(t *testing.T) {
	d := serve(t, newFakeApps("hello", "other"), "", "")
	if code, data := d.Call(t, "GET", "/api/apps/current-app-status", ""); code != http.StatusOK || strings.TrimSpace(string(data)) != "null" {
		t.Fatalf("status with no app: %d %s, want null", code, data)
	}
	d.Refused(t, "POST", "/api/apps/stop-current-app", "", 400, "No app is currently running")
	d.Refused(t, "POST", "/api/apps/restart-current-app", "", 400, "No app is currently running")
	d.Refused(t, "POST", "/api/apps/start-app/nope", "", 404, "App nope is not installed")

	code, st := d.Object(t, "POST", "/api/apps/start-app/hello", "")
	if info, _ := st["info"].(map[string]any); code != http.StatusOK || st["state"] != "running" || info["name"] != "hello" {
		t.Fatalf("start: %d %v", code, st)
	}
	d.Refused(t, "POST", "/api/apps/start-app/other/no-evict", "", 400, "An app is already running")
	if _, st := d.Object(t, "GET", "/api/apps/current-app-status", ""); st["state"] != "running" {
		t.Fatalf("status after a refused start: %v", st)
	}
	code, st = d.Object(t, "POST", "/api/apps/restart-current-app", "")
	if info, _ := st["info"].(map[string]any); code != http.StatusOK || info["name"] != "hello" {
		t.Fatalf("restart: %d %v", code, st)
	}
	if code, data := d.Call(t, "POST", "/api/apps/stop-current-app", ""); code != http.StatusOK || strings.TrimSpace(string(data)) != "null" {
		t.Fatalf("stop: %d %s, want 200 null", code, data)
	}
	if _, data := d.Call(t, "GET", "/api/apps/current-app-status", ""); strings.TrimSpace(string(data)) != "null" {
		t.Fatalf("status after stop: %s", data)
	}
}

func TestCurrentAppLogs(t *testing.T) {
	d := serve(t, newFakeApps("hello"), "", "")
	if code, _ := readEvents(t, d, "/api/apps/current-app-logs"); code != http.StatusNoContent {
		t.Fatalf("logs with no run: %d, want 204 (an EventSource stops reconnecting)", code)
	}
	d.Call(t, "POST", "/api/apps/start-app/hello", "")
	out, _ := d.apps.Output()
	out.(*fakeOutput).add(false, apps.OutputLine{Stream: "stdout", Line: "hello!"})
	go func() {
		time.Sleep(20 * time.Millisecond)
		out.(*fakeOutput).add(false, apps.OutputLine{Stream: "stderr", Line: "bye"})
		d.apps.Stop()
	}()
	code, events := readEvents(t, d, "/api/apps/current-app-logs")
	if code != http.StatusOK || len(events) != 3 {
		t.Fatalf("logs: %d %v", code, events)
	}
	var line apps.OutputLine
	if events[0].name != "log" || json.Unmarshal([]byte(events[0].data), &line) != nil || line != (apps.OutputLine{Stream: "stdout", Line: "hello!"}) {
		t.Fatalf("first event %v", events[0])
	}
	if events[1].name != "log" || !strings.Contains(events[1].data, `"bye"`) {
		t.Fatalf("second event %v", events[1])
	}
	// A stopped app's run ends with null: it is no current app any more.
	if events[2] != (event{"end", "null"}) {
		t.Fatalf("last event %v, want end null", events[2])
	}
}

func TestStartupApp(t *testing.T) {
	d := serve(t, newFakeApps("hello"), "", "")
	get := func() any {
		t.Helper()
		code, out := d.Object(t, "GET", "/api/apps/startup-app", "")
		v, ok := out["startup_app"]
		if code != http.StatusOK || !ok {
			t.Fatalf("startup-app: %d %v", code, out)
		}
		return v
	}
	if v := get(); v != nil {
		t.Fatalf("startup_app %v, want null", v)
	}
	if code, out := d.Object(t, "PUT", "/api/apps/startup-app", `{"startup_app": " hello "}`); code != http.StatusOK || out["startup_app"] != "hello" {
		t.Fatalf("set: %d %v", code, out)
	}
	for _, c := range []struct {
		body   string
		status int
		text   string
	}{
		{``, 422, "body: a JSON object is required"},
		{`{"startup_app": 3}`, 422, "body: field startup_app: expected an installed app's name, or null to clear"},
		{`{"startup_app": "nope"}`, 400, "App nope is not installed"},
		{`[]`, 422, "body: "},
	} {
		d.Refused(t, "PUT", "/api/apps/startup-app", c.body, c.status, c.text)
	}
	if v := get(); v != "hello" {
		t.Fatalf("startup_app after refused requests: %v", v)
	}
	// {} clears, as null does: the anchor's model defaults the field to null.
	if code, out := d.Object(t, "PUT", "/api/apps/startup-app", `{}`); code != http.StatusOK || out["startup_app"] != nil {
		t.Fatalf("clear: %d %v", code, out)
	}
	if v := get(); v != nil {
		t.Fatalf("startup_app after clearing: %v", v)
	}
}

func TestListAndCatalog(t *testing.T) {
	d := serve(t, newFakeApps(), "", "")
	if code, data := d.Call(t, "GET", "/api/apps/list", ""); code != http.StatusOK || strings.TrimSpace(string(data)) != "[]" {
		t.Fatalf("list with nothing installed: %d %s, want []", code, data)
	}
	if code, data := d.Call(t, "GET", "/api/apps/list-available", ""); code != http.StatusOK || strings.TrimSpace(string(data)) != "[]" {
		t.Fatalf("list-available of an empty catalog: %d %s, want []", code, data)
	}
	d.apps.catalog = []apps.AppInfo{{Name: "alice/hello", SourceKind: "hf_space"}}
	code, data := d.Call(t, "GET", "/api/apps/list-available/hf_space?refresh=true", "")
	var list []apps.AppInfo
	if code != http.StatusOK || json.Unmarshal(data, &list) != nil || len(list) != 1 || list[0].Name != "alice/hello" {
		t.Fatalf("list-available/hf_space: %d %s", code, data)
	}
	if asked := d.apps.asked(); asked[len(asked)-1] != "list-available hf_space" || d.apps.refreshes != 1 {
		t.Fatalf("asked %q with %d refreshes", asked, d.apps.refreshes)
	}
	d.Refused(t, "GET", "/api/apps/list-available?refresh=please", "", 422, "refresh: must be true or false")
	if d.apps.refreshes != 1 {
		t.Fatalf("a refused request refreshed the catalog")
	}
	// The hub down with the installed apps known: those are listed; with nothing: the hub's error.
	d.apps.catalogErr = fault.Unavailablef("the app catalog: the hub http://hub.test cannot be reached")
	if code, data := d.Call(t, "GET", "/api/apps/list-available", ""); code != http.StatusOK || !strings.Contains(string(data), "alice/hello") {
		t.Fatalf("list-available with the hub down: %d %s", code, data)
	}
	d.apps.catalog = nil
	d.Refused(t, "GET", "/api/apps/list-available", "", 503, "the hub http://hub.test cannot be reached")
}

func TestCheckUpdates(t *testing.T) {
	d := serve(t, newFakeApps("hello"), "", "")
	code, out := d.Object(t, "GET", "/api/apps/check-updates?force=true", "")
	if list, ok := out["apps_with_updates"].([]any); code != http.StatusOK || !ok || len(list) != 0 || out["apps_checked"] != 1.0 {
		t.Fatalf("check-updates: %d %v; want apps_with_updates [] (never null)", code, out)
	}
	if asked := d.apps.asked(); asked[len(asked)-1] != "check-updates force=true" {
		t.Fatalf("asked %q", asked)
	}
	d.Refused(t, "GET", "/api/apps/check-updates?force=2x", "", 422, "force: must be true or false")
}

func TestInstallPrivateSpace(t *testing.T) {
	d := serve(t, newFakeApps(), "http://hub.test", "")
	d.Refused(t, "POST", "/api/apps/install-private-space", `{}`, 422, "body: field space_id is required: <user>/<space> on the daemon's hub")
	d.Refused(t, "POST", "/api/apps/install-private-space", `{"space_id": "a b"}`, 422, `space_id "a b": expected <user>/<space>`)
	// No token in the request and no hub login: 401 naming what to set.
	d.Refused(t, "POST", "/api/apps/install-private-space", `{"space_id": "alice/secret"}`, 401, apps.ErrNoHubToken.Error())
	if asked := d.apps.asked(); len(asked) != 0 {
		t.Fatalf("refused requests reached the manager: %q", asked)
	}
	code, data := d.Call(t, "POST", "/api/apps/install-private-space", `{"space_id": "alice/secret", "token": "hf_request_token"}`)
	if code != http.StatusOK || strings.Contains(string(data), "hf_request_token") {
		t.Fatalf("install with a token: %d %s", code, data)
	}
	if asked := d.apps.asked(); asked[0] != "private alice/secret hf_request_token" {
		t.Fatalf("asked %q", asked)
	}
	// Without one, the robot's hub login is used.
	d = serve(t, newFakeApps(), "http://hub.test", "hf_login_token")
	if code, _ := d.Call(t, "POST", "/api/apps/install-private-space", `{"space_id": "alice/secret"}`); code != http.StatusOK {
		t.Fatalf("install with the hub login: %d", code)
	}
	if asked := d.apps.asked(); asked[0] != "private alice/secret hf_login_token" {
		t.Fatalf("asked %q", asked)
	}
}

func TestSessions(t *testing.T) {
	d := serve(t, newFakeApps(), "", "")
	code, out := d.Object(t, "POST", "/api/sessions", `{"pid": 42, "client": "robot_sdk/1.0"}`)
	id, _ := out["id"].(string)
	if code != http.StatusOK || id == "" || out["client"] != "robot_sdk/1.0" {
		t.Fatalf("open: %d %v", code, out)
	}
	d.apps.mu.Lock()
	req := d.apps.sessions[id]
	d.apps.mu.Unlock()
	// Over loopback the PID names a process on this machine; the peer is the client's key.
	if req != (apps.SessionRequest{PID: 42, Local: true, Client: "robot_sdk/1.0", Peer: "peer"}) {
		t.Fatalf("the manager was asked for %+v", req)
	}
	// An empty body opens a session too: the SDK's first versions sent none.
	if code, _ := d.Object(t, "POST", "/api/sessions", ""); code != http.StatusOK {
		t.Fatalf("open without a body: %d", code)
	}
	d.Refused(t, "POST", "/api/sessions", `{"pid": "42"}`, 422, "body: field pid: expected int")
	if code, out := d.Object(t, "POST", "/api/sessions/"+id+"/heartbeat", ""); code != http.StatusOK || out["id"] != id {
		t.Fatalf("heartbeat: %d %v", code, out)
	}
	if code, out := d.Object(t, "DELETE", "/api/sessions/"+id, ""); code != http.StatusOK || out["status"] != "closed" {
		t.Fatalf("close: %d %v", code, out)
	}
	d.Refused(t, "POST", "/api/sessions/"+id+"/heartbeat", "", 404, "Session "+id+" not found")
	d.Refused(t, "DELETE", "/api/sessions/"+id, "", 404, "Session "+id+" not found")
}
