package actions

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeDaemon answers the two robot daemon calls robot-update makes, as docs/robot-api.md documents
// them, and records the updates asked for.
type fakeDaemon struct {
	mu      sync.Mutex
	apps    string // the JSON of GET /api/apps/list
	updates []map[string]string
	auth    []string
	refuse  bool
	// refreshed are the catalog refreshes asked for (list-available?refresh=true)
	refreshed int
}

func (f *fakeDaemon) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	w.Header().Set("Content-Type", "application/json")
	switch r.Method + " " + r.URL.Path {
	case "GET /api/apps/list":
		io.WriteString(w, f.apps)
	case "GET /api/apps/list-available/hf_space":
		if r.URL.Query().Get("refresh") == "true" {
			f.refreshed++
		}
		io.WriteString(w, `[]`)
	case "POST /api/apps/update":
		if f.refuse {
			w.WriteHeader(http.StatusUnprocessableEntity)
			io.WriteString(w, `{"detail":"revision: x is not a git commit"}`)
			return
		}
		var body map[string]string
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.updates = append(f.updates, body)
		io.WriteString(w, `{"job_id":"job-`+string(rune('0'+len(f.updates)))+`"}`)
	default:
		http.NotFound(w, r)
	}
}

const installedApps = `[
 {"name":"dance","extra":{"source":"http://hub.local:7861/spaces/alice/dance-app","revision":"ce9a4674fa833a68d5a73ec355f0ea95eedd60b7"}},
 {"name":"dance_ui","extra":{"source":"http://hub.local:7861/spaces/alice/dance-app","revision":"ce9a4674fa833a68d5a73ec355f0ea95eedd60b7"}},
 {"name":"other","extra":{"source":"https://git.example.com/alice/dance-app.git"}},
 {"name":"local","extra":{"source":"/home/alice/apps/dance-app"}}
]`

func TestRobotUpdate(t *testing.T) {
	fd := &fakeDaemon{apps: installedApps}
	daemon := httptest.NewServer(fd)
	defer daemon.Close()
	url := receiver(t, NewBuilder(Config{DaemonToken: "robot-token", RobotUpdate: RobotUpdate}), "robot=robot-update:"+daemon.URL)

	push := `{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"space","name":"alice/dance-app","headSha":"575db8b7a51b6f85eb06eee540738584589f131c"}}`
	status, body := deliver(t, url+"/webhooks/robot", push)
	if status != 202 || body["message"] != "updating dance, dance_ui to 575db8b7a51b6f85eb06eee540738584589f131c" {
		t.Fatalf("push to an installed space: %d %v", status, body)
	}
	fd.mu.Lock()
	if len(fd.updates) != 1 || fd.updates[0]["url"] != "http://hub.local:7861/spaces/alice/dance-app" || fd.updates[0]["revision"] != "575db8b7a51b6f85eb06eee540738584589f131c" {
		t.Errorf("updates asked of the daemon: %v", fd.updates)
	}
	for _, a := range fd.auth {
		if a != "Bearer robot-token" {
			t.Errorf("daemon call without the API token: %q", a)
		}
	}
	fd.mu.Unlock()

	ignored := map[string]string{
		"not a push":           `{"event":{"action":"create","scope":"discussion"},"repo":{"type":"space","name":"alice/dance-app"}}`,
		"config change":        `{"event":{"action":"update","scope":"repo.config"},"repo":{"type":"space","name":"alice/dance-app"}}`,
		"a model":              `{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"model","name":"alice/dance-app"}}`,
		"space not installed":  `{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"space","name":"bob/dance-app"}}`,
		"suffix is not enough": `{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"space","name":"ce/dance-app"}}`,
	}
	for name, payload := range ignored {
		status, body := deliver(t, url+"/webhooks/robot", payload)
		if msg, _ := body["message"].(string); status != 200 || !strings.HasPrefix(msg, "ignored: ") {
			t.Errorf("%s: %d %v", name, status, body)
		}
	}
	fd.mu.Lock()
	if len(fd.updates) != 1 {
		t.Errorf("ignored events asked for updates: %v", fd.updates)
	}
	// A push to a space no app comes from may be a new app: the robot's app store lists it afresh.
	if fd.refreshed != 2 {
		t.Errorf("catalog refreshes for the pushes to the 2 spaces not installed: %d", fd.refreshed)
	}
	fd.refuse = true
	fd.mu.Unlock()
	status, body = deliver(t, url+"/webhooks/robot", push)
	if msg, _ := body["error"].(string); status != 502 || !strings.Contains(msg, "is not a git commit") {
		t.Errorf("daemon refuses: %d %v", status, body)
	}

	daemon.Close()
	status, body = deliver(t, url+"/webhooks/robot", push)
	if msg, _ := body["error"].(string); status != 502 || !strings.Contains(msg, "robot daemon at "+daemon.URL) {
		t.Errorf("daemon down: %d %v", status, body)
	}
}

func TestRobotUpdateRefusesABadDaemonURL(t *testing.T) {
	for _, bad := range []string{"robot-update:", "robot-update:localhost:8000", "robot-update:ftp://x"} {
		if _, err := NewBuilder(Config{RobotUpdate: RobotUpdate}).Handler("r", bad); err == nil || !strings.Contains(err.Error(), "robot daemon's http(s) URL") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func TestFromSpace(t *testing.T) {
	cases := []struct {
		source, name string
		want         bool
	}{
		{"http://127.0.0.1:7861/spaces/alice/app", "alice/app", true},
		{"https://hub.example.com/spaces/alice/app/", "alice/app", true},
		{"https://hub.example.com/git/spaces/alice/app.git", "alice/app", true},
		{"https://hub.example.com/spaces/alice/app2", "alice/app", false},
		{"https://hub.example.com/spaces/malice/app", "alice/app", false},
		{"/home/alice/spaces/alice/app", "alice/app", true},
		{"https://hub.example.com/spaces/alice/app", "", false},
	}
	for _, c := range cases {
		if got := fromSpace(c.source, c.name); got != c.want {
			t.Errorf("fromSpace(%q, %q) = %v", c.source, c.name, got)
		}
	}
}
