package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestJobCannotReadTheHubEnvironment runs `robothub hub serve --allow-jobs` as its own process, as an
// unprivileged user (nobody, through setpriv, as a hub is run), with a secret in its environment,
// and a job that tries to read the hub's environment through /proc/<hub pid>/environ: the job runs
// as the same user, and the hub, non-dumpable, keeps it out.
func TestJobCannotReadTheHubEnvironment(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/<pid>/environ is Linux's")
	}
	const canary = "hf_canary_the_hub_own_token_0123456789"
	dir := nobodysDir(t)
	p := startHubAsNobody(t, dir, []string{"HF_TOKEN=" + canary}, "--db", ":memory:")
	endpoint := p.waitFor(t, `Local hub listening on (http://\S+)`)
	token := p.waitFor(t, `(?m)^export HF_TOKEN=(hf_\S+)$`)

	// The job's user namespace shows the hub's user as its root: uid_map names nobody (65534).
	hub := strconv.Itoa(p.cmd.Process.Pid) // setpriv executes the hub in its own process
	script := `if cat /proc/` + hub + `/environ; then echo; echo "READ the environ of ` + hub + `"; else echo "REFUSED the environ of ` + hub + `"; fi; cat /proc/self/uid_map`
	log := jobLogOnEvent(t, endpoint, token, "local", script)
	if strings.Contains(log, canary) || !strings.Contains(log, "REFUSED the environ of") || !strings.Contains(log, "65534") {
		t.Fatalf("the job's log (it runs as nobody, like the hub, and must not read the hub's environment):\n%s", log)
	}
	if strings.Contains(p.stdout.String()+p.stderr.String(), canary) {
		t.Error("the hub printed its own token")
	}
}

// TestJobCannotReadTheHubFiles is issue 20's note on jobs, run through the built robothub hub serve
// --allow-jobs, as nobody (as a hub is run; the job runs as the same user, so the operating
// system's permissions let it read everything the hub can): alice's job tries to read the hub's
// token file, its database, and bob's private space in the repositories, and cannot.
func TestJobCannotReadTheHubFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("jobs run only where Landlock keeps them out of the hub's files")
	}
	dir := nobodysDir(t)
	data := filepath.Join(dir, "hub")
	tokenFile := filepath.Join(data, "token")
	p := startHubAsNobody(t, dir, nil, "--data-dir", data, "--token-file", tokenFile, "--user", "alice")
	endpoint := p.waitFor(t, `Local hub listening on (http://\S+)`)
	alice := p.waitFor(t, `(?m)^export HF_TOKEN=(hf_\S+)$`)
	code, out, errOut := runCLI(t, nil, "", "hub", "token", "create", "--user", "bob", "--data-dir", data, "--format", "quiet")
	if code != 0 {
		t.Fatalf("token create: %d %s %s", code, out, errOut)
	}
	bob := strings.TrimSpace(out)
	const secret = "bob_private_space_canary_5f3a"
	if status, body := hubAPI(t, endpoint, bob, "POST", "/api/repos/create", `{"name":"plans","type":"space","sdk":"static","private":true}`); status != 200 {
		t.Fatalf("bob's space: %d %s", status, body)
	}
	commit := `{"key":"header","value":{"summary":"plans"}}` + "\n" + `{"key":"file","value":{"path":"plans.txt","encoding":"utf-8","content":"` + secret + `"}}` + "\n"
	if status, body := hubAPI(t, endpoint, bob, "POST", "/api/spaces/bob/plans/commit/main", commit); status != 200 {
		t.Fatalf("bob's commit: %d %s", status, body)
	}

	script := `D=` + data + `
try() { if "$@" >/dev/null 2>&1; then echo "READ: $*"; else echo "REFUSED: $*"; fi; }
cat "$D/token"; cat "$D/hub.db" | head -c 64; echo
try cat "$D/token"; try cat "$D/hub.db"; try ls "$D/repos"
echo "plans: $(git --git-dir "$(find "$D/repos" -name plans.git | head -n 1)" show HEAD:plans.txt)"; try grep -r -l ` + secret + ` "$D"
echo done`
	log := jobLogOnEvent(t, endpoint, alice, "alice", script)
	tokenBytes, _ := os.ReadFile(tokenFile)
	if strings.Contains(log, strings.TrimSpace(string(tokenBytes))) || strings.Contains(log, alice) || strings.Contains(log, "SQLite format") ||
		strings.Contains(log, "plans: "+secret) || strings.Contains(log, "READ:") || strings.Count(log, "REFUSED:") != 4 || !strings.Contains(log, "done") {
		t.Fatalf("the job's log (it must read none of the hub's files):\n%s", log)
	}
}

// nobodysDir is a directory that nobody may write, or skips the test where the hub cannot be run
// as nobody (it needs root and setpriv).
func nobodysDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("setpriv"); err != nil || os.Getuid() != 0 {
		t.Skip("needs root and setpriv to run the hub as nobody")
	}
	dir, err := os.MkdirTemp("", "robothub-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startHubAsNobody runs robothub hub serve --allow-jobs with args as nobody (uid 65534, as a hub is
// run), from a copy of the program in dir (nobodysDir), with HOME and TMPDIR there and env added.
func startHubAsNobody(t *testing.T, dir string, env []string, args ...string) *hubProcess {
	t.Helper()
	self, err := exec.LookPath("robothub")
	if err != nil {
		t.Fatalf("robothub is not on PATH (testscript puts it there): %v", err)
	}
	bin := filepath.Join(dir, "robothub")
	copyFile(t, self, bin)
	cmd := exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin, "hub", "serve",
		"--addr", "127.0.0.1:0", "--allow-jobs"}, args...)...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + dir, "TMPDIR=" + dir}, env...)
	return runHubProcess(t, cmd)
}

// jobLogOnEvent makes a source job of script (sh -c) and a job webhook of user's repos with token,
// emits an event on one of them, and returns the log of the run once it has ended.
func jobLogOnEvent(t *testing.T, endpoint, token, user, script string) string {
	t.Helper()
	return jobRunOnEvent(t, endpoint, token, user, script).Log
}

// jobRun is a job's run as the hub shows it.
type jobRun struct{ State, Error, Log string }

// jobRunOnEvent is jobLogOnEvent's run, whole.
func jobRunOnEvent(t *testing.T, endpoint, token, user, script string) jobRun {
	t.Helper()
	status, body := hubAPI(t, endpoint, token, "POST", "/api/emulator/jobs", `{"command":["sh","-c",`+quoteJSON(script)+`]}`)
	if status != 200 {
		t.Fatalf("job: %d %s", status, body)
	}
	var job struct{ ID string }
	_ = json.Unmarshal([]byte(body), &job)
	status, body = hubAPI(t, endpoint, token, "POST", "/api/settings/webhooks", `{"jobSourceId":"`+job.ID+`","watched":[{"type":"user","name":"`+user+`"}]}`)
	if status != 200 {
		t.Fatalf("webhook: %d %s", status, body)
	}
	var wh struct{ Webhook struct{ ID string } }
	_ = json.Unmarshal([]byte(body), &wh)
	if status, body := hubAPI(t, endpoint, token, "POST", "/api/emulator/events", `{"repo":"model:`+user+`/bert","scope":"repo.content","action":"update"}`); status != 200 {
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
	var run jobRun
	_ = json.Unmarshal([]byte(body), &run)
	return run
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
