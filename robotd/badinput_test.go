package robotd_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/testkit/badinput"
)

// TestBadInputDaemonAPI sends the robot daemon (robotdaemon.Run, its real HTTP server) malformed,
// oversized, wrongly typed and hostile requests on every kind of route: each gets the status
// docs/robot-api.md documents (or net/http's own 400 or 431 for a request that is not HTTP),
// never a 500, nothing is installed, started or written, and the daemon still serves afterwards.
// The rows go into docs/RELIABILITY.md.
func TestBadInputDaemonAPI(t *testing.T) {
	parallel(t)
	d := startDaemon(t, daemonOptions{})
	addr := strings.TrimPrefix(d.url, "http://")
	jsonType := [2]string{"Content-Type", "application/json"}
	bearer := [2]string{"Authorization", "Bearer " + d.token} // the owner's: past authentication, to the routes
	req := func(method, target, body string, header ...[2]string) badinput.Request {
		return badinput.Request{Method: method, Target: target, Header: append([][2]string{jsonType, bearer}, header...), Body: []byte(body)}
	}
	install := func(body string) badinput.Request { return req("POST", "/api/apps/install", body) }
	installURL := func(u string) badinput.Request {
		return install(`{"url":` + strings.ReplaceAll(strings.ReplaceAll(`"`+u+`"`, "\n", `\n`), "\x00", `\u0000`) + `}`)
	}
	notPackage := t.TempDir() // a directory without pyproject.toml
	dataBefore := dirListing(t, d.dataDir)

	type badCase struct {
		input  string
		req    badinput.Request
		status int
	}
	cases := []badCase{
		// Install bodies: malformed, wrongly typed, oversized.
		{"empty body", install(""), 422},
		{"truncated JSON", install(`{"url":`), 422},
		{"a JSON array", install(`[1,2]`), 422},
		{"url is a number", install(`{"url":42}`), 422},
		{"url is an object", install(`{"url":{"href":"/tmp"}}`), 422},
		{"no url", install(`{"name":"coop_app"}`), 422},
		{"JSON nested 100,000 levels deep", install(`{"url":` + string(badinput.Nested(100000)) + `}`), 422},
		{"a body of 1 MiB + 10 bytes", install(`{"url":"` + strings.Repeat("a", 1<<20) + `"}`), 422},
		{"a url of 3,000 characters", installURL("https://h/" + strings.Repeat("a", 3000)), 422},
		{"invalid UTF-8 in the url", install("{\"url\":\"/tmp/\xff\xfe\"}"), 422},

		// Install URLs: path traversal, shell metacharacters, option injection, odd schemes.
		{"url / (the whole filesystem)", installURL("/"), 422},
		{"url /proc", installURL("/proc"), 422},
		{"url file:///etc", installURL("file:///etc"), 422},
		{"url: a directory that is not a Python package", installURL(notPackage), 422},
		{"url with path traversal to a missing directory", installURL("/tmp/../../no/such/dir"), 422},
		{"url relative with ../", installURL("../../etc"), 422},
		{"url with a NUL byte", installURL("/tmp\x00/x"), 422},
		{"url with a newline", installURL("https://h/a\nb"), 422},
		{"url: a git option (--upload-pack)", installURL("--upload-pack=touch${IFS}/tmp/robothub-pwned"), 422},
		{"url: git's ext:: transport", installURL("ext::sh -c touch% /tmp/robothub-pwned"), 422},
		{"url with $(...)", installURL("$(touch${IFS}/tmp/robothub-pwned)"), 422},
		{"url with backticks", installURL("`touch${IFS}/tmp/robothub-pwned`"), 422},
		{"url with ; and a command (a job whose clone fails)", installURL("http://127.0.0.1:1/a;touch${IFS}/tmp/robothub-pwned"), 200},
		{"url of an ftp server", installURL("ftp://h/app"), 422},
		{"update: revision with a shell command", req("POST", "/api/apps/update", `{"url":"https://h/spaces/u/app","revision":"$(id)"}`), 422},
		{"update: url no app comes from", req("POST", "/api/apps/update", `{"url":"https://h/spaces/u/app"}`), 404},

		// App names, job, session IDs in paths.
		{"app name with path traversal (escaped)", req("POST", "/api/apps/start-app/..%2F..%2Fetc%2Fpasswd", ""), 404},
		{"app name with an escaped NUL", req("POST", "/api/apps/start-app/coop_app%00", ""), 404},
		{"app name with ; and a command", req("POST", "/api/apps/start-app/"+url.PathEscape("coop_app;touch /tmp/robothub-pwned"), ""), 404},
		{"app name with $(...)", req("POST", "/api/apps/remove/"+url.PathEscape("$(touch /tmp/robothub-pwned)"), ""), 404},
		{"app name with backticks", req("POST", "/api/apps/remove/"+url.PathEscape("`touch /tmp/robothub-pwned`"), ""), 404},
		{"app name in Cyrillic lookalikes", req("POST", "/api/apps/start-app/"+url.PathEscape("соор_app"), ""), 404},
		{"app name with a right-to-left override", req("POST", "/api/apps/start-app/"+url.PathEscape("coop\u202eppa"), ""), 404},
		{"app name of 60 KiB", req("POST", "/api/apps/start-app/"+strings.Repeat("a", 60<<10), ""), 404},
		{"dot segments in an app path", req("POST", "/api/apps/start-app/../../healthz", ""), 307},
		{"job ID with path traversal", req("GET", "/api/apps/job-status/..%2F..%2Fetc", ""), 404},
		{"job log of a job ID with a NUL", req("GET", "/api/apps/job-log/a%00b", ""), 404},
		{"session ID with shell metacharacters", req("POST", "/api/sessions/"+url.PathEscape("$(id)")+"/heartbeat", ""), 404},
		{"startup app with path traversal", req("PUT", "/api/apps/startup-app", `{"startup_app":"../../etc/passwd"}`), 400},
		{"startup app as a list", req("PUT", "/api/apps/startup-app", `{"startup_app":["coop_app"]}`), 422},
		{"source kind that does not exist", req("GET", "/api/apps/list-available/"+url.PathEscape("hf_space;id"), ""), 422},
		{"motor mode with path traversal", req("POST", "/api/motors/set_mode/..%2Fenabled", ""), 422},

		// Robot bodies: wrong types and values.
		{"set_target: antennas as a string", req("POST", "/api/move/set_target", `{"target_antennas":"up"}`), 422},
		{"set_target: three antennas", req("POST", "/api/move/set_target", `{"target_antennas":[1,2,3]}`), 422},
		{"set_target: a number too large for a float", req("POST", "/api/move/set_target", `{"target_body_yaw":1e999}`), 422},
		{"goto: no duration", req("POST", "/api/move/goto", `{"antennas":[0,0]}`), 422},
		{"goto: a duration of a year", req("POST", "/api/move/goto", `{"duration":31536000}`), 422},
		{"goto: interpolation with a shell command", req("POST", "/api/move/goto", `{"duration":1,"interpolation":"$(id)"}`), 422},
		{"push_sample: 8 MiB + 1 of samples", req("POST", "/api/audio/push_sample", `{"samples":[`+strings.Repeat("0,", 4<<20)+`0]}`), 422},
		{"push_sample: samples of the wrong type", req("POST", "/api/audio/push_sample", `{"samples":"AAAA"}`), 422},
		{"play_sound: path traversal to a file that is not WAV", req("POST", "/api/audio/play_sound", `{"file":"/tmp/../etc/passwd"}`), 422},
		{"play_sound: a /proc file (reading it could block)", req("POST", "/api/audio/play_sound", `{"file":"/proc/kmsg"}`), 422},
		{"play_sound: a device", req("POST", "/api/audio/play_sound", `{"file":"/dev/zero"}`), 422},
		{"play_sound: a directory", req("POST", "/api/audio/play_sound", `{"file":"/"}`), 422},
		{"play_sound: a missing file with shell metacharacters", req("POST", "/api/audio/play_sound", `{"file":"/tmp/$(touch /tmp/robothub-pwned).wav"}`), 404},
		{"antenna-touch: antenna name with NUL", req("POST", "/api/sim/antenna-touch", `{"antenna":"left\u0000"}`), 422},
		{"sessions: client name of 10,000 characters", req("POST", "/api/sessions", `{"client":"`+strings.Repeat("c", 10000)+`"}`), 422},
		{"sessions: pid as a string", req("POST", "/api/sessions", `{"pid":"1"}`), 422},
		{"state stream at an absurd frequency", req("GET", "/api/state/stream?frequency=1e308", ""), 422},
		{"state stream at NaN Hz", req("GET", "/api/state/stream?frequency=NaN", ""), 422},
		{"audio sample with a negative max", req("GET", "/api/audio/sample?max=-1", ""), 422},

		// Headers and methods.
		{"a 1.5 MiB header", req("GET", "/api/apps/list", "", badinput.Padding(3*badinput.MiB/2)), 431},
		{"150,000 header lines", req("GET", "/api/apps/list", "", badinput.ManyHeaders(150000)...), 431},
		{"Host header of another site (DNS rebinding)", badinput.Request{Method: "GET", Target: "/api/apps/list", Header: [][2]string{{"Host", "evil.example"}}}, 421},
		{"cross-site POST from a web page", req("POST", "/api/apps/start-app/coop_app", "", [2]string{"Sec-Fetch-Site", "cross-site"}), 403},
		{"DELETE on install", req("DELETE", "/api/apps/install", ""), 405},
		{"a raw NUL in the request line", req("GET", "/api/apps/list\x00", ""), 400},
	}
	table := badinput.NewTable("daemon-api", "go test -run TestBadInputDaemonAPI ./robotd")
	table.Scrub(addr, "127.0.0.1:PORT")
	table.Scrub(notPackage, "/tmp/TESTDIR")
	_ = os.Remove(badinput.PwnedFile)
	ran := 0
	var jobIDs []string
	for _, c := range cases {
		t.Run(c.input, func(t *testing.T) {
			ran++
			a, err := badinput.Send(addr, c.req)
			if err != nil {
				t.Fatal(err)
			}
			var created struct {
				JobID string `json:"job_id"`
			}
			if a.Status == 200 && json.Unmarshal(a.Body, &created) == nil && created.JobID != "" {
				jobIDs = append(jobIDs, created.JobID)
				table.Scrub(created.JobID, "JOB_ID")
			}
			table.Add(badinput.Row{Input: c.input, Request: c.req.Method + " " + c.req.Target + " " + string(c.req.Body), Expected: c.status, Observed: a.Status, Answer: a.Message()})
			if a.Status != c.status {
				t.Errorf("%s %.100q %.100q: %d %.300s, want %d", c.req.Method, c.req.Target, c.req.Body, a.Status, a.Body, c.status)
			}
			if a.Status >= 400 && a.Status < 500 && a.Status != 400 && a.Status != 431 && a.Message() == "" {
				t.Errorf("%d without a detail: %s", a.Status, a.Body)
			}
			if err := badinput.Serves(addr, "/healthz"); err != nil {
				t.Fatalf("the daemon no longer serves: %v", err)
			}
		})
	}
	for _, id := range jobIDs {
		if j := d.waitJob(id); j.Status != "failed" || len(j.Apps) != 0 {
			t.Errorf("a hostile install did not fail: job %+v", j)
		}
	}
	if st := d.status(); st != nil {
		t.Errorf("an app runs after hostile requests: %+v", st)
	}
	if after := dirListing(t, d.dataDir); after != dataBefore {
		t.Errorf("hostile requests changed the data dir:\nbefore %s\nafter  %s", dataBefore, after)
	}
	if _, err := os.Stat(badinput.PwnedFile); err == nil {
		t.Errorf("%s exists: something ran a shell on a hostile input", badinput.PwnedFile)
	}
	if strings.Contains(d.log.String(), "request failed") {
		t.Errorf("the daemon logged a failed request (a 500):\n%s", d.log)
	}
	table.Finish(t, ran == len(cases))
}

// dirListing names the files of dir with their sizes.
func dirListing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	_ = filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		info, err := e.Info()
		if err == nil {
			rel, _ := filepath.Rel(dir, p)
			fmt.Fprintf(&b, "%s:%s:%d ", rel, info.Mode(), info.Size())
		}
		return nil
	})
	return b.String()
}
