package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// `robothub ... | tee log`, then Ctrl-C: tee goes first, and robothub's next write to stdout hit a
// broken pipe. It died of SIGPIPE (mid-shutdown in dev, leaving the robot's app orphaned); now it
// stops as on Ctrl-C, with exit code 0. Here the reader of a receiver's stdout goes away, and a
// delivery to its log route (which prints the payload on stdout) writes to the broken pipe.
func TestBrokenStdoutStopsCleanly(t *testing.T) {
	bin, err := exec.LookPath("robothub")
	if err != nil {
		t.Fatalf("robothub is not on PATH (testscript puts it there): %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--tunnel", "none", "--route", "seen=log")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	cmd.Stdout = w
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	base := ""
	rx := regexp.MustCompile(`Webhook receiver listening on (http://\S+)`)
	for sc := bufio.NewScanner(r); base == "" && sc.Scan(); {
		if m := rx.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatal("the receiver did not print its address")
	}
	r.Close() // tee is gone

	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// A delivery to the log route writes to stdout, if nothing else has since the reader went.
	if resp, err := http.Post(base+"/webhooks/seen", "application/json", strings.NewReader(pushPayload)); err == nil {
		resp.Body.Close()
	}
	select {
	case err := <-done:
		log, _ := os.ReadFile(stderr.Name())
		if err != nil || cmd.ProcessState.ExitCode() != 0 {
			t.Fatalf("robothub after its stdout broke: %v (%s), want exit 0 as on Ctrl-C\n%s", err, cmd.ProcessState, log)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("robothub kept running 30 s after its stdout broke")
	}
}
