package robotd_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// daemonPortWithPage is a free port p whose page port, p + 42, is free too.
func daemonPortWithPage(t *testing.T) int {
	t.Helper()
	for range 50 {
		p := freePort(t)
		if ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+42)); err == nil {
			ln.Close()
			return p
		}
	}
	t.Fatal("no free port p with p + 42 free")
	return 0
}

// Two daemons on one machine run the same app, whose custom_app_url names the SDK's default port
// 8042 (our template's, as the public SDK's): each serves the page on a port of its own, its port
// + 42, lists custom_app_url with that port, and both pages answer at once. They collided on 8042
// ("Address already in use") and the second app died.
func TestTwoDaemonsServeTheirAppPagesOnPortsOfTheirOwn(t *testing.T) {
	parallel(t)
	for _, m := range []string{"numpy", "pydantic", "fastapi", "uvicorn"} {
		if err := exec.Command(systemPython, "-c", "import "+m).Run(); err != nil {
			t.Fatalf("%s cannot import %s: install Debian's python3-%s (%v)", systemPython, m, m, err)
		}
	}
	template, err := filepath.Abs(filepath.Join("testdata", "apps", "template_app"))
	if err != nil {
		t.Fatal(err)
	}
	p1 := daemonPortWithPage(t)
	d1 := startDaemon(t, daemonOptions{port: p1})
	p2 := daemonPortWithPage(t)
	d2 := startDaemon(t, daemonOptions{port: p2, venv: ownVenv(t)})
	for _, c := range []struct {
		d    *daemon
		page int
	}{{d1, p1 + 42}, {d2, p2 + 42}} {
		var created struct {
			JobID string `json:"job_id"`
		}
		c.d.call("POST", "/api/apps/install", map[string]string{"url": template}, &created)
		if j := c.d.waitJob(created.JobID); j.Status != "done" {
			t.Fatalf("install: %s %v\n%s", j.Status, j.Error, strings.Join(j.Logs, "\n"))
		}
		if code := c.d.call("POST", "/api/apps/start-app/template_app", nil, nil); code != 200 {
			t.Fatalf("start: %d", code)
		}
		c.d.waitState(30*time.Second, "running")
		want := fmt.Sprintf("http://0.0.0.0:%d", c.page)
		if u := c.d.list()["template_app"].Extra.CustomAppURL; u == nil || *u != want {
			t.Errorf("the daemon on %s lists custom_app_url %v, want %s", c.d.url, u, want)
		}
	}
	for _, c := range []struct {
		d    *daemon
		page int
	}{{d1, p1 + 42}, {d2, p2 + 42}} {
		if st := c.d.status(); st == nil || st.State != "running" {
			t.Errorf("the app of the daemon on %s is not running: %+v\n%s", c.d.url, st, c.d.log.String())
		}
		var body string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", c.page)); err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				body = string(b)
				break
			}
		}
		if body == "" {
			t.Errorf("the app page of the daemon on %s does not answer on port %d", c.d.url, c.page)
		}
	}
}
