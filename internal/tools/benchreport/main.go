// Command benchreport runs every benchmark of the project (make bench) and writes the generated part
// of docs/BENCHMARKS.md: each figure beside its target, the command that measured it, and the
// machine it ran on. Comparisons (the receiver against a bare net/http handler, `robothub webhooks
// ls` against curl, the daemon's app list against spawning Python for it) are made within one run.
//
//	go run ./internal/tools/benchreport [-out docs/BENCHMARKS.md] [-only REGEXP] [-lock FILE]
//
// With -only, the rows of the checks it does not run are kept from the document as they were, each
// with the date it was measured on, so one area can be remeasured without rerunning every other.
// With -lock, each command runs under flock(1) on that file: on a machine others share, a benchmark
// does not run beside their heavy jobs, and they are not kept waiting for the whole report.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/renameio/v2"
)

// A suite is one `go test -bench` invocation; its benchmarks feed several checks.
type suite struct {
	pkg       string
	bench     string // -bench regexp
	benchtime string
	cpu       string // -cpu, when the deployed configuration fixes GOMAXPROCS
	timeout   string // -timeout, when the suite needs more than go test's 10 minutes
}

func (s suite) args() []string {
	a := []string{"test", "-run", "^$", "-bench", s.bench, "-benchmem", "-benchtime", s.benchtime}
	if s.cpu != "" {
		a = append(a, "-cpu", s.cpu)
	}
	if s.timeout != "" {
		a = append(a, "-timeout", s.timeout)
	}
	return append(a, s.pkg)
}

func (s suite) command() string { return "go " + strings.Join(quoteArgs(s.args()), " ") }

// A check compares one metric of one benchmark with its target.
type check struct {
	area, what string
	suite      suite
	bench      string // benchmark name without the -GOMAXPROCS suffix
	unit       string // the metric: "ns/op", "list-p99-ms", ...
	limit      float64
	atLeast    bool // the target is a floor (throughput), not a ceiling
	show       func(float64) string
	target     string
	note       func(results) string // what it is compared with, from the same run
}

// results are the metrics of every benchmark run so far, one value per run of its command:
// results[bench][unit].
type results map[string]map[string][]float64

// span is the lowest and highest value of a metric over the runs.
func (r results) span(bench, unit string) (lo, hi float64, ok bool) {
	vs := r[bench][unit]
	if len(vs) == 0 {
		return 0, 0, false
	}
	lo, hi = vs[0], vs[0]
	for _, v := range vs[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi, true
}

// show formats a metric as the range over the runs ("2.1–2.3 µs"), or one figure when the runs
// agree to the shown precision.
func (r results) show(bench, unit string, format func(float64) string) string {
	lo, hi, ok := r.span(bench, unit)
	if !ok {
		return "not measured"
	}
	a, b := format(lo), format(hi)
	if a == b {
		return a
	}
	if unitA, unitB := strings.TrimLeft(a, "0123456789.-"), strings.TrimLeft(b, "0123456789.-"); unitA == unitB {
		return strings.TrimSuffix(a, unitA) + "–" + b
	}
	return a + " – " + b
}

var (
	receiverParse = suite{pkg: "./core/webhook", bench: "^BenchmarkParse$", benchtime: "2s"}
	receiverLoad  = suite{pkg: "./adapters/nethttp", bench: "^BenchmarkReceiverLoad$", benchtime: "1x"}
	receiverServe = suite{pkg: "./core/webhook", bench: "^BenchmarkServeHTTP$", benchtime: "1s"}
	logRouteLoad  = suite{pkg: "./cli/robothub-server", bench: "^BenchmarkLogRouteLoad$", benchtime: "1x"}
	lambdaInvoke  = suite{pkg: "./adapters/lambda", bench: "^BenchmarkInvoke$", benchtime: "1s", cpu: "1"}
	lambdaReady   = suite{pkg: "./functions/lambda", bench: "^BenchmarkBootstrapReady$", benchtime: "200x"}
	lambdaMinimal = suite{pkg: "./functions/lambda", bench: "^BenchmarkBootstrapAgainstMinimal$", benchtime: "1x"}
	hubLs         = suite{pkg: "./cli/robothub", bench: "^BenchmarkWebhooksLsVersusCurl$", benchtime: "100x"}
	cliVersion    = suite{pkg: "./cli/robothub", bench: "^BenchmarkVersionAgainstMinimal$", benchtime: "1x"}
	hubEmu        = suite{pkg: "./internal/hubemu", bench: "^Benchmark(ListWebhooks|Delivery)$", benchtime: "3000x"}
	hubCommit     = suite{pkg: "./internal/hubemu/spaces", bench: "^BenchmarkCommit$", benchtime: "1x"}
	hubCommitHTTP = suite{pkg: "./internal/hubemu/spaces", bench: "^BenchmarkCommitOverHTTP$", benchtime: "1x"}
	daemonList    = suite{pkg: "./robotd", bench: "^BenchmarkListApps(BySpawningPython)?$", benchtime: "200x"}
	daemonApps    = suite{pkg: "./robotd", bench: "^Benchmark(StartApp|StopCooperativeApp|StateStream50Hz)$", benchtime: "20x"}
	daemonRSS     = suite{pkg: "./robotd", bench: "^BenchmarkIdleRSS$", benchtime: "3x"}
	daemonUpdate  = suite{pkg: "./robotd", bench: "^BenchmarkDaemonUpdate$", benchtime: "4x", timeout: "20m"}
	sdkRoundTrip  = suite{pkg: "./robotd", bench: "^BenchmarkSDKPoseRoundTrip$", benchtime: "2000x"}
	movePlayback  = suite{pkg: "./robotd", bench: "^BenchmarkRecordedMovePlayback$", benchtime: "3x"}
	appRunning    = suite{pkg: "./cli/robot-app-assistant", bench: "^BenchmarkDefaultAppRunning$", benchtime: "20x"}
	appCheck      = suite{pkg: "./cli/robot-app-assistant", bench: "^BenchmarkCheck$", benchtime: "10x"}
	appCheckCold  = suite{pkg: "./cli/robot-app-assistant", bench: "^BenchmarkCheckColdCache$", benchtime: "3x"}
	pushToRunning = suite{pkg: "./cli/robothub-server", bench: "^BenchmarkPushToRunning$", benchtime: "5x"}
	hwLoop        = suite{pkg: "./adapters/hardware", bench: "^BenchmarkControlLoop50Hz$", benchtime: "1x"}
	hwKinematics  = suite{pkg: "./core/robot/kinematics", bench: "^Benchmark(Inverse|Forward)$", benchtime: "1s"}
	hwDaemon      = suite{pkg: "./robotd", bench: "^BenchmarkHardwareDaemonCPU$", benchtime: "1x"}
	// The fleet simulator: robots against mosquitto on loopback, each install a timed stand-in.
	fleetScale    = suite{pkg: "./adapters/mqtt", bench: "^BenchmarkFleet(Push|BrokerRestart|Offline)$", benchtime: "1x", timeout: "40m"}
	fleetAnnounce = suite{pkg: "./adapters/mqtt", bench: "^BenchmarkFleetAnnounce$", benchtime: "2000x"}
	mediaLatency  = suite{pkg: "./adapters/hardware/media", bench: "^Benchmark(FrameLatencyLocal|FrameLatencyWebRTC|AudioLatency)$", benchtime: "1x"}
	mediaDaemon   = suite{pkg: "./robotd", bench: "^BenchmarkMediaDaemonCPU$", benchtime: "1x"}
	faceDetect    = suite{pkg: "./adapters/facedetect", bench: "^BenchmarkDetect$", benchtime: "200x"}
)

func ms(v float64) string  { return trimFloat(v, 2) + " ms" }
func us(v float64) string  { return trimFloat(v/1000, 1) + " µs" }
func mb(v float64) string  { return trimFloat(v, 1) + " MB" }
func x(v float64) string   { return trimFloat(v, 2) + "×" }
func per(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) + "/s" }
func pct(v float64) string { return trimFloat(v, 1) + "%" }
func sec(v float64) string { return trimFloat(v, 2) + " s" }
func kb(v float64) string  { return trimFloat(v/1024, 1) + " KB" }
func count(v float64) string {
	return strconv.FormatFloat(v, 'f', 0, 64)
}

var checks = []check{
	{area: "Receiver", what: "Parse the hub's 1 KB payload", suite: receiverParse, bench: "BenchmarkParse/Parse", unit: "ns/op", limit: 10000, show: us, target: "≤ 10 µs/op",
		note: func(r results) string {
			return fmt.Sprintf("%s allocs/op; every ID, title and URL new: %s; on the same bytes json/v2's Unmarshal %s, encoding/json's %s",
				r.show("BenchmarkParse/Parse", "allocs/op", func(v float64) string { return trimFloat(v, 0) }), r.show("BenchmarkParse/Parse/fresh-strings", "ns/op", us),
				r.show("BenchmarkParse/json-v2.Unmarshal", "ns/op", us), r.show("BenchmarkParse/encoding-json.Unmarshal", "ns/op", us))
		}},
	{area: "Receiver", what: "Throughput, Go handler, secret checked, 1 KB payload, 64 connections (wrk)", suite: receiverLoad, bench: "BenchmarkReceiverLoad", unit: "receiver/bare", limit: 0.85, atLeast: true, show: x, target: "≥ 0.85× bare net/http",
		note: func(r results) string {
			return fmt.Sprintf("receiver %s, bare handler (reads the body, checks the secret) %s", r.show("BenchmarkReceiverLoad", "receiver-req/s", per), r.show("BenchmarkReceiverLoad", "bare-req/s", per))
		}},
	{area: "Receiver", what: "p99 latency at 5,000 req/s, Go handler, 64 connections (vegeta)", suite: receiverLoad, bench: "BenchmarkReceiverLoad", unit: "p99/bare", limit: 1.5, show: x, target: "≤ 1.5× bare's",
		note: func(r results) string {
			return "receiver " + r.show("BenchmarkReceiverLoad", "receiver-p99-ms", ms) + ", bare handler " + r.show("BenchmarkReceiverLoad", "bare-p99-ms", ms)
		}},
	{area: "Receiver", what: "Throughput, `robothub serve --route bench=log`, 64 connections (wrk)", suite: logRouteLoad, bench: "BenchmarkLogRouteLoad", unit: "receiver/bare", limit: 0.75, atLeast: true, show: x, target: "≥ 0.75× bare net/http",
		note: func(r results) string {
			return fmt.Sprintf("robothub serve %s, bare handler %s; p99 at 5,000 req/s %s against %s", r.show("BenchmarkLogRouteLoad", "receiver-req/s", per), r.show("BenchmarkLogRouteLoad", "bare-req/s", per),
				r.show("BenchmarkLogRouteLoad", "receiver-p99-ms", ms), r.show("BenchmarkLogRouteLoad", "bare-p99-ms", ms))
		}},
	// The receiver's own allocations: 26 a delivery before issue 21's rework (46 counted with
	// httptest's request and recorder, which the sub-benchmark own does not build each time).
	{area: "Receiver", what: "Allocations per delivery, the receiver's own", suite: receiverServe, bench: "BenchmarkServeHTTP/own", unit: "allocs/op", limit: 13, show: func(v float64) string { return trimFloat(v, 0) }, target: "≤ 13 (half of 26)",
		note: func(r results) string {
			return "with httptest's request and recorder: " + r.show("BenchmarkServeHTTP/no-log", "allocs/op", func(v float64) string { return trimFloat(v, 0) }) + " (46 before); " + r.show("BenchmarkServeHTTP/own", "ns/op", us) + " a delivery"
		}},
	{area: "Lambda", what: "Per-invoke overhead, REST API (v1) event", suite: lambdaInvoke, bench: "BenchmarkInvoke/rest-api", unit: "ns/op", limit: 50000, show: us, target: "≤ 50 µs/op"},
	{area: "Lambda", what: "Per-invoke overhead, REST API custom domain", suite: lambdaInvoke, bench: "BenchmarkInvoke/rest-api-custom-domain", unit: "ns/op", limit: 50000, show: us, target: "≤ 50 µs/op"},
	{area: "Lambda", what: "Per-invoke overhead, HTTP API (v2) event", suite: lambdaInvoke, bench: "BenchmarkInvoke/http-api", unit: "ns/op", limit: 50000, show: us, target: "≤ 50 µs/op"},
	{area: "Lambda", what: "Per-invoke overhead, function URL (base64 body)", suite: lambdaInvoke, bench: "BenchmarkInvoke/function-url", unit: "ns/op", limit: 50000, show: us, target: "≤ 50 µs/op"},
	{area: "Lambda", what: "Per-invoke overhead, ALB event", suite: lambdaInvoke, bench: "BenchmarkInvoke/alb", unit: "ns/op", limit: 50000, show: us, target: "≤ 50 µs/op"},
	{area: "Lambda", what: "bootstrap: process start to first /invocation/next (p50)", suite: lambdaReady, bench: "BenchmarkBootstrapReady", unit: "p50-ms", limit: 20, show: ms, target: "≤ 20 ms",
		note: func(r results) string {
			return "slowest of the runs: " + r.show("BenchmarkBootstrapReady", "max-ms", ms)
		}},
	{area: "Lambda", what: "bootstrap binary size (linux, stripped)", suite: lambdaReady, bench: "BenchmarkBootstrapReady", unit: "binary-MB", limit: 10, show: mb, target: "≤ 10 MB"},
	// Issue 31: the bootstrap linked the MQTT client, though a Lambda announces through AWS IoT
	// Core's data plane: 1.64x the minimal function's cold start and 1.83x its size.
	{area: "Lambda", what: "bootstrap cold start (exec to first /invocation/next, p50 of 30) against the smallest aws-lambda-go function", suite: lambdaMinimal, bench: "BenchmarkBootstrapAgainstMinimal", unit: "start-ratio", limit: 1.3, show: x, target: "≤ 1.3×",
		note: func(r results) string {
			return "bootstrap " + r.show("BenchmarkBootstrapAgainstMinimal", "bootstrap-p50-ms", ms) + ", minimal " + r.show("BenchmarkBootstrapAgainstMinimal", "minimal-p50-ms", ms)
		}},
	{area: "Lambda", what: "bootstrap size against the smallest aws-lambda-go function, same flags", suite: lambdaMinimal, bench: "BenchmarkBootstrapAgainstMinimal", unit: "size-ratio", limit: 1.3, show: x, target: "≤ 1.3×",
		note: func(r results) string {
			return "bootstrap " + r.show("BenchmarkBootstrapAgainstMinimal", "bootstrap-MB", mb) + ", minimal " + r.show("BenchmarkBootstrapAgainstMinimal", "minimal-MB", mb)
		}},
	{area: "Local hub", what: "`robothub --version` against a Go binary that only prints a version (p50 of 30)", suite: cliVersion, bench: "BenchmarkVersionAgainstMinimal", unit: "version-ratio", limit: 1.5, show: x, target: "≤ 1.5×",
		note: func(r results) string {
			return "robothub " + r.show("BenchmarkVersionAgainstMinimal", "robothub-p50-ms", ms) + ", minimal " + r.show("BenchmarkVersionAgainstMinimal", "minimal-p50-ms", ms) +
				"; the smallest urfave/cli program that speaks HTTP " + r.show("BenchmarkVersionAgainstMinimal", "clihttp-ratio", x)
		}},
	{area: "Local hub", what: "`robothub webhooks ls`, 1,000 webhooks, per process", suite: hubLs, bench: "BenchmarkWebhooksLsVersusCurl", unit: "ls-mean-ms", limit: 50, show: ms, target: "≤ 50 ms"},
	{area: "Local hub", what: "`robothub webhooks ls` against curl of the same list (p50s)", suite: hubLs, bench: "BenchmarkWebhooksLsVersusCurl", unit: "ls/curl-p50", limit: 1.5, show: x, target: "≤ 1.5× curl",
		note: func(r results) string {
			return "curl: " + r.show("BenchmarkWebhooksLsVersusCurl", "curl-mean-ms", ms) + " per process"
		}},
	// BenchmarkListWebhooks has two cases; the target is held to the harder one, where a webhook
	// changes between requests so that no cached answer can serve the list.
	{area: "Local hub", what: "List API p99 at 1,000 webhooks, the list changing between requests", suite: hubEmu, bench: "BenchmarkListWebhooks/after-change", unit: "p99-ms", limit: 5, show: ms, target: "≤ 5 ms",
		note: func(r results) string {
			return "the same list unchanged: p99 " + r.show("BenchmarkListWebhooks/repeat", "p99-ms", ms)
		}},
	{area: "Local hub", what: "Deliveries to a local receiver", suite: hubEmu, bench: "BenchmarkDelivery", unit: "deliveries/s", limit: 1000, atLeast: true, show: per, target: "≥ 1,000/s"},
	// Issue 20 item 4: a commit's time was quadratic in its operations (10k: 5.9 s, 20k: 27 s).
	{area: "Local hub", what: "A commit of 10,000 files through the commit API, onto 10,000", suite: hubCommit, bench: "BenchmarkCommit/10k", unit: "s/commit", limit: 1, show: sec, target: "≤ 1 s"},
	{area: "Local hub", what: "A commit of 100,000 files (the cap), onto 100,000: linear", suite: hubCommit, bench: "BenchmarkCommit/100k", unit: "s/commit", limit: 10, show: sec, target: "≤ 10 s"},
	// Issue 31: a 20,000-file commit over HTTP took 7.8 s.
	{area: "Local hub", what: "A commit of 20,000 files over HTTP (NDJSON, base64), into an empty space", suite: hubCommitHTTP, bench: "BenchmarkCommitOverHTTP/new", unit: "s/commit", limit: 2, show: sec, target: "≤ 2 s"},
	{area: "Local hub", what: "A commit of 20,000 files over HTTP, replacing the 20,000 of a space", suite: hubCommitHTTP, bench: "BenchmarkCommitOverHTTP/onto", unit: "s/commit", limit: 2, show: sec, target: "≤ 2 s"},
	{area: "Robot daemon", what: "GET /api/apps/list p99, 51 apps installed", suite: daemonList, bench: "BenchmarkListApps", unit: "list-p99-ms", limit: 5, show: ms, target: "≤ 5 ms",
		note: func(r results) string {
			return "the same listing by spawning Python, as the anchor daemon does: p99 " + r.show("BenchmarkListAppsBySpawningPython", "list-p99-ms", ms)
		}},
	{area: "Robot daemon", what: "start-app answers (p99)", suite: daemonApps, bench: "BenchmarkStartApp", unit: "start-p99-ms", limit: 50, show: ms, target: "≤ 50 ms"},
	{area: "Robot daemon", what: "A cooperative app stopped after the request (p99)", suite: daemonApps, bench: "BenchmarkStopCooperativeApp", unit: "stop-p99-ms", limit: 300, show: ms, target: "≤ 300 ms"},
	{area: "Robot daemon", what: "State stream at 50 Hz: lag (p99)", suite: daemonApps, bench: "BenchmarkStateStream50Hz", unit: "lag-p99-ms", limit: 5, show: ms, target: "≤ 5 ms",
		note: func(r results) string {
			return "mean interval " + r.show("BenchmarkStateStream50Hz", "interval-mean-ms", ms)
		}},
	{area: "Robot apps", what: "A pose's round trip from the Python SDK: set_target, then get_state shows it (p99)", suite: sdkRoundTrip, bench: "BenchmarkSDKPoseRoundTrip", unit: "roundtrip-p99-ms", limit: 5, show: ms, target: "≤ 5 ms",
		note: func(r results) string {
			return "p50 " + r.show("BenchmarkSDKPoseRoundTrip", "roundtrip-p50-ms", ms)
		}},
	{area: "Robot daemon", what: "Recorded move playback: timing error against the dataset's timestamps (p99)", suite: movePlayback, bench: "BenchmarkRecordedMovePlayback", unit: "timing-error-p99-ms", limit: 20, show: ms, target: "≤ 20 ms",
		note: func(r results) string {
			return "p50 " + r.show("BenchmarkRecordedMovePlayback", "timing-error-p50-ms", ms) + ", max " + r.show("BenchmarkRecordedMovePlayback", "timing-error-max-ms", ms)
		}},
	{area: "Robot daemon", what: "Idle daemon RSS", suite: daemonRSS, bench: "BenchmarkIdleRSS", unit: "RSS-MB", limit: 40, show: mb, target: "≤ 40 MB"},
	{area: "Robot daemon", what: "A daemon update (download excluded), from the release checked to the new daemon READY, an app running (max of 4)", suite: daemonUpdate, bench: "BenchmarkDaemonUpdate", unit: "update-ready-max-ms", limit: 5000, show: ms, target: "≤ 5 s",
		note: func(r results) string {
			return "p50 " + r.show("BenchmarkDaemonUpdate", "update-ready-p50-ms", ms)
		}},
	{area: "Robot daemon", what: "The motors without a daemon during an update: the old daemon's last command to the new one's first (max of 4)", suite: daemonUpdate, bench: "BenchmarkDaemonUpdate", unit: "motor-gap-max-ms", limit: 1000, show: ms, target: "≤ 1 s"},
	{area: "Robot apps", what: "A generated default app running (SDK connected) after start-app (p99)", suite: appRunning, bench: "BenchmarkDefaultAppRunning", unit: "running-p99-ms", limit: 1000, show: ms, target: "≤ 1 s"},
	{area: "Robot apps", what: "`robot-app-assistant check` of a generated app (slowest run)", suite: appCheck, bench: "BenchmarkCheck", unit: "check-max-ms", limit: 10000, show: ms, target: "≤ 10 s",
		note: func(r results) string { return "median " + r.show("BenchmarkCheck", "check-p50-ms", ms) }},
	{area: "Robot apps", what: "`git push` of a running app to the robot running the new version, robothub dev (p50)", suite: pushToRunning, bench: "BenchmarkPushToRunning", unit: "push-to-running-p50-ms", limit: 2000, show: ms, target: "≤ 2 s",
		note: func(r results) string {
			return "slowest " + r.show("BenchmarkPushToRunning", "push-to-running-max-ms", ms)
		}},
	{area: "Robot apps", what: "The first `check` on a machine (builds its cached base venv; slowest run)", suite: appCheckCold, bench: "BenchmarkCheckColdCache", unit: "check-max-ms", limit: 10000, show: ms, target: "≤ 10 s"},
	{area: "Robot hardware", what: "Control loop period p99 at 50 Hz, 60 s on the emulated bus", suite: hwLoop, bench: "BenchmarkControlLoop50Hz", unit: "period-p99-ms", limit: 22, show: ms, target: "≤ 22 ms",
		note: func(r results) string {
			const b = "BenchmarkControlLoop50Hz"
			return fmt.Sprintf("p50 %s, max %s, jitter (std dev) %s", r.show(b, "period-p50-ms", ms), r.show(b, "period-max-ms", ms), r.show(b, "jitter-ms", ms))
		}},
	{area: "Robot hardware", what: "Inverse kinematics of the head, per call", suite: hwKinematics, bench: "BenchmarkInverse", unit: "ns/op", limit: 10000, show: us, target: "≤ 10 µs/op"},
	{area: "Robot hardware", what: "Forward kinematics of the head (Newton, warm start), per call", suite: hwKinematics, bench: "BenchmarkForward", unit: "ns/op", limit: 50000, show: us, target: "≤ 50 µs/op"},
	{area: "Robot hardware", what: "Daemon CPU driving the bus at 50 Hz (one core = 100%)", suite: hwDaemon, bench: "BenchmarkHardwareDaemonCPU", unit: "hardware-cpu-%", limit: 10, show: pct, target: "≤ 10%",
		note: func(r results) string {
			return "the same daemon on --sim: " + r.show("BenchmarkHardwareDaemonCPU", "sim-cpu-%", pct)
		}},
	{area: "Robot media", what: "Camera frame to app, local socket, 640x480 at 30 fps (p99)", suite: mediaLatency, bench: "BenchmarkFrameLatencyLocal", unit: "frame-p99-ms", limit: 50, show: ms, target: "≤ 50 ms",
		note: func(r results) string { return "p50 " + r.show("BenchmarkFrameLatencyLocal", "frame-p50-ms", ms) }},
	{area: "Robot media", what: "Camera frame to a WebRTC peer on loopback, VP8 encoded and decoded (p99)", suite: mediaLatency, bench: "BenchmarkFrameLatencyWebRTC", unit: "frame-p99-ms", limit: 150, show: ms, target: "≤ 150 ms",
		note: func(r results) string { return "p50 " + r.show("BenchmarkFrameLatencyWebRTC", "frame-p50-ms", ms) }},
	{area: "Robot media", what: "Microphone to app, local socket (p99)", suite: mediaLatency, bench: "BenchmarkAudioLatency", unit: "capture-p99-ms", limit: 20, show: ms, target: "≤ 20 ms",
		note: func(r results) string { return "p50 " + r.show("BenchmarkAudioLatency", "capture-p50-ms", ms) }},
	{area: "Robot media", what: "App to the speaker's sink, local socket, clocked sink (p99)", suite: mediaLatency, bench: "BenchmarkAudioLatency", unit: "playback-p99-ms", limit: 100, show: ms, target: "≤ 100 ms",
		note: func(r results) string { return "p50 " + r.show("BenchmarkAudioLatency", "playback-p50-ms", ms) }},
	{area: "Robot media", what: "Daemon CPU: 50 Hz motor loop, 640x480 30 fps camera and 16 kHz microphones to an app (one core = 100%)", suite: mediaDaemon, bench: "BenchmarkMediaDaemonCPU", unit: "media-cpu-%", limit: 50, show: pct, target: "≤ 50%",
		note: func(r results) string {
			return "the daemon and its GStreamer pipelines; the app got " + r.show("BenchmarkMediaDaemonCPU", "app-fps", func(v float64) string { return trimFloat(v, 1) + " fps" })
		}},
	{area: "Robot media", what: "Control loop period p99 at 50 Hz while media run", suite: mediaDaemon, bench: "BenchmarkMediaDaemonCPU", unit: "loop-period-p99-ms", limit: 22, show: ms, target: "≤ 22 ms"},
	{area: "Robot media", what: "Head tracking's face detection, 640x480 frame, BlazeFace 256 on ONNX Runtime, one thread", suite: faceDetect, bench: "BenchmarkDetect", unit: "ms/frame", limit: 20, show: ms, target: "≤ 20 ms (tracking runs at 10 Hz)"},
	{area: "Robot hardware", what: "robot-daemon built for linux/arm64 (stripped)", suite: hwDaemon, bench: "BenchmarkHardwareDaemonCPU", unit: "arm64-binary-MB", limit: 20, show: mb, target: "≤ 20 MB"},
	// The fleet: a push until every robot reports the revision, installs being a 500 ms stand-in.
	{area: "Fleet", what: "Push → all 100 robots report the revision (p99; install: 500 ms stand-in)", suite: fleetScale, bench: "BenchmarkFleetPush/robots=100", unit: "p99-ms", limit: 2000, show: ms, target: "≤ 2 s",
		note: fleetNote("BenchmarkFleetPush/robots=100")},
	{area: "Fleet", what: "Push → all 1,000 robots report the revision (p99)", suite: fleetScale, bench: "BenchmarkFleetPush/robots=1000", unit: "p99-ms", limit: 5000, show: ms, target: "≤ 5 s",
		note: fleetNote("BenchmarkFleetPush/robots=1000")},
	{area: "Fleet", what: "Push → all 5,000 robots report the revision (slowest robot)", suite: fleetScale, bench: "BenchmarkFleetPush/robots=5000", unit: "max-ms", limit: 30000, show: ms, target: "≤ 30 s",
		note: fleetNote("BenchmarkFleetPush/robots=5000")},
	{area: "Fleet", what: "Mosquitto's memory per robot session (5,000 sessions)", suite: fleetScale, bench: "BenchmarkFleetPush/robots=5000", unit: "broker-B/robot", limit: 64 << 10, show: kb, target: "≤ 64 KB"},
	{area: "Fleet", what: "A robot's fleet memory: its MQTT session and core/fleet agent (Go heap and stacks, 5,000 in one process)", suite: fleetScale, bench: "BenchmarkFleetPush/robots=5000", unit: "agent-B/robot", limit: 64 << 10, show: kb, target: "≤ 64 KB"},
	{area: "Fleet", what: "Broker restarted during a rollout to 1,000: robots that got the update", suite: fleetScale, bench: "BenchmarkFleetBrokerRestart", unit: "robots-updated", limit: 1000, atLeast: true, show: count, target: "all 1,000",
		note: func(r results) string {
			return "slowest robot " + r.show("BenchmarkFleetBrokerRestart", "max-ms", ms) + ", the restart added " + r.show("BenchmarkFleetBrokerRestart", "added-max-ms", ms)
		}},
	{area: "Fleet", what: "200 of 1,000 robots off during a push, back 60 s later: catch-up after reconnecting (slowest)", suite: fleetScale, bench: "BenchmarkFleetOffline", unit: "catchup-max-ms", limit: 10000, show: ms, target: "≤ 10 s",
		note: func(r results) string { return "p50 " + r.show("BenchmarkFleetOffline", "catchup-p50-ms", ms) }},
	{area: "Fleet", what: "Receiver's announcements to mosquitto (202 once acknowledged)", suite: fleetAnnounce, bench: "BenchmarkFleetAnnounce", unit: "announcements/s", limit: 500, atLeast: true, show: per, target: "≥ 500/s"},
}

// fleetNote is the rest of a fleet push's latencies.
func fleetNote(bench string) func(results) string {
	return func(r results) string {
		return fmt.Sprintf("p50 %s, max %s", r.show(bench, "p50-ms", ms), r.show(bench, "max-ms", ms))
	}
}

const (
	beginMark = "<!-- BEGIN GENERATED by make bench: do not edit by hand -->"
	endMark   = "<!-- END GENERATED -->"
)

func main() {
	out := flag.String("out", "docs/BENCHMARKS.md", "the file whose generated part is replaced")
	only := flag.String("only", "", "run only the checks whose area or description matches this regexp; keep the other rows")
	runs := flag.Int("runs", 3, "how many times each command runs; every figure is the range over the runs")
	lock := flag.String("lock", "", "run each command under flock(1) on this file")
	flag.Parse()
	kept := map[string]string{} // the rows of the checks not run this time, by "area | what"
	if *only != "" {
		var err error
		if kept, err = generatedRows(*out); err != nil {
			fmt.Fprintln(os.Stderr, "benchreport:", err)
			os.Exit(1)
		}
	}
	var filter *regexp.Regexp
	if *only != "" {
		filter = regexp.MustCompile(*only)
	}

	res := results{}
	ran := map[string]bool{}
	var selected []check
	start := time.Now()
	load := loadAverage()
	for _, c := range checks {
		if filter != nil && !filter.MatchString(c.area+" "+c.what) {
			continue
		}
		selected = append(selected, c)
		key := c.suite.command()
		if ran[key] {
			continue
		}
		ran[key] = true
		// Each run is a separate process, as a rerun by someone else would be: a figure that holds
		// only in one lucky run shows as a wide range.
		for run := 1; run <= *runs; run++ {
			fmt.Fprintf(os.Stderr, "$ %s   # run %d of %d\n", key, run, *runs)
			cmd := exec.Command("go", c.suite.args()...)
			if *lock != "" {
				cmd = exec.Command("flock", append([]string{"-o", *lock, "go"}, c.suite.args()...)...)
			}
			cmd.Stderr = os.Stderr
			outBytes, err := cmd.Output()
			os.Stderr.Write(outBytes)
			if err != nil {
				fmt.Fprintf(os.Stderr, "benchreport: %s failed: %v\n", key, err)
			}
			parseBench(outBytes, res)
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", beginMark)
	fmt.Fprintf(&b, "Measured by `make bench` (the last run on %s took %s; each row says when it was measured). "+
		"Machine: %s. Load average when the last run started: %s.\n\n",
		start.UTC().Format("2006-01-02 15:04 MST"), time.Since(start).Round(time.Second), machine(), load)
	fmt.Fprintf(&b, "Each command ran %d times, each time in a new process. A figure is the range over those runs "+
		"(lowest–highest); a target is met only when every run met it.\n\n", *runs)
	b.WriteString("| Area | What | Target | Measured | Met | Compared in the same run | Command | Measured on |\n|---|---|---|---|---|---|---|---|\n")
	failed := 0
	today := start.UTC().Format("2006-01-02")
	chosen := selectedKeys(selected)
	for _, c := range checks {
		if !slices.Contains(chosen, rowKey(c.area, c.what)) {
			if row, ok := kept[rowKey(c.area, c.what)]; ok {
				b.WriteString(row + "\n")
			}
			continue
		}
		lo, hi, ok := res.span(c.bench, c.unit)
		measured, met, note := "not measured (see the command's output)", "–", ""
		if ok {
			measured = res.show(c.bench, c.unit, c.show)
			if n := len(res[c.bench][c.unit]); n < *runs {
				measured += fmt.Sprintf(" (%d of %d runs)", n, *runs)
			}
			if (c.atLeast && lo >= c.limit) || (!c.atLeast && hi <= c.limit) {
				met = "yes"
			} else {
				met, failed = "**no**", failed+1
			}
			if c.note != nil {
				note = c.note(res)
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | `%s` | %s |\n", c.area, c.what, c.target, measured, met, note, c.suite.command(), today)
	}
	fmt.Fprintf(&b, "\n%s\n", endMark)

	if err := writeGenerated(*out, b.String()); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "benchreport: wrote %s (%d checks, %d missed their target)\n", *out, len(selected), failed)
}

// parseBench reads `go test -bench` output: "BenchmarkX/y-2  N  12.3 ns/op  4 allocs/op  0.5 p99-ms".
func parseBench(out []byte, res results) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		m := res[name]
		if m == nil {
			m = map[string][]float64{}
			res[name] = m
		}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				m[f[i+1]] = append(m[f[i+1]], v)
			}
		}
	}
}

func rowKey(area, what string) string { return area + " | " + what }

func selectedKeys(cs []check) []string {
	keys := make([]string, len(cs))
	for i, c := range cs {
		keys[i] = rowKey(c.area, c.what)
	}
	return keys
}

// measuredOn finds the date of a generated part written before rows had their own.
var measuredOn = regexp.MustCompile(`Measured by ` + "`make bench`" + ` on (\d{4}-\d{2}-\d{2})`)

// generatedRows reads the table rows of path's generated part by "area | what", each ending with the
// date it was measured on (rows from before that column get the part's own date).
func generatedRows(path string) (map[string]string, error) {
	rows := map[string]string{}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return rows, nil
	} else if err != nil {
		return nil, err
	}
	text := string(data)
	i, j := strings.Index(text, beginMark), strings.Index(text, endMark)
	if i < 0 || j < i {
		return rows, nil
	}
	part := text[i:j]
	date := "before " + time.Now().UTC().Format("2006-01-02")
	if m := measuredOn.FindStringSubmatch(part); m != nil {
		date = m[1]
	}
	for line := range strings.SplitSeq(part, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if !strings.HasPrefix(line, "| ") || len(cells) < 7 || cells[0] == "Area" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		if len(cells) == 7 {
			line = strings.TrimRight(line, " ") + " " + date + " |"
		}
		rows[rowKey(cells[0], cells[1])] = line
	}
	return rows, nil
}

// writeGenerated replaces the generated part of path (between the markers), or prepends it.
func writeGenerated(path, generated string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	text := string(old)
	i, j := strings.Index(text, beginMark), strings.Index(text, endMark)
	switch {
	case i >= 0 && j > i:
		text = text[:i] + strings.TrimSuffix(generated, "\n") + text[j+len(endMark):]
	case strings.HasPrefix(text, "# "):
		nl := strings.IndexByte(text, '\n')
		text = text[:nl+1] + "\n" + generated + "\n" + text[nl+1:]
	default:
		text = "# Benchmarks\n\n" + generated + "\n" + text
	}
	return renameio.WriteFile(path, []byte(text), 0o644)
}

func machine() string {
	cpu := "unknown CPU"
	if out, err := exec.Command("lscpu").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "Model name" {
				cpu = strings.TrimSpace(v)
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		fmt.Sscanf(strings.TrimPrefix(strings.SplitN(string(b), "\n", 2)[0], "MemTotal:"), "%g", &kb)
		mem = fmt.Sprintf(", %.0f GiB", kb/1024/1024)
	}
	return fmt.Sprintf("%s, %d CPUs%s, %s/%s, %s", cpu, runtime.NumCPU(), mem, runtime.GOOS, runtime.GOARCH, goVersion())
}

func goVersion() string {
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return runtime.Version()
	}
	return strings.TrimSpace(string(out))
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func trimFloat(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, "^$|()* ") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}
