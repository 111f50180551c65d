package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/hubtest"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// BenchmarkWebhooksLsVersusCurl measures `robothub webhooks ls` as a user runs it (a fresh process
// per call, built like `make build`) against the local hub holding 1,000 webhooks, beside `curl`
// fetching the same list, alternating the two in the same run.
// Targets: <= 50 ms per process, and within 1.5x of curl (p50s).
//
//	go test -run '^$' -bench WebhooksLsVersusCurl -benchtime 100x ./cli/robothub
func BenchmarkWebhooksLsVersusCurl(b *testing.B) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		b.Skip("curl is not installed")
	}
	bin := buildForBench(b, ".")
	ctx := context.Background()
	emu := hubtest.Start(b, localhub.Config{})
	token, user := emu.Token(b, "alice", hubemu.RoleWrite)
	secret := "s3cret"
	for i := range 1000 {
		url := fmt.Sprintf("https://receiver-%d.example.com/webhooks/hook", i)
		watched := []hub.WatchedItem{{Type: "user", Name: "alice"}, {Type: "model", Name: fmt.Sprintf("alice/model-%d", i)}}
		if _, err := emu.CreateWebhook(ctx, user.ID, hubemu.WebhookInput{URL: &url, Watched: &watched, Secret: &secret}); err != nil {
			b.Fatal(err)
		}
	}
	env := append(os.Environ(), "HF_ENDPOINT="+emu.URL, "HF_TOKEN="+token)
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
		cu = append(cu, runOnce(curl, "-sS", "-f", "-H", "Authorization: Bearer "+token, emu.URL+"/api/settings/webhooks"))
	}
	b.StopTimer()
	mean := func(d []time.Duration) float64 {
		var s time.Duration
		for _, x := range d {
			s += x
		}
		return float64(s) / float64(len(d)) / float64(time.Millisecond)
	}
	b.ReportMetric(mean(ls), "ls-mean-ms")
	b.ReportMetric(medianMS(ls), "ls-p50-ms")
	b.ReportMetric(mean(cu), "curl-mean-ms")
	b.ReportMetric(medianMS(cu), "curl-p50-ms")
	b.ReportMetric(mean(ls)/mean(cu), "ls/curl")
	b.ReportMetric(medianMS(ls)/medianMS(cu), "ls/curl-p50")
}

// buildForBench builds the command pkg as make build does (the Makefile's BUILD_ENV, BUILD_TAGS and
// LDFLAGS' -s -w, -trimpath) into a temporary directory.
func buildForBench(b *testing.B, pkg string) string {
	name := filepath.Base(filepath.Clean(pkg))
	if pkg == "." {
		name = "robothub"
	}
	bin := filepath.Join(b.TempDir(), name)
	build := exec.Command("go", "build", "-trimpath", "-tags", "urfave_cli_no_docs", "-ldflags", "-s -w", "-o", bin, pkg)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// BenchmarkVersionAgainstMinimal holds `robothub --version` to a Go binary that only prints a version
// (testdata/version), all built as make build builds: from exec to exit, the median of 30 runs of
// each, alternated. version-ratio is robothub's over the minimal binary's. Target: 1.5x. Beside them
// runs the smallest urfave/cli program that speaks HTTP (testdata/clihttp), the floor under any
// front of this design: clihttp-ratio.
func BenchmarkVersionAgainstMinimal(b *testing.B) {
	bins := map[string]string{"robothub": buildForBench(b, "."), "minimal": buildForBench(b, "./testdata/version"),
		"clihttp": buildForBench(b, "./testdata/clihttp")}
	took := map[string][]time.Duration{}
	for range b.N {
		for range 30 {
			for _, name := range []string{"robothub", "minimal", "clihttp"} {
				start := time.Now()
				out, err := exec.Command(bins[name], "--version").Output()
				took[name] = append(took[name], time.Since(start))
				if err != nil || !strings.Contains(string(out), "version") {
					b.Fatalf("%s --version: %v: %s", name, err, out)
				}
			}
		}
	}
	b.ReportMetric(medianMS(took["robothub"]), "robothub-p50-ms")
	b.ReportMetric(medianMS(took["minimal"]), "minimal-p50-ms")
	b.ReportMetric(medianMS(took["clihttp"]), "clihttp-p50-ms")
	b.ReportMetric(medianMS(took["robothub"])/medianMS(took["minimal"]), "version-ratio")
	b.ReportMetric(medianMS(took["clihttp"])/medianMS(took["minimal"]), "clihttp-ratio")
}

// medianMS is the median of d in milliseconds.
func medianMS(d []time.Duration) float64 {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return float64(d[len(d)/2]) / float64(time.Millisecond)
}
