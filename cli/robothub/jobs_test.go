package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestJobCannotReadTheHubEnvironment runs `robothub hub serve --allow-jobs` as its own process, as an
// unprivileged user (nobody, through setpriv, as a hub is run), with a secret in its environment,
// and a job that tries to read the hub's environment through /proc/<hub pid>/environ, its parent's:
// the job runs as the same user, and the hub, non-dumpable, keeps it out.
func TestJobCannotReadTheHubEnvironment(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/<pid>/environ is Linux's")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil || os.Getuid() != 0 {
		t.Skip("needs root and setpriv to run the hub as nobody")
	}
	self, err := exec.LookPath("robothub")
	if err != nil {
		t.Fatalf("robothub is not on PATH (testscript puts it there): %v", err)
	}
	// A copy of the program that nobody may run, and a directory that nobody may write.
	dir, err := os.MkdirTemp("", "robothub-jobenv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "robothub")
	copyFile(t, self, bin)

	const canary = "hf_canary_the_hub_own_token_0123456789"
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "hub", "serve",
		"--addr", "127.0.0.1:0", "--db", ":memory:", "--allow-jobs")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "TMPDIR=" + dir, "HF_TOKEN=" + canary}
	p := runHubProcess(t, cmd)
	endpoint := p.waitFor(t, `Local hub listening on (http://\S+)`)
	token := p.waitFor(t, `(?m)^export HF_TOKEN=(hf_\S+)$`)

	script := `if cat /proc/$PPID/environ; then echo; echo "READ the environ of $PPID"; else echo "REFUSED the environ of $PPID"; fi; id -u`
	status, body := hubAPI(t, endpoint, token, "POST", "/api/emulator/jobs", `{"command":["sh","-c",`+quoteJSON(script)+`]}`)
	if status != 200 {
		t.Fatalf("job: %d %s", status, body)
	}
	var job struct{ ID string }
	_ = json.Unmarshal([]byte(body), &job)
	status, body = hubAPI(t, endpoint, token, "POST", "/api/settings/webhooks", `{"jobSourceId":"`+job.ID+`","watched":[{"type":"user","name":"local"}]}`)
	if status != 200 {
		t.Fatalf("webhook: %d %s", status, body)
	}
	var wh struct{ Webhook struct{ ID string } }
	_ = json.Unmarshal([]byte(body), &wh)
	if status, body := hubAPI(t, endpoint, token, "POST", "/api/emulator/events", `{"repo":"model:local/bert","scope":"repo.content","action":"update"}`); status != 200 {
		t.Fatalf("emit: %d %s", status, body)
	}
	var runs []struct{ ID, State string }
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, body := hubAPI(t, endpoint, token, "GET", "/api/emulator/webhooks/"+wh.Webhook.ID+"/runs", "")
		_ = json.Unmarshal([]byte(body), &runs)
		if len(runs) == 1 && runs[0].State != "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job did not finish: %s", body)
		}
	}
	_, body = hubAPI(t, endpoint, token, "GET", "/api/emulator/runs/"+runs[0].ID, "")
	var run struct{ Log string }
	_ = json.Unmarshal([]byte(body), &run)
	if strings.Contains(run.Log, canary) || !strings.Contains(run.Log, "REFUSED the environ of") || !strings.Contains(run.Log, "65534") {
		t.Fatalf("the job's log (it runs as nobody, like the hub, and must not read the hub's environment):\n%s", run.Log)
	}
	if strings.Contains(p.stdout.String()+p.stderr.String(), canary) {
		t.Error("the hub printed its own token")
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestJobsNeedAllowJobs: on a hub started without --allow-jobs, making a job is a clear refusal.
func TestJobsNeedAllowJobs(t *testing.T) {
	env := localHub(t)
	code, _, stderr := runCLI(t, env, "", "hub", "job", "create", "--", "sh", "-c", "id")
	if code == 0 || !strings.Contains(stderr, "jobs are off on this hub") || !strings.Contains(stderr, "robothub hub serve --allow-jobs") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	// The token is not the problem: no hint sends the user after another one.
	if strings.Contains(stderr, "write role") {
		t.Fatalf("stderr suggests another token: %q", stderr)
	}
}
