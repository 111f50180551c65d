package nethttp

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/testkit/loadtest"
)

// BenchmarkReceiverLoad is the receiver's load command. On loopback it serves the receiver (secret
// checked, the hub's 1 KB example payload parsed, a Go handler that returns nothing, its log
// written to a file) and, beside it, a bare net/http handler that reads the body and checks the
// secret (loadtest.Bare). In the same run it measures both:
//
//   - throughput at saturation: wrk (Debian's package), 2 threads, 64 connections, closed loop;
//
//   - latency at a fixed offered load: vegeta, 5,000 requests/s over 64 connections, open loop, in
//     a process of its own so that its work and garbage do not land on the servers.
//
// Each is measured in five rounds, the two servers in turn, and reported as the median of the
// rounds' ratios (loadtest.Compare).
//
//	go test -run '^$' -bench ReceiverLoad -benchtime 1x ./adapters/nethttp   (make load-receiver)
//
// Targets (issue 21): receiver throughput >= 0.85x the bare handler's; receiver p99 at 5,000 req/s
// <= 1.5x the bare handler's. ROBOTHUB_LOAD_DURATION (default 5s) sets the length of each phase.
func BenchmarkReceiverLoad(b *testing.B) {
	body, err := loadtest.Compact("../../core/webhook/testdata/payloads/discussion-create-pr.json")
	if err != nil {
		b.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(b.TempDir(), "receiver.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer logFile.Close()
	recv := webhook.NewServer(webhook.WithSecret("load-secret"), webhook.WithLogger(slog.New(slog.NewTextHandler(logFile, nil))))
	if err := recv.Add("bench", func(context.Context, *webhook.Payload, http.Header) (any, error) { return nil, nil }); err != nil {
		b.Fatal(err)
	}
	bare := serveOnLoopback(b, loadtest.Bare("load-secret"))
	recvURL := serveOnLoopback(b, recv) + "/webhooks/bench"
	b.ResetTimer()
	r := loadtest.Compare(b, body, "load-secret", bare, recvURL)
	b.StopTimer()
	r.Report(b)
}

func serveOnLoopback(b *testing.B, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	b.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String()
}

func TestMain(m *testing.M) {
	loadtest.Helper()
	os.Exit(m.Run())
}
