package robotd_test

import (
	"io"
	"strconv"
	"strings"
	"testing"
)

// Credentials in an install URL are redacted whole (user and password) wherever the daemon shows
// the URL: the job's target, log and error, the job-log stream, and its own log.
func TestCredentialsInURLsAreRedactedWhole(t *testing.T) {
	parallel(t)
	d := startDaemon(t, daemonOptions{})
	port := freePort(t) // nothing listens there: the clone fails after the job has logged the URL
	for _, c := range []struct{ url, secret string }{
		{"https://alice:hunter2@127.0.0.1:" + strconv.Itoa(port) + "/u/app.git", "hunter2"},
		{"https://alice:hunter2@127.0.0.1:" + strconv.Itoa(port) + "/u/app.git", "alice"},
		{"https://ghp_s3cretT0ken@127.0.0.1:" + strconv.Itoa(port) + "/spaces/u/app", "ghp_s3cretT0ken"},
	} {
		var started struct {
			JobID string `json:"job_id"`
		}
		if code := d.call("POST", "/api/apps/install", map[string]string{"url": c.url}, &started); code != 200 {
			t.Fatalf("install %s: %d", c.url, code)
		}
		j := d.waitJob(started.JobID)
		var raw struct {
			Target string  `json:"target"`
			Error  *string `json:"error"`
		}
		d.call("GET", "/api/apps/job-status/"+started.JobID, nil, &raw)
		if j.Status != "failed" || !strings.Contains(raw.Target, "https://xxxxx@127.0.0.1:") {
			t.Fatalf("job of %s: %s, target %q", c.url, j.Status, raw.Target)
		}
		resp, err := d.get("/api/apps/job-log/" + started.JobID)
		if err != nil {
			t.Fatal(err)
		}
		stream, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		shown := map[string]string{
			"job target": raw.Target, "job error": deref(raw.Error), "job logs": strings.Join(j.Logs, "\n"),
			"job-log stream": string(stream), "daemon log": d.log.String(),
		}
		for where, text := range shown {
			if strings.Contains(text, c.secret) {
				t.Errorf("%s shows %q of %s:\n%s", where, c.secret, c.url, text)
			}
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
