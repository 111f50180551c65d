package http_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/core/webhook"
)

// TestOfficialClient runs the public Python client (huggingface_hub) and its hf CLI, unmodified,
// against the real `robothub hub serve` binary: the flows of testdata/hfclient/flows.py (webhook
// updates and list order, create_repo(exist_ok=True), hf upload, upload_file, create_commit with
// deletions, the 10 MiB refusal, validate-yaml, hf download, hf_hub_download, snapshot_download,
// list_repo_tree, discussions). Our machines cannot install the client, so it needs its source:
//
//	git -C <huggingface_hub clone> archive v1.28.0 src | tar -x -C /tmp/hf-1.28.0
//	HF_CLIENT_SRC=/tmp/hf-1.28.0/src go test -run TestOfficialClient ./internal/hubemu
//
// with its dependencies importable by HF_CLIENT_PYTHON (default /usr/bin/python3; Debian's
// python3-httpx or python3-requests, -tqdm, -filelock, -fsspec, -packaging, -yaml, and for the 1.x
// CLI -click, -typer, -rich). HF_CLIENT_RECORD=1 also writes the exchanges to
// testdata/hfclient/huggingface_hub-<version>.json, which TestRecordedClientRequests replays.
func TestOfficialClient(t *testing.T) {
	src := os.Getenv("HF_CLIENT_SRC")
	if src == "" {
		t.Skip("HF_CLIENT_SRC is not set: it runs the public Python client's flows when it points at the src/ directory of a huggingface_hub source (see the test's comment); TestRecordedClientRequests replays the recorded ones")
	}
	python := os.Getenv("HF_CLIENT_PYTHON")
	if python == "" {
		python = "/usr/bin/python3"
	}
	version := clientVersion(t, src)
	work := t.TempDir()

	// The real binary.
	bin := filepath.Join(work, "robothub-server")
	build := exec.Command("go", "build", "-o", bin, "github.com/robothub/robothub/cli/robothub-server")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// A receiver for the space's events.
	rc := newReceiver(t, "s1")
	receiverBase := strings.TrimSuffix(rc.url(), "/hook")

	// The client talks to the recording proxy, which forwards to hub serve; the hub's public URL is
	// the proxy's, so that the links it answers with come back through it.
	rec, endpoint, setup := newRecorder(t)
	tokenFile := filepath.Join(work, "token")
	ctx, cancel := context.WithCancel(context.Background())
	serve := exec.CommandContext(ctx, bin, "hub", "serve", "--addr", "127.0.0.1:0", "--public-url", endpoint,
		"--data-dir", filepath.Join(work, "hub"), "--token-file", tokenFile, "--retry-delay", "50ms")
	serve.Env = append(os.Environ(), "NO_COLOR=1")
	stderr, _ := serve.StderrPipe()
	serve.Stdout = &bytes.Buffer{}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); serve.Wait() })
	addr := waitForListen(t, stderr)
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	hubToken := strings.TrimSpace(string(token))
	setup("http://"+addr, hubToken, receiverBase)

	shim, _ := filepath.Abs("testdata/hfclient/pyshim")
	env := append(os.Environ(), "PYTHONPATH="+src+string(os.PathListSeparator)+shim, "HF_ENDPOINT="+endpoint, "HF_TOKEN="+hubToken, "HF_HOME="+filepath.Join(work, "hfhome"),
		"HF_HUB_DISABLE_TELEMETRY=1", "HF_HUB_DISABLE_UPDATE_CHECK=1", "HF_HUB_DISABLE_PROGRESS_BARS=1", "NO_COLOR=1",
		"RECEIVER_URL="+receiverBase, "WORK="+work, "HUB_USER=local")
	flows := func(steps ...string) string {
		t.Helper()
		cmd := exec.Command(python, append([]string{"testdata/hfclient/flows.py"}, steps...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		t.Logf("flows %v:\n%s", steps, out)
		if err != nil {
			t.Fatalf("the client's flows %v failed: %v", steps, err)
		}
		return string(out)
	}
	out := flows("webhooks", "spaces", "downloads")

	// Every commit the client made was announced as a push.
	heads := regexp.MustCompile(`(?m)^head ([0-9a-f]{40})$`).FindAllStringSubmatch(out, -1)
	if len(heads) != 2 {
		t.Fatalf("the flows printed %d heads", len(heads))
	}
	for _, h := range heads {
		wait.For(t, 10*time.Second, "repo.content at "+h[1], func() bool {
			for _, p := range rc.received() {
				if p.Event.Scope == webhook.ScopeRepoContent && p.Repo.HeadSha == h[1] && len(p.UpdatedRefs) == 1 &&
					p.UpdatedRefs[0].Ref == "refs/heads/main" && *p.UpdatedRefs[0].NewSha == h[1] {
					return true
				}
			}
			return false
		})
	}

	// Discussions come from emitted events (through the proxy too, so that the replay has them).
	emit := func(body string) {
		req, _ := http.NewRequest("POST", endpoint+"/api/emulator/events", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+hubToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("emit %s: %v %v", body, err, resp)
		}
		resp.Body.Close()
	}
	emit(`{"repo":"space:local/app","scope":"discussion","action":"create","discussion":{"title":"Add a dance"},"comment":{"content":"it would be fun"}}`)
	emit(`{"repo":"space:local/app","scope":"discussion","action":"create","discussion":{"title":"Faster waves","isPullRequest":true},"comment":{"content":"please"}}`)
	emit(`{"repo":"space:local/app","scope":"discussion","action":"update","discussion":{"num":2,"status":"merged"}}`)
	flows("discussions")

	if os.Getenv("HF_CLIENT_RECORD") == "1" {
		rec.write(t, filepath.Join("testdata", "hfclient", "huggingface_hub-"+version+".json"), recording{
			Client: "huggingface_hub " + version,
			Source: "git tag v" + version + " of github.com/huggingface/huggingface_hub (src/), with Debian bookworm's Python 3.11 packages; hf_xet not installed",
			Flows:  "testdata/hfclient/flows.py webhooks spaces downloads; three emitted discussion events; flows.py discussions",
		})
	}
}

// clientVersion reads __version__ from the client's source.
func clientVersion(t *testing.T, src string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(src, "huggingface_hub", "__init__.py"))
	if err != nil {
		t.Fatalf("HF_CLIENT_SRC=%s is not the src/ directory of huggingface_hub: %v", src, err)
	}
	m := regexp.MustCompile(`(?m)^__version__ = "([^"]+)"`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("no __version__ in %s", src)
	}
	return string(m[1])
}

// waitForListen reads hub serve's log until it says where it listens.
func waitForListen(t *testing.T, stderr interface{ Read([]byte) (int, error) }) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			var rec map[string]any
			line := sc.Text()
			addr := ""
			if json.Unmarshal([]byte(line), &rec) == nil {
				addr, _ = rec["addr"].(string)
			} else if m := regexp.MustCompile(`addr=(\S+)`).FindStringSubmatch(line); m != nil && strings.Contains(line, "started") {
				addr = m[1]
			}
			if addr != "" && !sent {
				found <- addr
				sent = true
			}
		}
	}()
	select {
	case addr := <-found:
		return addr
	case <-time.After(30 * time.Second):
		t.Fatal("hub serve did not say where it listens")
		return ""
	}
}
