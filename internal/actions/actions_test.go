package actions

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/syncbuf"

	"github.com/robothub/robothub/core/webhook"
)

const payload = `{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"space","name":"alice/dance-app"},"updatedRefs":[{"ref":"refs/heads/main","oldSha":null,"newSha":"abc"}]}`

// receiver serves routes built by b behind a real HTTP server with a secret.
func receiver(t *testing.T, b *Builder, routes ...string) string {
	t.Helper()
	srv := webhook.NewServer(webhook.WithSecret("hush"), webhook.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	var rs []Route
	for _, spec := range routes {
		r, err := ParseRoute(spec)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	if err := b.Register(srv, rs); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts.URL
}

func deliver(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set(webhook.SecretHeader, "hush")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestParseRoutes(t *testing.T) {
	got, err := ParseRoutes("hello=log; build = exec:make build\n\nrelay=forward:https://example.com/x?a=1;")
	if err != nil {
		t.Fatal(err)
	}
	want := []Route{{"hello", "log"}, {"build", "exec:make build"}, {"relay", "forward:https://example.com/x?a=1"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
	for _, bad := range []string{"hello", "=log", "hello=", " = "} {
		if _, err := ParseRoute(bad); err == nil || !strings.Contains(err.Error(), "name=ACTION") {
			t.Errorf("ParseRoute(%q) err = %v", bad, err)
		}
	}
}

func TestHandlerRefusesBadSpecs(t *testing.T) {
	b := NewBuilder(Config{SplitCommand: SplitCommand})
	cases := map[string]string{
		"shout":                        "unknown action",
		"log:extra":                    "takes no argument",
		"exec:":                        "command is empty",
		"exec:'unterminated":           "unterminated",
		"exec:no-such-command-xyz arg": "route r: exec: no-such-command-xyz is not a program on PATH; give its path (./no-such-command-xyz for one in the working directory)",
		"exec:./retrain.sh --fast":     "route r: exec: ./retrain.sh does not exist (relative to the working directory ",
		"exec:/no/such/retrain.sh":     "route r: exec: /no/such/retrain.sh does not exist",
		"forward:":                     "not an absolute http(s) URL",
		"forward:ftp://example.com":    "not an absolute http(s) URL",
		"forward:/relative":            "not an absolute http(s) URL",
	}
	for action, want := range cases {
		_, err := b.Handler("r", action)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Handler(%q) err = %v, want it to mention %q", action, err, want)
		}
		if err != nil && strings.Count(err.Error(), "exec:") > 1 {
			t.Errorf("Handler(%q) err = %v: exec: said more than once", action, err)
		}
	}
}

func TestExecRefusesAProgramThatIsNotExecutable(t *testing.T) {
	script := filepath.Join(t.TempDir(), "retrain.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewBuilder(Config{SplitCommand: SplitCommand}).Handler("r", "exec:"+script)
	if want := "route r: exec: " + script + " is not executable (chmod +x " + script + ")"; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

func TestSplitCommand(t *testing.T) {
	cases := map[string][]string{
		`make build`:                      {"make", "build"},
		`  a   b  `:                       {"a", "b"},
		`sh -c 'echo "$X" > out'`:         {"sh", "-c", `echo "$X" > out`},
		`say "hello world" \"x\"`:         {"say", "hello world", `"x"`},
		`a "b\"c\\d" e\ f`:                {"a", `b"c\d`, "e f"},
		`x '' ""`:                         {"x", "", ""},
		`a "\a" '\a' \a`:                  {"a", `\a`, `\a`, "a"}, // as sh reads them
		`notify '$HOME' "\$1" #a comment`: {"notify", "$HOME", "$1"},
		`cloudflared tunnel --url {url}`:  {"cloudflared", "tunnel", "--url", "{url}"},
		`ls *.txt ?`:                      {"ls", "*.txt", "?"}, // no globbing
	}
	for in, want := range cases {
		got, err := SplitCommand(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for bad, says := range map[string]string{
		``: "command is empty", `   `: "command is empty", `a 'b`: "without closing quote", `a "b`: "without closing quote",
		`echo $(rm -rf /)`: "a command substitution", "a `b`": "a command substitution", `a "$HOME"`: "a variable ($HOME)",
		`a ${X}`: "a variable ($X)", `a $((1+2))`: "an arithmetic expansion", `~/retrain.sh`: "a home directory (~)",
		`a ; b`: "more than one command", "a\nb": "more than one command", `ls | wc`: "a pipe (|)", `a && b`: "a list (&&)",
		`a > out`: "a redirection (>)", `a < in`: "a redirection (<)", `X=1 a`: "an assignment before the command (X=)",
		`a &`: "a background command (&)", `(a)`: "a compound command", `if a; then b; fi`: "a compound command",
	} {
		if _, err := SplitCommand(bad); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("SplitCommand(%q) = %v, want an error saying %q", bad, err, says)
		}
	}
}

func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{`make build`, `sh -c 'a "b" c'`, `a\ b "c\"d"`, `'`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args, err := SplitCommand(line)
		if err != nil {
			return
		}
		if len(args) == 0 {
			t.Fatal("no error and no arguments")
		}
		// Re-quoting every argument in single quotes must give the same arguments back.
		var b strings.Builder
		for _, a := range args {
			b.WriteString(" '" + strings.ReplaceAll(a, "'", `'\''`) + "'")
		}
		again, err := SplitCommand(b.String())
		if err != nil || !reflect.DeepEqual(again, args) {
			t.Fatalf("%q -> %q -> %q (%v)", line, args, again, err)
		}
	})
}

func TestLogAction(t *testing.T) {
	out := &syncbuf.Buffer{}
	url := receiver(t, NewBuilder(Config{SplitCommand: SplitCommand, Output: out}), "seen=log")
	status, body := deliver(t, url+"/webhooks/seen", payload)
	if status != 200 || body["message"] != "logged repo.content update on alice/dance-app" {
		t.Fatalf("%d %v", status, body)
	}
	var line struct {
		Route   string
		Repo    string
		Event   webhook.Event
		Payload json.RawMessage
	}
	if err := json.Unmarshal([]byte(out.String()), &line); err != nil {
		t.Fatalf("log line is not one JSON object: %v\n%s", err, out)
	}
	if line.Route != "seen" || line.Repo != "space:alice/dance-app" || line.Event.Scope != "repo.content" || string(line.Payload) != payload {
		t.Errorf("log line = %+v", line)
	}
}

func TestExecActionGetsThePayload(t *testing.T) {
	dir := t.TempDir()
	envFile, stdinFile := filepath.Join(dir, "env.json"), filepath.Join(dir, "stdin.json")
	b := NewBuilder(Config{SplitCommand: SplitCommand, Getenv: envOf(map[string]string{"PATH": os.Getenv("PATH"), "WEBHOOK_SECRET": "hush", "KEEP": "1"}), ExecEnv: []string{"KEEP"}})
	url := receiver(t, b,
		`save=exec:sh -c 'printf %s "$WEBHOOK_PAYLOAD" > "$1"; cat > "$2"; echo "secret=[$WEBHOOK_SECRET] keep=$KEEP route=$WEBHOOK_ROUTE repo=$WEBHOOK_REPO_NAME"' sh `+envFile+` `+stdinFile)
	status, body := deliver(t, url+"/webhooks/save", payload)
	if status != 200 || body["exitCode"] != 0.0 {
		t.Fatalf("%d %v", status, body)
	}
	for _, f := range []string{envFile, stdinFile} {
		got, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != payload {
			t.Errorf("%s = %s, want the payload", filepath.Base(f), got)
		}
	}
}

func TestExecActionEnvironment(t *testing.T) {
	logs := &syncbuf.Buffer{}
	b := NewBuilder(Config{
		SplitCommand: SplitCommand,
		Logger:       slog.New(slog.NewTextHandler(logs, nil)),
		Getenv: envOf(map[string]string{"PATH": os.Getenv("PATH"), "TZ": "Europe/Paris", "WEBHOOK_SECRET": "hush", "KEEP": "1",
			"HF_TOKEN": "hf_canary", "AWS_SESSION_TOKEN": "aws_canary", "ROBOT_DAEMON_TOKEN": "robot_canary"}),
		ExecEnv: []string{"KEEP"},
	})
	url := receiver(t, b, `env=exec:sh -c 'echo "secret=[$WEBHOOK_SECRET] keep=$KEEP tz=$TZ route=$WEBHOOK_ROUTE repo=$WEBHOOK_REPO_TYPE:$WEBHOOK_REPO_NAME scope=$WEBHOOK_EVENT_SCOPE"; env'`)
	if status, body := deliver(t, url+"/webhooks/env", payload); status != 200 {
		t.Fatalf("%d %v", status, body)
	}
	want := "secret=[] keep=1 tz=Europe/Paris route=env repo=space:alice/dance-app scope=repo.content"
	if !strings.Contains(logs.String(), want) {
		t.Errorf("command output not logged, or WEBHOOK_SECRET leaked to the command; want %q in:\n%s", want, logs)
	}
	if strings.Contains(logs.String(), "_canary") {
		t.Errorf("a credential of the receiver's environment reached the command:\n%s", logs)
	}
}

func TestExecActionFailureAndTimeout(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	b := NewBuilder(Config{SplitCommand: SplitCommand, ExecTimeout: 300 * time.Millisecond})
	url := receiver(t, b,
		`fails=exec:sh -c 'echo oops >&2; exit 3'`,
		`hangs=exec:sh -c 'sleep 30 & echo $! > `+pidFile+`; wait'`)
	status, body := deliver(t, url+"/webhooks/fails", payload)
	if status != 500 || body["error"] != "command sh exited with status 3" {
		t.Errorf("failing command: %d %v", status, body)
	}
	start := time.Now()
	status, body = deliver(t, url+"/webhooks/hangs", payload)
	if status != 504 || !strings.Contains(body["error"].(string), "killed after the 300ms timeout") {
		t.Errorf("hanging command: %d %v", status, body)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("timeout took %s", took)
	}
	pid, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	// The background child was in the command's process group: it must be gone too.
	deadline := time.Now().Add(3 * time.Second)
	for {
		if _, err := os.Stat("/proc/" + strings.TrimSpace(string(pid))); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %s of a timed-out command is still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestExecConcurrencyCap(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "lock")
	// mkdir fails if another copy holds the lock: with a cap of 1 no copy ever fails.
	b := NewBuilder(Config{SplitCommand: SplitCommand, ExecConcurrency: 1})
	url := receiver(t, b, `one=exec:sh -c 'mkdir `+lock+` || exit 9; sleep 0.05; rmdir `+lock+`'`)
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if status, _ := deliver(t, url+"/webhooks/one", payload); status != 200 {
				failed.Add(1)
			}
		}()
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d commands ran at the same time as another despite a cap of 1", failed.Load())
	}
}

func TestForwardRetriesUntilTheTargetRecovers(t *testing.T) {
	var calls atomic.Int32
	var got atomic.Value
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			http.Error(w, "warming up", http.StatusServiceUnavailable)
			return
		}
		b, _ := io.ReadAll(r.Body)
		got.Store(string(b))
		w.WriteHeader(http.StatusAccepted)
	}))
	defer target.Close()
	b := NewBuilder(Config{SplitCommand: SplitCommand, ForwardBackoff: 10 * time.Millisecond})
	url := receiver(t, b, "relay=forward:"+target.URL+"/in")
	status, body := deliver(t, url+"/webhooks/relay", payload)
	if status != 200 || body["status"] != 202.0 || body["attempts"] != 3.0 {
		t.Fatalf("%d %v", status, body)
	}
	if got.Load() != payload {
		t.Errorf("target got %v", got.Load())
	}
}

func TestForwardFailures(t *testing.T) {
	var calls atomic.Int32
	refuses := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "no", http.StatusBadRequest)
	}))
	defer refuses.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // a closed port on loopback: connection refused
	logs := &syncbuf.Buffer{}
	b := NewBuilder(Config{SplitCommand: SplitCommand, ForwardBackoff: 5 * time.Millisecond, ForwardAttempts: 3, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	url := receiver(t, b, "refused=forward:"+refuses.URL+"/?secret=topsecret", "down=forward:"+down.URL+"/hook?secret=topsecret")

	status, body := deliver(t, url+"/webhooks/refused", payload)
	if status != 502 || calls.Load() != 1 || !strings.Contains(body["error"].(string), "400 Bad Request") {
		t.Errorf("refusing target: %d %v after %d calls", status, body, calls.Load())
	}
	status, body = deliver(t, url+"/webhooks/down", payload)
	if status != 502 || !strings.Contains(body["error"].(string), "failed after 3 attempts") {
		t.Errorf("unreachable target: %d %v", status, body)
	}
	if strings.Contains(logs.String()+body["error"].(string), "topsecret") {
		t.Errorf("the target URL's secret leaked:\n%s\n%v", logs, body)
	}
}

func TestForwardStopsWhenTheCallerGivesUp(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	b := NewBuilder(Config{SplitCommand: SplitCommand, ForwardBackoff: time.Hour, ForwardAttempts: 5})
	h, err := b.Handler("r", "forward:"+down.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := webhook.Parse([]byte(payload))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = h(ctx, p, nil)
	if err == nil || time.Since(start) > 2*time.Second || !strings.Contains(err.Error(), "gave up after 1 attempts") {
		t.Fatalf("err = %v after %s", err, time.Since(start))
	}
}

// FuzzParseRoutes feeds arbitrary ROBOTHUB_ROUTES values (they come from the environment of a
// deployment): parsing either fails or gives trimmed, non-empty routes that read back the same from
// their canonical form; and a receiver built from them either fails with an error or serves every
// route at /webhooks/<name>.
func FuzzParseRoutes(f *testing.F) {
	for _, s := range []string{
		"hello=log", "seen=log; retrain=exec:./retrain.sh --fast\nrelay=forward:https://ci.example.com/hook",
		"team/retrain=log", "a=robot-update:http://127.0.0.1:8000", "=log", "a=", "a", ";;\n;", "a=b=c",
		"../x=log", "a=exec:sh -c 'echo $(id)'", "a=log;a=log", "é=log", "a=forward:ftp://x", "/a/=log",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		routes, err := ParseRoutes(list)
		if err != nil {
			return
		}
		var canonical strings.Builder
		for _, r := range routes {
			if r.Name == "" || r.Action == "" || r.Name != strings.TrimSpace(r.Name) || r.Action != strings.TrimSpace(r.Action) ||
				strings.ContainsAny(r.Name, "=;\n") || strings.ContainsAny(r.Action, ";\n") {
				t.Fatalf("ParseRoutes(%q): route %+v", list, r)
			}
			canonical.WriteString(r.Name + "=" + r.Action + "\n")
		}
		again, err := ParseRoutes(canonical.String())
		if err != nil || !reflect.DeepEqual(again, routes) {
			t.Fatalf("ParseRoutes(%q) = %+v; its canonical form %q reads %+v, %v", list, routes, canonical.String(), again, err)
		}
		env := map[string]string{RoutesEnv: list, webhook.SecretEnv: "hush"}
		discard := slog.New(slog.DiscardHandler)
		srv, err := NewServerFromEnv(func(k string) string { return env[k] }, Config{SplitCommand: SplitCommand, RobotUpdate: RobotUpdate, Logger: discard, Output: io.Discard})
		if err != nil {
			return
		}
		for _, r := range routes {
			path := webhook.RoutePrefix + strings.Trim(r.Name, "/")
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			if rec.Code != http.StatusMethodNotAllowed {
				t.Fatalf("routes %q: GET %s = %d, want 405 from the route's handler: %s", list, path, rec.Code, rec.Body)
			}
		}
	})
}

// TestExecNeedsRegistering: a receiver built without the exec or robot-update action (the Lambda
// bootstrap's default build) refuses such a route at start, saying so, and serves its other routes.
func TestExecNeedsRegistering(t *testing.T) {
	b := NewBuilder(Config{Logger: slog.New(slog.DiscardHandler)})
	_, err := b.Handler("build", "exec:true")
	if !errors.Is(err, ErrNoExec) || err.Error() != "route build: exec: this receiver was built without the exec action" {
		t.Fatalf("err = %v, want ErrNoExec naming the route", err)
	}
	_, err = b.Handler("robot", "robot-update:http://127.0.0.1:8000")
	if !errors.Is(err, ErrNoRobotUpdate) || err.Error() != "route robot: robot-update: this receiver was built without the robot-update action" {
		t.Fatalf("err = %v, want ErrNoRobotUpdate naming the route", err)
	}
	if _, err := b.Handler("seen", "log"); err != nil {
		t.Fatalf("log route: %v", err)
	}
}
