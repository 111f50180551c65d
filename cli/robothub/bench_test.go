package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// BenchmarkWebhooksLsVersusCurl measures `robothub webhooks ls` as a user runs it (a fresh process
// per call, built like `make build`) against the local hub holding 1,000 webhooks, beside `curl`
// fetching the same list, alternating the two in the same run.
// Targets: <= 50 ms per process, and within 3x of curl.
//
//	go test -run '^$' -bench WebhooksLsVersusCurl -benchtime 100x ./cli/robothub
func BenchmarkWebhooksLsVersusCurl(b *testing.B) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		b.Skip("curl is not installed")
	}
	bin := filepath.Join(b.TempDir(), "robothub")
	if out, err := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	ctx := context.Background()
	emu, err := localhub.Open(ctx, localhub.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer emu.Close()
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	token, user, err := emu.CreateToken(ctx, "alice", hubemu.RoleWrite, "bench")
	if err != nil {
		b.Fatal(err)
	}
	secret := "s3cret"
	for i := range 1000 {
		url := fmt.Sprintf("https://receiver-%d.example.com/webhooks/hook", i)
		watched := []hub.WatchedItem{{Type: "user", Name: "alice"}, {Type: "model", Name: fmt.Sprintf("alice/model-%d", i)}}
		if _, err := emu.CreateWebhook(ctx, user.ID, hubemu.WebhookInput{URL: &url, Watched: &watched, Secret: &secret}); err != nil {
			b.Fatal(err)
		}
	}
	env := append(os.Environ(), "HF_ENDPOINT="+srv.URL, "HF_TOKEN="+token)
	runOnce := func(name string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		start := time.Now()
		out, err := cmd.Output()
		took := time.Since(start)
		if err != nil || len(out) < 1000*40 {
			b.Fatalf("%s: %v (%d bytes of output)", name, err, len(out))
		}
		return took
	}
	var ls, cu []time.Duration
	b.ResetTimer()
	for b.Loop() {
		ls = append(ls, runOnce(bin, "webhooks", "ls"))
		cu = append(cu, runOnce(curl, "-sS", "-f", "-H", "Authorization: Bearer "+token, srv.URL+"/api/settings/webhooks"))
	}
	b.StopTimer()
	mean := func(d []time.Duration) float64 {
		var s time.Duration
		for _, x := range d {
			s += x
		}
		return float64(s) / float64(len(d)) / float64(time.Millisecond)
	}
	median := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[len(d)/2]) / float64(time.Millisecond)
	}
	b.ReportMetric(mean(ls), "ls-mean-ms")
	b.ReportMetric(median(ls), "ls-p50-ms")
	b.ReportMetric(mean(cu), "curl-mean-ms")
	b.ReportMetric(median(cu), "curl-p50-ms")
	b.ReportMetric(mean(ls)/mean(cu), "ls/curl")
}
