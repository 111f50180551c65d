package nethttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/robothub/robothub/core/webhook"
)

// BenchmarkReceiverLoad is the receiver's load command. On loopback it serves the receiver (secret
// checked, the hub's 1 KB example payload parsed, a handler that returns nothing, a log line per
// delivery written to a file) and, beside it, a bare net/http handler that only reads the body. In the
// same run it measures both:
//
//   - throughput at saturation: wrk (Debian's package), 2 threads, 64 connections, closed loop;
//
//   - latency at a fixed offered load: vegeta (as a Go library), 5,000 requests/s over 64 connections,
//     open loop, so that latency is the server's and not the queue a saturating client builds.
//
//     go test -run '^$' -bench ReceiverLoad -benchtime 1x ./adapters/nethttp   (make load-receiver)
//
// Targets: receiver throughput >= 0.8x the bare handler's; receiver p99 <= 2 ms.
// ROBOTHUB_LOAD_DURATION (default 5s) sets the length of each phase.
func BenchmarkReceiverLoad(b *testing.B) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		b.Skip("wrk is not installed: apt-get install wrk")
	}
	duration := 5 * time.Second
	if d, err := time.ParseDuration(os.Getenv("ROBOTHUB_LOAD_DURATION")); err == nil {
		duration = d
	}
	pretty, err := os.ReadFile("../../core/webhook/testdata/payloads/discussion-create-pr.json")
	if err != nil {
		b.Fatal(err)
	}
	var compact bytes.Buffer // the hub sends compact JSON: this one is 998 bytes
	if err := json.Compact(&compact, pretty); err != nil {
		b.Fatal(err)
	}
	body := compact.Bytes()

	logFile, err := os.Create(filepath.Join(b.TempDir(), "receiver.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer logFile.Close()
	recv := webhook.NewServer(webhook.WithSecret("load-secret"), webhook.WithLogger(slog.New(slog.NewTextHandler(logFile, nil))))
	if err := recv.Add("bench", func(context.Context, *webhook.Payload, http.Header) (any, error) { return nil, nil }); err != nil {
		b.Fatal(err)
	}
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"message":"ok"}` + "\n"))
	})
	bareURL := serveOnLoopback(b, bare, "/")
	recvURL := serveOnLoopback(b, recv, "/webhooks/bench")
	for _, u := range []string{bareURL, recvURL} {
		req, _ := http.NewRequest("POST", u, bytes.NewReader(body))
		req.Header.Set(webhook.SecretHeader, "load-secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("%s does not answer 200: %v %v", u, err, resp)
		}
		resp.Body.Close()
	}

	script := filepath.Join(b.TempDir(), "post.lua")
	lua := fmt.Sprintf("wrk.method = \"POST\"\nwrk.body = %s\nwrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.headers[\"X-Webhook-Secret\"] = \"load-secret\"\n", luaString(string(body)))
	if err := os.WriteFile(script, []byte(lua), 0o600); err != nil {
		b.Fatal(err)
	}
	saturate := func(url string) wrkResult {
		out, err := exec.Command(wrk, "-t2", "-c64", "-d"+duration.String(), "--latency", "-s", script, url).CombinedOutput()
		if err != nil {
			b.Fatalf("wrk: %v\n%s", err, out)
		}
		return parseWrk(b, string(out))
	}
	steady := func(url string) vegetaResult { return attackAtRate(b, url, body, 5000, duration) }

	b.ResetTimer()
	// Alternate the two servers and keep each one's best run, so that a burst of other work on the
	// machine does not decide the comparison.
	var bareMax, recvMax wrkResult
	for i := 0; i < 2; i++ {
		if r := saturate(bareURL); r.rps > bareMax.rps {
			bareMax = r
		}
		if r := saturate(recvURL); r.rps > recvMax.rps {
			recvMax = r
		}
	}
	bareSteady, recvSteady := steady(bareURL), steady(recvURL)
	b.StopTimer()

	for _, r := range []struct {
		name string
		w    wrkResult
		v    vegetaResult
	}{{"bare", bareMax, bareSteady}, {"receiver", recvMax, recvSteady}} {
		b.Logf("%-8s saturated: %7.0f req/s (p99 %s, non-2xx %d) | at 5000 req/s: p50 %s p99 %s, %d errors",
			r.name, r.w.rps, r.w.p99, r.w.non2xx, r.v.p50, r.v.p99, r.v.errors)
		if r.w.non2xx > 0 || r.v.errors > 0 {
			b.Errorf("%s answered errors under load", r.name)
		}
	}
	b.ReportMetric(recvMax.rps, "receiver-req/s")
	b.ReportMetric(bareMax.rps, "bare-req/s")
	b.ReportMetric(recvMax.rps/bareMax.rps, "receiver/bare")
	b.ReportMetric(float64(recvSteady.p99.Microseconds())/1000, "receiver-p99-ms")
	b.ReportMetric(float64(bareSteady.p99.Microseconds())/1000, "bare-p99-ms")
}

func serveOnLoopback(b *testing.B, h http.Handler, path string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	b.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String() + path
}

type vegetaResult struct {
	p50, p99 time.Duration
	errors   int
}

// attackRequest is what the attacking process is asked to do.
type attackRequest struct {
	URL      string
	Body     []byte
	Rate     int
	Duration time.Duration
}

// attackEnv makes the test binary an attacker: see TestMain.
const attackEnv = "ROBOTHUB_VEGETA_ATTACK"

// attackAtRate sends rate POSTs per second for d over at most 64 connections and measures latency.
// The attacker runs in its own process (this test binary again), so that its work and garbage do not
// land on the server it measures.
func attackAtRate(b *testing.B, url string, body []byte, rate int, d time.Duration) vegetaResult {
	req, _ := json.Marshal(attackRequest{URL: url, Body: body, Rate: rate, Duration: d})
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), attackEnv+"="+string(req))
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("attacker: %v\n%s", err, out)
	}
	var r struct {
		P50, P99 time.Duration
		Errors   int
	}
	if err := json.Unmarshal(out, &r); err != nil {
		b.Fatalf("attacker output %q: %v", out, err)
	}
	return vegetaResult{p50: r.P50, p99: r.P99, errors: r.Errors}
}

// runAttack is the attacking process: it prints the latency percentiles as JSON.
func runAttack(spec string) {
	var a attackRequest
	if err := json.Unmarshal([]byte(spec), &a); err != nil {
		panic(err)
	}
	target := vegeta.Target{Method: "POST", URL: a.URL, Body: a.Body, Header: http.Header{
		"Content-Type": {"application/json"}, webhook.SecretHeader: {"load-secret"}}}
	attacker := vegeta.NewAttacker(vegeta.Connections(64), vegeta.MaxConnections(64), vegeta.KeepAlive(true), vegeta.Timeout(10*time.Second))
	var m vegeta.Metrics
	for res := range attacker.Attack(vegeta.NewStaticTargeter(target), vegeta.Rate{Freq: a.Rate, Per: time.Second}, a.Duration, "load") {
		m.Add(res)
	}
	m.Close()
	errs := 0
	for code, n := range m.StatusCodes {
		if code != "200" {
			errs += n
		}
	}
	_ = json.NewEncoder(os.Stdout).Encode(struct {
		P50, P99 time.Duration
		Errors   int
	}{m.Latencies.P50, m.Latencies.P99, errs})
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(attackEnv); spec != "" {
		runAttack(spec)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type wrkResult struct {
	rps    float64
	p99    time.Duration
	non2xx int
}

func parseWrk(b *testing.B, out string) wrkResult {
	var r wrkResult
	m := regexp.MustCompile(`Requests/sec:\s+([\d.]+)`).FindStringSubmatch(out)
	if m == nil {
		b.Fatalf("no Requests/sec in wrk output:\n%s", out)
	}
	r.rps, _ = strconv.ParseFloat(m[1], 64)
	if m := regexp.MustCompile(`99%\s+([\d.]+)(us|ms|s)`).FindStringSubmatch(out); m != nil {
		r.p99, _ = time.ParseDuration(m[1] + strings.Replace(m[2], "us", "µs", 1))
	}
	if m := regexp.MustCompile(`Non-2xx or 3xx responses:\s+(\d+)`).FindStringSubmatch(out); m != nil {
		r.non2xx, _ = strconv.Atoi(m[1])
	}
	return r
}

// luaString quotes s as a Lua long string.
func luaString(s string) string {
	eq := ""
	for strings.Contains(s, "]"+eq+"]") {
		eq += "="
	}
	return "[" + eq + "[" + s + "]" + eq + "]"
}
