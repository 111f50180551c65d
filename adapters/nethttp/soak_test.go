package nethttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/testkit/receivertest"
)

// SoakDurationEnv sets how long TestReceiverSoak keeps the receiver under load (a Go duration);
// `make soak` sets it. Unset, the soak lasts defaultSoak, which keeps go test quick.
const SoakDurationEnv = "ROBOTHUB_SOAK_DURATION"

const defaultSoak = 5 * time.Second

// soakSample is the process's state at one moment of the soak.
type soakSample struct {
	at         time.Duration
	goroutines int
	heap       uint64 // bytes of live heap, after a GC
	requests   int64
}

func takeSample(start time.Time, requests int64) soakSample {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return soakSample{at: time.Since(start).Round(time.Millisecond), goroutines: runtime.NumGoroutine(), heap: ms.HeapAlloc, requests: requests}
}

func (s soakSample) String() string {
	return fmt.Sprintf("%8s  %6d goroutines  %7.2f MiB heap  %9d requests", s.at, s.goroutines, float64(s.heap)/(1<<20), s.requests)
}

// TestReceiverSoak keeps the receiver (robothub serve's, on 127.0.0.1) under sustained concurrent
// load: good deliveries over kept-alive and fresh connections, with wrong secrets, malformed JSON,
// unknown routes and oversized bodies mixed in. Every answer must be the expected one, and once the
// load stops the goroutines and the live heap must be back where they were after the warm-up: no
// growth per request or per connection.
func TestReceiverSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("a soak of seconds: not under -short")
	}
	duration := defaultSoak
	if v := os.Getenv(SoakDurationEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s=%q: %v", SoakDurationEnv, v, err)
		}
		duration = d
	}
	srv := receivertest.NewReceiver(t, false, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, srv, Options{Getenv: noenv, Logger: quiet, Out: io.Discard}) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()

	type request struct {
		name, path, secret string
		body               []byte
		status             int
	}
	oversized := bytes.Repeat([]byte("x"), webhook.DefaultMaxBodyBytes+1)
	mix := []request{
		{"delivery", "/webhooks/hello", receivertest.Secret, receivertest.Payload, 200},
		{"delivery", "/webhooks/hello", receivertest.Secret, receivertest.Payload, 200},
		{"delivery", "/webhooks/team/retrain", receivertest.Secret, receivertest.Payload, 200},
		{"delivery", "/webhooks/hello", receivertest.Secret, receivertest.Payload, 200},
		{"wrong secret", "/webhooks/hello", "guess", receivertest.Payload, 403},
		{"malformed JSON", "/webhooks/hello", receivertest.Secret, []byte(`{"event":`), 400},
		{"unknown route", "/webhooks/nope", receivertest.Secret, receivertest.Payload, 404},
		{"oversized body", "/webhooks/hello", receivertest.Secret, oversized, 413},
	}
	var requests, failures atomic.Int64
	var firstFailure sync.Once
	load := func(d time.Duration) {
		stop := time.Now().Add(d)
		var wg sync.WaitGroup
		for worker := range 2 * runtime.GOMAXPROCS(0) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Half the workers keep their connection alive, half open one per request.
				tr := &http.Transport{DisableKeepAlives: worker%2 == 1, MaxIdleConnsPerHost: 1}
				defer tr.CloseIdleConnections()
				client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
				for i := worker; time.Now().Before(stop); i++ {
					r := mix[i%len(mix)]
					req, _ := http.NewRequest("POST", base+r.path, bytes.NewReader(r.body))
					req.Header.Set(webhook.SecretHeader, r.secret)
					req.Header.Set("Content-Type", "application/json")
					resp, err := client.Do(req)
					requests.Add(1)
					if err == nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					if err != nil && r.status == http.StatusRequestEntityTooLarge && isReset(err) {
						// The receiver answers 413 from the Content-Length alone and closes the
						// connection; a client still sending the body may see the reset first.
						continue
					}
					if err != nil || resp.StatusCode != r.status {
						failures.Add(1)
						firstFailure.Do(func() {
							status := 0
							if resp != nil {
								status = resp.StatusCode
							}
							t.Errorf("%s: %d %v, want %d", r.name, status, err, r.status)
						})
					}
				}
			}()
		}
		wg.Wait()
	}
	// quiet waits until the server has let go of the closed connections' goroutines.
	settle := func(limit int) {
		for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > limit && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
	}

	start := time.Now()
	before := takeSample(start, 0)
	load(time.Second) // warm-up: pools, buffers and lazily made state reach their size
	settle(before.goroutines)
	baseline := takeSample(start, requests.Load())
	t.Logf("baseline after the warm-up:\n%s", baseline)

	samples := []soakSample{baseline}
	interval := min(max(duration/10, time.Second), time.Minute)
	done := make(chan struct{})
	go func() {
		defer close(done)
		load(duration)
	}()
	for ticking := true; ticking; {
		select {
		case <-done:
			ticking = false
		case <-time.After(interval):
			s := takeSample(start, requests.Load())
			samples = append(samples, s)
			if os.Getenv(SoakDurationEnv) != "" {
				t.Logf("under load: %s", s)
			}
		}
	}
	settle(baseline.goroutines)
	end := takeSample(start, requests.Load())
	samples = append(samples, end)
	sent := end.requests - baseline.requests
	t.Logf("%d requests in %s (%.0f/s), %d failed; samples:", sent, duration, float64(sent)/duration.Seconds(), failures.Load())
	for _, s := range samples {
		t.Logf("  %s", s)
	}
	if sent < 100 {
		t.Fatalf("only %d requests in %s: the load did not run", sent, duration)
	}
	if end.goroutines > baseline.goroutines+2 {
		t.Errorf("goroutines grew from %d to %d over the soak", baseline.goroutines, end.goroutines)
	}
	if limit := baseline.heap + baseline.heap/4 + 2<<20; end.heap > limit {
		t.Errorf("the live heap grew from %.2f MiB to %.2f MiB over the soak (limit %.2f MiB)",
			float64(baseline.heap)/(1<<20), float64(end.heap)/(1<<20), float64(limit)/(1<<20))
	}
}

func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
