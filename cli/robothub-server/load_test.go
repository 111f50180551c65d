package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/loadtest"
)

// BenchmarkLogRouteLoad is the load command of `robothub serve --route bench=log`, as a user runs
// it: the program built as make build builds it, its log lines on stdout going to a file, against
// the bare net/http handler (loadtest.Bare, in a process of its own too) in the same run: wrk at
// saturation, vegeta at 5,000 requests/s (see BenchmarkReceiverLoad in adapters/nethttp).
//
//	go test -run '^$' -bench LogRouteLoad -benchtime 1x ./cli/robothub
//
// Target (issue 21): throughput >= 0.75x the bare handler's.
func BenchmarkLogRouteLoad(b *testing.B) {
	const secret = "load-secret"
	body, err := loadtest.Compact("../../core/webhook/testdata/payloads/discussion-create-pr.json")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	bin := filepath.Join(dir, "robothub")
	if out, err := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	lines, err := os.Create(filepath.Join(dir, "deliveries.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer lines.Close()
	serve := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--tunnel", "none", "--route", "bench=log")
	serve.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "WEBHOOK_SECRET=" + secret}
	serve.Stdout = lines
	if err := serve.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = serve.Process.Kill(); _ = serve.Wait() }()
	base := ""
	listening := regexp.MustCompile(`Webhook receiver listening on (http://\S+)`)
	for deadline := time.Now().Add(30 * time.Second); base == ""; time.Sleep(20 * time.Millisecond) {
		out, _ := os.ReadFile(lines.Name())
		if m := listening.FindSubmatch(out); m != nil {
			base = string(m[1])
		} else if time.Now().After(deadline) {
			b.Fatalf("robothub serve did not say where it listens:\n%s", out)
		}
	}
	bare, stop, err := loadtest.BareInSubprocess(secret)
	if err != nil {
		b.Fatal(err)
	}
	defer stop()

	b.ResetTimer()
	r := loadtest.Compare(b, body, secret, bare, base+"/webhooks/bench")
	b.StopTimer()
	r.Report(b)
	if out, err := os.ReadFile(lines.Name()); err != nil || !regexp.MustCompile(`(?m)^\{"time":"[^"]+","route":"bench",`).Match(out) {
		b.Errorf("the log route wrote no line (%v)", err)
	}
}
