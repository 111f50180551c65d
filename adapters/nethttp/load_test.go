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

	"github.com/robothub/robothub/core/webhook"
)

// TestLoadReceiverVersusBareHandler is the receiver's load command. It serves, on loopback, the
// receiver (secret checked, 1 KB payload parsed, a handler that returns nothing, a log line per
// delivery written to a file) and a bare net/http handler that only reads the body, then drives
// both with wrk (Debian's package) in the same run and compares them:
//
//	ROBOTHUB_LOAD=1 go test -run TestLoadReceiverVersusBareHandler -v ./adapters/nethttp
//
// Targets: receiver throughput >= 0.8x the bare handler's, receiver p99 <= 2 ms.
// ROBOTHUB_LOAD_DURATION (default 10s) and ROBOTHUB_LOAD_CONNECTIONS (default 64) tune it.
func TestLoadReceiverVersusBareHandler(t *testing.T) {
	if os.Getenv("ROBOTHUB_LOAD") == "" {
		t.Skip("load command: set ROBOTHUB_LOAD=1 to run it")
	}
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Fatal("wrk is not installed: apt-get install wrk")
	}
	duration := envOr("ROBOTHUB_LOAD_DURATION", "10s")
	conns := envOr("ROBOTHUB_LOAD_CONNECTIONS", "64")
	pretty, err := os.ReadFile("../../core/webhook/testdata/payloads/discussion-create-pr.json")
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer // the hub sends compact JSON: this one is 998 bytes
	if err := json.Compact(&compact, pretty); err != nil {
		t.Fatal(err)
	}
	body := compact.Bytes()

	logFile, err := os.Create(filepath.Join(t.TempDir(), "receiver.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	recv := webhook.NewServer(webhook.WithSecret("load-secret"), webhook.WithLogger(slog.New(slog.NewTextHandler(logFile, nil))))
	if err := recv.Add("bench", func(context.Context, *webhook.Payload, http.Header) (any, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"message":"ok"}` + "\n"))
	})

	script := filepath.Join(t.TempDir(), "post.lua")
	lua := fmt.Sprintf("wrk.method = \"POST\"\nwrk.body = %s\nwrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.headers[\"X-Webhook-Secret\"] = \"load-secret\"\n", luaString(string(body)))
	if err := os.WriteFile(script, []byte(lua), 0o600); err != nil {
		t.Fatal(err)
	}

	measure := func(name string, h http.Handler, path string) wrkResult {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = hs.Serve(ln) }()
		defer hs.Close()
		url := "http://" + ln.Addr().String() + path
		// Check once that the target answers 200, so wrk measures successes, not errors.
		req, _ := http.NewRequest("POST", url, strings.NewReader(string(body)))
		req.Header.Set(webhook.SecretHeader, "load-secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s does not answer 200: %v %v", name, err, resp)
		}
		resp.Body.Close()
		out, err := exec.Command(wrk, "-t2", "-c"+conns, "-d"+duration, "--latency", "-s", script, url).CombinedOutput()
		if err != nil {
			t.Fatalf("wrk: %v\n%s", err, out)
		}
		r := parseWrk(t, string(out))
		t.Logf("%-9s %9.0f req/s  p50 %-8s p99 %-8s non-2xx %d", name, r.rps, r.p50, r.p99, r.non2xx)
		return r
	}

	bareRes := measure("bare", bare, "/")
	recvRes := measure("receiver", recv, "/webhooks/bench")
	ratio := recvRes.rps / bareRes.rps
	t.Logf("receiver/bare throughput: %.2f (target >= 0.80); receiver p99 %s (target <= 2ms)", ratio, recvRes.p99)
	if recvRes.non2xx > 0 || bareRes.non2xx > 0 {
		t.Errorf("non-2xx answers under load: receiver %d, bare %d", recvRes.non2xx, bareRes.non2xx)
	}
	if ratio < 0.8 {
		t.Errorf("receiver throughput is %.2fx the bare handler's, below 0.8x", ratio)
	}
	if recvRes.p99 > 2*time.Millisecond {
		t.Errorf("receiver p99 %s is over 2ms", recvRes.p99)
	}
}

type wrkResult struct {
	rps      float64
	p50, p99 time.Duration
	non2xx   int
}

func parseWrk(t *testing.T, out string) wrkResult {
	t.Helper()
	var r wrkResult
	if m := regexp.MustCompile(`Requests/sec:\s+([\d.]+)`).FindStringSubmatch(out); m != nil {
		r.rps, _ = strconv.ParseFloat(m[1], 64)
	} else {
		t.Fatalf("no Requests/sec in wrk output:\n%s", out)
	}
	for _, p := range []struct {
		label string
		dst   *time.Duration
	}{{"50%", &r.p50}, {"99%", &r.p99}} {
		m := regexp.MustCompile(regexp.QuoteMeta(p.label) + `\s+([\d.]+)(us|ms|s)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no %s latency in wrk output:\n%s", p.label, out)
		}
		d, _ := time.ParseDuration(m[1] + strings.Replace(m[2], "us", "µs", 1))
		*p.dst = d
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

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
