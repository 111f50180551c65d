package main

import (
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// Benchmarks of the performance targets; `make bench-apps` runs them and docs/BENCHMARKS.md
// records the figures. Latencies are reported as percentiles in custom metrics.

func reportPercentiles(b *testing.B, name string, samples []time.Duration) {
	slices.Sort(samples)
	at := func(q float64) float64 {
		return float64(samples[int(q*float64(len(samples)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.5), name+"-p50-ms")
	b.ReportMetric(at(0.99), name+"-p99-ms")
	b.ReportMetric(float64(samples[len(samples)-1])/float64(time.Millisecond), name+"-max-ms")
}

// BenchmarkDefaultAppRunning: a generated default app, installed into the daemon's apps venv,
// from POST start-app until the daemon reports it running (its SDK connected). Each iteration
// starts the app, waits, and stops it (not timed). Target: at most 1 s.
func BenchmarkDefaultAppRunning(b *testing.B) {
	dir := mustCreate(b, "bench_wave", "--web-port", strconv.Itoa(freePort(b)))
	d := startDaemon(b, "none")
	d.install(dir)
	b.Cleanup(func() { d.remove("bench_wave") })
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		lat = append(lat, d.startAndWaitRunning("bench_wave"))
		b.StopTimer()
		d.stopApp(b)
		b.StartTimer()
	}
	reportPercentiles(b, "running", lat)
}

// BenchmarkCheck: robot-app-assistant check of a generated default app, with the base venv of
// the install check already in the cache (every check after the first). Target: at most 10 s.
func BenchmarkCheck(b *testing.B) {
	dir := mustCreate(b, "bench_check")
	if r := runCLI(b, nil, "check", dir); r.code != 0 {
		b.Fatalf("check: %s\n%s", r.stdout, r.stderr)
	}
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if r := runCLI(b, nil, "check", dir); r.code != 0 {
			b.Fatalf("check: %s", r.stderr)
		}
		lat = append(lat, time.Since(start))
	}
	reportPercentiles(b, "check", lat)
}

// BenchmarkCheckColdCache: the first check on a machine, which also builds the base venv
// (python -m venv with pip, setuptools, wheel, the robot SDK). Target: at most 10 s.
func BenchmarkCheckColdCache(b *testing.B) {
	dir := mustCreate(b, "bench_cold")
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		cache := filepath.Join(b.TempDir(), "cache")
		start := time.Now()
		if r := runCLI(b, map[string]string{"XDG_CACHE_HOME": cache}, "check", dir); r.code != 0 {
			b.Fatalf("check: %s", r.stderr)
		}
		lat = append(lat, time.Since(start))
	}
	reportPercentiles(b, "check", lat)
}
