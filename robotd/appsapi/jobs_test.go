package appsapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/robothub/robothub/core/apps"
)

func TestInstallFromEachSource(t *testing.T) {
	d := serve(t, newFakeApps(), "http://hub.test/", "")
	for _, c := range []struct{ body, want string }{
		{`{"url": "http://hub.test/spaces/alice/hello"}`, "install http://hub.test/spaces/alice/hello"},
		{`{"name": "alice/hello", "source_kind": "hf_space"}`, "install http://hub.test/spaces/alice/hello"},
		{`{"name": "alice/hello", "source_kind": "dashboard_selection", "url": "https://git.example/hello.git"}`, "install https://git.example/hello.git"},
		{`{"name": " /srv/apps/hello ", "source_kind": "local"}`, "install /srv/apps/hello"},
		{`{"name": "hello", "source_kind": "local", "url": "/srv/apps/other"}`, "install /srv/apps/other"},
	} {
		code, out := d.Object(t, "POST", "/api/apps/install", c.body)
		id, _ := out["job_id"].(string)
		if code != http.StatusOK || id == "" {
			t.Fatalf("install %s: %d %v", c.body, code, out)
		}
		if asked := d.apps.asked(); asked[len(asked)-1] != c.want {
			t.Errorf("install %s asked the manager for %q, want %q", c.body, asked[len(asked)-1], c.want)
		}
		if code, info := d.Object(t, "GET", "/api/apps/job-status/"+id, ""); code != http.StatusOK || info["id"] != id || info["status"] != "pending" {
			t.Errorf("job-status %s: %d %v", id, code, info)
		}
	}
}

func TestInstallRefusesWhatItCannotInstall(t *testing.T) {
	d := serve(t, newFakeApps("hello"), "", "")
	for _, c := range []struct {
		path, body string
		status     int
		text       string
	}{
		{"/api/apps/install", ``, 422, "body: a JSON object is required"},
		{"/api/apps/install", `{"url": `, 422, "body: invalid JSON"},
		{"/api/apps/install", `{}`, 422, "body: field url is required: a hub space URL"},
		{"/api/apps/install", `{"url": 3}`, 422, "body: field url: expected string"},
		{"/api/apps/install", `{"url": "hello"}`, 422, `url "hello": expected a hub space URL`},
		{"/api/apps/install?wait=soon", `{"url": "/srv/apps/hello"}`, 422, "wait: must be true or false"},
		{"/api/apps/install", `{"source_kind": "hf_space"}`, 422, "body: field name is required with source_kind"},
		{"/api/apps/install", `{"name": "alice/hello", "source_kind": "hf_space"}`, 422, "this daemon has no hub (--hub-url none): send the space's url"},
		{"/api/apps/install", `{"name": "hello", "source_kind": "installed"}`, 400, "app hello is installed already, there is nothing to install (start it with /api/apps/start-app/hello)"},
		{"/api/apps/install", `{"name": "hello", "source_kind": "pypi"}`, 400, `source_kind "pypi" is not one of hf_space, dashboard_selection, local, installed`},
		{"/api/apps/update", `{"revision": "main"}`, 422, "body: field url is required: the source an installed app came from"},
		{"/api/apps/remove/nope", ``, 404, "App nope is not installed"},
		{"/api/apps/update/nope", ``, 404, "App nope is not installed"},
	} {
		d.Refused(t, "POST", c.path, c.body, c.status, c.text)
	}
	if asked := d.apps.asked(); len(asked) != 0 {
		t.Fatalf("refused requests reached the manager: %q", asked)
	}
	// A space named without a URL needs a hub to find it on, and a space ID.
	d = serve(t, newFakeApps(), "http://hub.test", "")
	d.Refused(t, "POST", "/api/apps/install", `{"name": "not a space", "source_kind": "hf_space"}`, 422, `name "not a space" is not a space ID (owner/app)`)
}

func TestUpdateRemoveAndUpdateApp(t *testing.T) {
	d := serve(t, newFakeApps("hello"), "", "")
	for _, c := range []struct{ path, body, want string }{
		{"/api/apps/update", `{"url": "/srv/apps/hello", "revision": "v2"}`, "update /srv/apps/hello v2"},
		{"/api/apps/update/hello", ``, "update-app hello"},
		{"/api/apps/remove/hello", ``, "remove hello"},
	} {
		code, out := d.Object(t, "POST", c.path, c.body)
		if id, _ := out["job_id"].(string); code != http.StatusOK || id == "" {
			t.Fatalf("%s: %d %v", c.path, code, out)
		}
		if asked := d.apps.asked(); asked[len(asked)-1] != c.want {
			t.Errorf("%s asked %q, want %q", c.path, asked[len(asked)-1], c.want)
		}
	}
	d.Refused(t, "GET", "/api/apps/job-status/0123", "", 404, "Job 0123 not found")
}

func TestInstallAndWait(t *testing.T) {
	d := serve(t, newFakeApps(), "", "")
	finish := func(status apps.JobStatus, cause string) {
		if j := d.apps.firstJob(); j != nil {
			j.log(status, cause, "Installing...")
		}
	}
	go finish(apps.JobDone, "")
	code, out := d.Object(t, "POST", "/api/apps/install?wait=true", `{"url": "/srv/apps/hello"}`)
	if code != http.StatusOK || out["status"] != "done" || out["job_id"] != out["id"] || out["detail"] != nil {
		t.Fatalf("wait for a done job: %d %v", code, out)
	}

	d = serve(t, newFakeApps(), "", "")
	go finish(apps.JobFailed, "no pyproject.toml in /srv/apps/broken")
	code, out = d.Object(t, "POST", "/api/apps/install?wait=true", `{"url": "/srv/apps/broken"}`)
	if code != http.StatusInternalServerError || out["status"] != "failed" || out["detail"] != "Job "+out["job_id"].(string)+" failed: no pyproject.toml in /srv/apps/broken" {
		t.Fatalf("wait for a failed job: %d %v", code, out)
	}
}

// A client waiting for a job when the daemon shuts down is told so; the job is left as it is.
func TestInstallAndWaitWhileTheDaemonStops(t *testing.T) {
	d := serve(t, newFakeApps(), "", "")
	go func() {
		d.apps.firstJob()
		close(d.done)
	}()
	code, out := d.Object(t, "POST", "/api/apps/install?wait=true", `{"url": "/srv/apps/hello"}`)
	detail, _ := out["detail"].(string)
	if code != http.StatusServiceUnavailable || !strings.HasPrefix(detail, "The daemon is shutting down; job ") || !strings.HasSuffix(detail, " did not finish") {
		t.Fatalf("got %d %v", code, out)
	}
}

func TestCancelJob(t *testing.T) {
	d := serve(t, newFakeApps(), "", "")
	_, out := d.Object(t, "POST", "/api/apps/install", `{"url": "/srv/apps/hello"}`)
	id := out["job_id"].(string)
	code, info := d.Object(t, "POST", "/api/apps/cancel-job/"+id, "")
	if code != http.StatusOK || info["status"] != "failed" || info["error"] != apps.ErrCancelled.Error() {
		t.Fatalf("cancel: %d %v", code, info)
	}
	d.Refused(t, "POST", "/api/apps/cancel-job/"+id, "", 400, "Job "+id+" has finished already")
	d.Refused(t, "POST", "/api/apps/cancel-job/nope", "", 404, "Job nope not found")
}

// event is one server-sent event.
type event struct{ name, data string }

func readEvents(t *testing.T, d *daemon, path string) (int, []event) {
	t.Helper()
	resp, err := d.Client().Get(d.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("%s: Content-Type %q", path, ct)
	}
	var events []event
	var ev event
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		case line == "":
			events = append(events, ev)
			ev = event{}
		}
	}
	return resp.StatusCode, events
}

func TestJobLogStreamsUntilTheJobEnds(t *testing.T) {
	d := serve(t, newFakeApps(), "", "")
	_, out := d.Object(t, "POST", "/api/apps/install", `{"url": "/srv/apps/hello"}`)
	id := out["job_id"].(string)
	j := d.apps.jobOf(t, id)
	j.log(apps.JobInProgress, "", "Resolving", "Downloading")
	go func() {
		time.Sleep(20 * time.Millisecond)
		j.log(apps.JobDone, "", "Installed hello")
	}()
	code, events := readEvents(t, d, "/api/apps/job-log/"+id)
	if code != http.StatusOK || len(events) != 4 {
		t.Fatalf("job-log: %d %v", code, events)
	}
	var lines []string
	for _, e := range events[:3] {
		if e.name != "log" {
			t.Fatalf("event %v, want log", e)
		}
		lines = append(lines, e.data)
	}
	if !slices.Equal(lines, []string{"Resolving", "Downloading", "Installed hello"}) {
		t.Fatalf("log lines %q", lines)
	}
	var final apps.JobInfo
	if events[3].name != "status" || json.Unmarshal([]byte(events[3].data), &final) != nil || final.Status != apps.JobDone || final.Logs != nil {
		t.Fatalf("final event %v: want status done without the logs", events[3])
	}
	if code, _ := readEvents(t, d, "/api/apps/job-log/nope"); code != http.StatusNotFound {
		t.Fatalf("job-log of no job: %d", code)
	}
	d.clients.SetFull(true)
	if code, _ := readEvents(t, d, "/api/apps/job-log/"+id); code != http.StatusTooManyRequests {
		t.Fatalf("job-log over the stream cap: %d, want 429", code)
	}
}

func TestJobWebSocket(t *testing.T) {
	d := serve(t, newFakeApps(), "", "")
	_, out := d.Object(t, "POST", "/api/apps/install", `{"url": "/srv/apps/hello"}`)
	id := out["job_id"].(string)
	d.apps.jobOf(t, id).log(apps.JobDone, "", "one", "two")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(d.URL, "http") + "/api/apps/ws/apps-manager/"
	conn, _, err := websocket.Dial(ctx, wsURL+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	for _, want := range []string{"one", "two"} {
		typ, data, err := conn.Read(ctx)
		if err != nil || typ != websocket.MessageText || string(data) != want {
			t.Fatalf("message: %v %q %v, want %q", typ, data, err, want)
		}
	}
	var msg struct {
		Command string   `json:"command"`
		Status  string   `json:"status"`
		Logs    []string `json:"logs"`
	}
	if err := wsjson.Read(ctx, conn, &msg); err != nil || msg.Command != "install" || msg.Status != "done" || !slices.Equal(msg.Logs, []string{"one", "two"}) {
		t.Fatalf("status message %+v %v", msg, err)
	}
	if _, _, err := conn.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("after the job ended: %v, want a normal closure", err)
	}

	conn2, _, err := websocket.Dial(ctx, wsURL+"nope", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.CloseNow()
	var answer map[string]string
	if err := wsjson.Read(ctx, conn2, &answer); err != nil || answer["error"] != "Job ID not found" {
		t.Fatalf("unknown job: %v %v", answer, err)
	}
}
