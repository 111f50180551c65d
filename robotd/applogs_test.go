package robotd_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The output of a crashed app, traceback included, stays readable through current-app-logs until
// the next start; the stream ends with the run's error status.
func TestCurrentAppLogsOfACrashedApp(t *testing.T) {
	parallel(t)
	d := startDaemon(t, daemonOptions{})
	d.install("crash_app")
	resp, err := d.get("/api/apps/current-app-logs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("current-app-logs before any start: %d, want 204", resp.StatusCode)
	}
	if code := d.call("POST", "/api/apps/start-app/crash_app", nil, nil); code != 200 {
		t.Fatalf("start crash_app: %d", code)
	}
	d.waitState(10*time.Second, "error")
	resp, err = d.get("/api/apps/current-app-logs")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("current-app-logs after a crash: %d %s", resp.StatusCode, ct)
	}
	events := readEvents(t, resp, 0, 10*time.Second)
	var stderr []string
	for _, e := range events[:len(events)-1] {
		var line struct{ Stream, Line string }
		if e.event != "log" || json.Unmarshal([]byte(e.data), &line) != nil {
			t.Fatalf("event %q %q, want log events of {stream, line}", e.event, e.data)
		}
		if line.Stream == "stderr" {
			stderr = append(stderr, line.Line)
		}
	}
	text := strings.Join(stderr, "\n")
	if !strings.Contains(text, "Traceback (most recent call last):") || !strings.Contains(text, "RuntimeError: crash_app cannot start: calibration file missing") {
		t.Fatalf("the crashed app's stderr lacks its traceback:\n%s", text)
	}
	end := events[len(events)-1]
	var st appStatus
	if end.event != "end" || json.Unmarshal([]byte(end.data), &st) != nil || st.State != "error" {
		t.Fatalf("last event %q %q, want end with the error status", end.event, end.data)
	}
}
