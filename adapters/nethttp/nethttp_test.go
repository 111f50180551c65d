package nethttp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/syncbuf"

	"github.com/robothub/robothub/core/webhook"
)

const payload = `{"event":{"action":"update","scope":"repo"},"repo":{"type":"model","name":"alice/bert"}}`

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func noenv(string) string { return "" }

// launch runs Launch in the background on a free loopback port and waits until it serves.
func launch(t *testing.T, srv *webhook.Server, opts Options) (base string, out *syncbuf.Buffer, stop func() error) {
	t.Helper()
	out = &syncbuf.Buffer{}
	opts.Out, opts.Logger = out, quiet
	if opts.Getenv == nil {
		opts.Getenv = noenv
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	addrCh := make(chan net.Addr, 1)
	opts.Ready = func(a net.Addr) { addrCh <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Launch(ctx, srv, opts) }()
	select {
	case a := <-addrCh:
		base = "http://" + a.String()
	case err := <-done:
		cancel()
		t.Fatalf("Launch: %v", err)
	}
	waitHealthy(t, base)
	var once sync.Once
	var result error
	stop = func() error {
		once.Do(func() { cancel(); result = <-done })
		return result
	}
	t.Cleanup(func() { _ = stop() })
	return base, out, stop
}

func waitHealthy(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/healthz never answered 200: %v", base, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func newReceiver(t *testing.T, opts ...webhook.Option) *webhook.Server {
	t.Helper()
	return webhook.NewServer(append([]webhook.Option{webhook.WithLogger(quiet), webhook.WithSecret("hush")}, opts...)...)
}

// post delivers the payload; a transport error is returned as status 0 and its text.
func post(url string) (int, string) {
	req, _ := http.NewRequest("POST", url, strings.NewReader(payload))
	req.Header.Set(webhook.SecretHeader, "hush")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestLaunchPrintsAddressesAndServes(t *testing.T) {
	srv := newReceiver(t)
	if err := srv.Add("hello", func(_ context.Context, p *webhook.Payload, _ http.Header) (any, error) {
		return "hello " + p.Repo.Name, nil
	}); err != nil {
		t.Fatal(err)
	}
	base, out, stop := launch(t, srv, Options{})
	for _, want := range []string{"Webhook receiver listening on " + base, "landing page   " + base + "/", "POST           " + base + "/webhooks/hello"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("start-up output lacks %q:\n%s", want, out)
		}
	}
	if status, body := post(base + "/webhooks/hello"); status != 200 || !strings.Contains(body, "hello alice/bert") {
		t.Fatalf("POST: %d %s", status, body)
	}
	if err := stop(); err != nil {
		t.Fatalf("clean shutdown returned %v", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("still serving after shutdown")
	}
}

// TestGracefulShutdownFinishesInFlightRequests: a delivery in progress when the signal arrives
// completes with its real answer.
func TestGracefulShutdownFinishesInFlightRequests(t *testing.T) {
	srv := newReceiver(t)
	started, release := make(chan struct{}), make(chan struct{})
	_ = srv.Add("slow", func(context.Context, *webhook.Payload, http.Header) (any, error) {
		close(started)
		<-release
		return "finished", nil
	})
	base, _, stop := launch(t, srv, Options{})
	type result struct {
		status int
		body   string
	}
	got := make(chan result, 1)
	go func() {
		s, b := post(base + "/webhooks/slow")
		got <- result{s, b}
	}()
	<-started
	var released atomic.Bool
	stopped := make(chan error, 1)
	go func() {
		err := stop()
		if !released.Load() {
			err = fmt.Errorf("shutdown returned (%v) before the in-flight request finished", err)
		}
		stopped <- err
	}()
	// Once the server refuses new connections, shutdown has begun; only then is the request let go.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://")); err != nil {
			break
		} else {
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatal("the server still accepts connections 5s after the shutdown began")
		}
	}
	released.Store(true)
	close(release)
	r := <-got
	if r.status != 200 || !strings.Contains(r.body, "finished") {
		t.Errorf("in-flight request got %d %s", r.status, r.body)
	}
	if err := <-stopped; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

func TestShutdownTimeoutIsReported(t *testing.T) {
	srv := newReceiver(t)
	started := make(chan struct{})
	unstick := make(chan struct{}) // the handler outlives the shutdown timeout, then the test
	t.Cleanup(func() { close(unstick) })
	_ = srv.Add("stuck", func(ctx context.Context, _ *webhook.Payload, _ http.Header) (any, error) {
		close(started)
		<-unstick
		return nil, nil
	})
	base, _, stop := launch(t, srv, Options{ShutdownTimeout: 100 * time.Millisecond})
	go post(base + "/webhooks/stuck")
	<-started
	if err := stop(); err == nil || !strings.Contains(err.Error(), "still running after 100ms") {
		t.Fatalf("stop() = %v", err)
	}
}

func TestResolveAddr(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	cases := []struct {
		addr   string
		getenv func(string) string
		want   string
	}{
		{"", env(), "127.0.0.1:7860"},
		{"", env("PORT", "9000"), "127.0.0.1:9000"},
		{"", env("SPACE_HOST", "alice-hooks.hf.space"), "0.0.0.0:7860"},
		{"", env("SPACE_HOST", "alice-hooks.hf.space", "PORT", "8080"), "0.0.0.0:8080"},
		{"[::1]:7000", env("PORT", "9000", "SPACE_HOST", "x"), "[::1]:7000"},
	}
	for _, c := range cases {
		if got := ResolveAddr(c.addr, c.getenv); got != c.want {
			t.Errorf("ResolveAddr(%q) = %q, want %q", c.addr, got, c.want)
		}
	}
}

func TestSpacePrintsPublicURLs(t *testing.T) {
	srv := newReceiver(t)
	_ = srv.Add("retrain", func(context.Context, *webhook.Payload, http.Header) (any, error) { return nil, nil })
	var published string
	base, out, _ := launch(t, srv, Options{
		Getenv:      func(k string) string { return map[string]string{"SPACE_HOST": "alice-hooks.hf.space"}[k] },
		OnPublicURL: func(_ context.Context, u string) { published = u },
	})
	if !strings.Contains(out.String(), "POST           https://alice-hooks.hf.space/webhooks/retrain") {
		t.Errorf("output lacks the Space URL:\n%s", out)
	}
	if published != "https://alice-hooks.hf.space" {
		t.Errorf("OnPublicURL got %q", published)
	}
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), "https://alice-hooks.hf.space/webhooks/retrain") {
		t.Error("landing page does not show the Space URL")
	}
}

// fakeCloudflared prints what cloudflared prints, documentation links first, and stays up.
const fakeCloudflared = `echo "args: $*"
echo "INF Thank you for trying Cloudflare Tunnel. See https://developers.cloudflare.com/cloudflare-one/connections/connect-apps"
echo "INF Requesting new quick Tunnel on trycloudflare.com..."
echo "INF +--------------------------------------------------------------------------------------------+" >&2
echo "INF |  https://quiet-lake-bright-owl.trycloudflare.com                                           |" >&2
echo "INF +--------------------------------------------------------------------------------------------+" >&2
echo $$ > "$PIDFILE"
exec sleep 60`

func TestCommandTunnel(t *testing.T) {
	pidFile := t.TempDir() + "/pid"
	t.Setenv("PIDFILE", pidFile)
	srv := newReceiver(t)
	_ = srv.Add("hello", func(context.Context, *webhook.Payload, http.Header) (any, error) { return nil, nil })
	tun := &CommandTunnel{Argv: []string{"sh", "-c", fakeCloudflared, "sh", "tunnel", "--url", "{url}"}, Logger: quiet}
	var published string
	base, out, stop := launch(t, srv, Options{Tunnel: tun, OnPublicURL: func(_ context.Context, u string) { published = u }})
	if published != "https://quiet-lake-bright-owl.trycloudflare.com" {
		t.Fatalf("public URL = %q\n%s", published, out)
	}
	if !strings.Contains(out.String(), "POST           https://quiet-lake-bright-owl.trycloudflare.com/webhooks/hello") {
		t.Errorf("public route not printed:\n%s", out)
	}
	_ = base
	pid := readPID(t, pidFile)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
}

func TestCommandTunnelSubstitutesAndPattern(t *testing.T) {
	tun := &CommandTunnel{
		Argv:       []string{"sh", "-c", `echo "forwarding $1 port $2 host $3"; echo "url=https://x.example.dev/base ready"; sleep 60`, "sh", "{url}", "{port}", "{host}"},
		URLPattern: regexp.MustCompile(`url=(https://\S+)`),
	}
	defer tun.Close()
	u, err := tun.Open(context.Background(), "http://127.0.0.1:7861")
	if err != nil || u != "https://x.example.dev/base" {
		t.Fatalf("Open = %q, %v", u, err)
	}
}

func TestCommandTunnelFailures(t *testing.T) {
	exits := &CommandTunnel{Argv: []string{"sh", "-c", "echo 'error: not logged in' >&2; exit 4"}}
	_, err := exits.Open(context.Background(), "http://127.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "exited before printing a public https URL") || !strings.Contains(err.Error(), "not logged in") {
		t.Errorf("exiting tunnel: %v", err)
	}
	silent := &CommandTunnel{Argv: []string{"sleep", "60"}}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := silent.Open(ctx, "http://127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), "printed no public https URL in time") {
		t.Errorf("silent tunnel: %v", err)
	}
	missing := &CommandTunnel{Argv: []string{"no-such-tunnel-program"}}
	if _, err := missing.Open(context.Background(), "http://127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), "no-such-tunnel-program") {
		t.Errorf("missing program: %v", err)
	}
	// A server whose tunnel fails stops with the error instead of serving half-configured.
	srv := newReceiver(t)
	err = Launch(context.Background(), srv, Options{Addr: "127.0.0.1:0", Tunnel: exits, Getenv: noenv, Out: io.Discard, Logger: quiet})
	if err == nil || !strings.Contains(err.Error(), "public tunnel (sh)") {
		t.Errorf("Launch with a failing tunnel: %v", err)
	}
}

func TestNgrokErrorsKeepTheTokenSecret(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	tun := &NgrokTunnel{Authtoken: "2abcSECRETTOKEN_xyz", ConnectURL: closed, Logger: quiet}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	_, err = tun.Open(ctx, "http://127.0.0.1:7860")
	if err == nil {
		t.Fatal("ngrok connected to a closed port")
	}
	if strings.Contains(err.Error(), "SECRETTOKEN") || !strings.HasPrefix(err.Error(), "ngrok:") {
		t.Errorf("error = %v", err)
	}
	if _, err := (&NgrokTunnel{}).Open(ctx, "http://127.0.0.1:7860"); err == nil || !strings.Contains(err.Error(), NgrokAuthtokenEnv) {
		t.Errorf("no token: %v", err)
	}
}

func readPID(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(file)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", file)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tunnel process %d still running after Close", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
