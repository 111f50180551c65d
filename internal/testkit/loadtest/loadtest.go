// Package loadtest drives the load benchmarks of the receiver: wrk (Debian's package) measures
// throughput at saturation, closed loop; vegeta (as a library) measures latency at a fixed offered
// rate, open loop, so that latency is the server's and not the queue a saturating client builds.
// Each server is compared with a bare net/http handler in the same run (Bare). Traffic goes to
// loopback only.
package loadtest

import (
	"bufio"
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Post is the request a load sends, over and over.
type Post struct {
	URL    string
	Body   []byte
	Header map[string]string
}

// WrkResult is what wrk measured at saturation.
type WrkResult struct {
	RPS    float64
	P99    time.Duration
	Non2xx int
}

// Wrk saturates p.URL for d with wrk: 2 threads, 64 connections, each sending p one after another.
func Wrk(p Post, d time.Duration) (WrkResult, error) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		return WrkResult{}, fmt.Errorf("wrk is not installed (apt-get install wrk): %w", err)
	}
	dir, err := os.MkdirTemp("", "loadtest-")
	if err != nil {
		return WrkResult{}, err
	}
	defer os.RemoveAll(dir)
	var lua strings.Builder
	fmt.Fprintf(&lua, "wrk.method = \"POST\"\nwrk.body = %s\n", luaString(string(p.Body)))
	for k, v := range p.Header {
		fmt.Fprintf(&lua, "wrk.headers[ %s ] = %s\n", luaString(k), luaString(v)) // spaced: [[ right after [ would be a call
	}
	script := filepath.Join(dir, "post.lua")
	if err := os.WriteFile(script, []byte(lua.String()), 0o600); err != nil {
		return WrkResult{}, err
	}
	out, err := exec.Command(wrk, "-t2", "-c64", "-d"+d.String(), "--latency", "-s", script, p.URL).CombinedOutput()
	if err != nil {
		return WrkResult{}, fmt.Errorf("wrk: %v\n%s", err, out)
	}
	return parseWrk(string(out))
}

func parseWrk(out string) (WrkResult, error) {
	var r WrkResult
	m := regexp.MustCompile(`Requests/sec:\s+([\d.]+)`).FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("no Requests/sec in wrk's output:\n%s", out)
	}
	r.RPS, _ = strconv.ParseFloat(m[1], 64)
	if m := regexp.MustCompile(`99%\s+([\d.]+)(us|ms|s)`).FindStringSubmatch(out); m != nil {
		r.P99, _ = time.ParseDuration(m[1] + strings.Replace(m[2], "us", "µs", 1))
	}
	if m := regexp.MustCompile(`Non-2xx or 3xx responses:\s+(\d+)`).FindStringSubmatch(out); m != nil {
		r.Non2xx, _ = strconv.Atoi(m[1])
	}
	return r, nil
}

// luaString quotes s as a Lua long string.
func luaString(s string) string {
	eq := ""
	for strings.Contains(s, "]"+eq+"]") {
		eq += "="
	}
	return "[" + eq + "[" + s + "]" + eq + "]"
}

// RateResult is the latency vegeta measured at a fixed rate.
type RateResult struct {
	P50, P99 time.Duration
	Errors   int // answers other than 200, and requests that failed
}

// AtRate sends rate requests a second for d over at most 64 connections, in this process.
func AtRate(p Post, rate int, d time.Duration) RateResult {
	header := http.Header{}
	for k, v := range p.Header {
		header.Set(k, v)
	}
	target := vegeta.Target{Method: "POST", URL: p.URL, Body: p.Body, Header: header}
	attacker := vegeta.NewAttacker(vegeta.Connections(64), vegeta.MaxConnections(64), vegeta.KeepAlive(true), vegeta.Timeout(10*time.Second))
	var m vegeta.Metrics
	for res := range attacker.Attack(vegeta.NewStaticTargeter(target), vegeta.Rate{Freq: rate, Per: time.Second}, d, "load") {
		m.Add(res)
	}
	m.Close()
	errs := 0
	for code, n := range m.StatusCodes {
		if code != "200" {
			errs += n
		}
	}
	return RateResult{P50: m.Latencies.P50, P99: m.Latencies.P99, Errors: errs}
}

// The test binary is started again as a helper process (an attacker, or the bare server) when one
// of these variables is set; Helper, called first in TestMain, runs it.
const (
	attackEnv = "ROBOTHUB_LOADTEST_ATTACK"
	bareEnv   = "ROBOTHUB_LOADTEST_BARE"
)

type attack struct {
	Post     Post
	Rate     int
	Duration time.Duration
}

// AtRateInSubprocess is AtRate in a process of its own (this test binary again, see Helper), so
// that the attacker's work and garbage do not land on a server in this process.
func AtRateInSubprocess(p Post, rate int, d time.Duration) (RateResult, error) {
	spec, _ := json.Marshal(attack{Post: p, Rate: rate, Duration: d})
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), attackEnv+"="+string(spec))
	out, err := cmd.Output()
	if err != nil {
		return RateResult{}, fmt.Errorf("attacker: %v\n%s", err, out)
	}
	var r RateResult
	if err := json.Unmarshal(out, &r); err != nil {
		return RateResult{}, fmt.Errorf("attacker's output %q: %v", out, err)
	}
	return r, nil
}

// Bare is the bare net/http handler a receiver is compared with: it reads the body, checks the
// secret in X-Webhook-Secret (in constant time), and answers {"message":"ok"}.
func Bare(secret string) http.Handler {
	ok := []byte(`{"message":"ok"}` + "\n")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("X-Webhook-Secret")), []byte(secret)) != 1 {
			http.Error(w, `{"error":"Invalid webhook secret."}`, http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(ok)
	})
}

// BareInSubprocess serves Bare(secret) on loopback in a process of its own (this test binary
// again, see Helper), as a receiver under test runs in its own, and returns its base URL and a
// function that stops it.
func BareInSubprocess(secret string) (string, func(), error) {
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), bareEnv+"="+secret)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("the bare server did not say where it listens: %v", err)
	}
	return strings.TrimSpace(line), stop, nil
}

// Helper runs this process as a helper when it was started as one, and exits; otherwise it
// returns at once. Call it first in TestMain.
func Helper() {
	if spec := os.Getenv(attackEnv); spec != "" {
		var a attack
		if err := json.Unmarshal([]byte(spec), &a); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		_ = json.NewEncoder(os.Stdout).Encode(AtRate(a.Post, a.Rate, a.Duration))
		os.Exit(0)
	}
	if secret, ok := os.LookupEnv(bareEnv); ok {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Printf("http://%s\n", ln.Addr())
		srv := &http.Server{Handler: Bare(secret), ReadHeaderTimeout: 10 * time.Second}
		_ = srv.Serve(ln)
		os.Exit(0)
	}
}

// Compact returns the hub's example payload of path, compact as the hub sends it (998 bytes for
// discussion-create-pr.json).
func Compact(path string) ([]byte, error) {
	pretty, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Compact(&b, pretty); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
