package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/syncbuf"

	"github.com/robothub/robothub/internal/testkit/receivertest"
)

// maxBinaryBytes is the size budget of the bootstrap binary: 7.8 MiB on amd64 (stripped,
// -trimpath) since it links no MQTT client, no html/template, no shell parser (the exec action is
// built in with -tags robothub.exec) and no release signing (issue 31; BenchmarkBootstrapAgainstMinimal
// holds it to 1.3x the smallest aws-lambda-go function).
const maxBinaryBytes = 8 << 20

// execTags builds the bootstrap with the exec action, for the receiver table (its routes have one).
const execTags = "lambda.norpc,robothub.exec"

var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "robothub-bootstrap-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var builds sync.Map // GOARCH and package -> *buildResult

type buildResult struct {
	once sync.Once
	path string
	err  error
}

// buildBootstrap builds this package for linux/goarch exactly as the Makefile's lambda-zip does,
// once per test run.
func buildBootstrap(t testing.TB, goarch string) string {
	t.Helper()
	return buildFunction(t, goarch, ".", "lambda.norpc")
}

// buildFunction builds the function pkg (a directory) for linux/goarch with lambda-zip's flags and
// tags, once per test run.
func buildFunction(t testing.TB, goarch, pkg, tags string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the function: not under -short")
	}
	v, _ := builds.LoadOrStore(goarch+" "+pkg+" "+tags, &buildResult{})
	r := v.(*buildResult)
	r.once.Do(func() {
		// deploy/aws's TestLambdaZip builds the same packages for linux/arm64 and may run at the
		// same time: the lock makes the second build a build-cache hit instead of a second one.
		lock, err := os.OpenFile(filepath.Join(os.TempDir(), "robothub-lambda-build.lock"), os.O_RDONLY|os.O_CREATE, 0o600)
		if err == nil {
			defer lock.Close()
			err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX)
		}
		if err != nil {
			r.err = fmt.Errorf("locking the Lambda build: %v", err)
			return
		}
		r.path = filepath.Join(binDir, goarch, filepath.Base(filepath.Clean(pkg)), tags, "bootstrap")
		cmd := exec.Command("go", "build", "-tags", tags, "-trimpath", "-ldflags=-s -w", "-o", r.path, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
		if out, err := cmd.CombinedOutput(); err != nil {
			r.err = fmt.Errorf("go build for linux/%s: %v\n%s", goarch, err, out)
		}
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.path
}

// functionEnv is the environment Lambda gives a provided.al2023 function, plus env.
func functionEnv(api *runtimeAPI, env map[string]string) []string {
	out := []string{
		"AWS_LAMBDA_RUNTIME_API=" + api.Address(),
		"AWS_LAMBDA_FUNCTION_NAME=robothub-webhooks",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=128",
		"AWS_REGION=eu-west-1",
		"_HANDLER=bootstrap",
		"LAMBDA_TASK_ROOT=/var/task",
		"PATH=" + os.Getenv("PATH"),
		"TZ=:UTC",
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// startFunction runs the bootstrap binary built with the exec action as Lambda would, against api.
func startFunction(t *testing.T, api *runtimeAPI, env map[string]string) (stdout, stderr *syncbuf.Buffer) {
	t.Helper()
	stdout, stderr = &syncbuf.Buffer{}, &syncbuf.Buffer{}
	cmd := exec.Command(buildFunction(t, runtime.GOARCH, ".", execTags))
	cmd.Env = functionEnv(api, env)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return stdout, stderr
}

// TestBootstrapEndToEnd runs the built function as a process against the Runtime API and sends it
// the receiver table in every event shape: each answer must be the net/http server's.
func TestBootstrapEndToEnd(t *testing.T) {
	api := newRuntimeAPI(t)
	env := receivertest.Env()
	env[BasePathEnv] = "/hooks" // the base path of the custom-domain shape
	stdout, stderr := startFunction(t, api, env)

	reference := receivertest.Reference(t, receivertest.NewReceiver(t, false, nil))
	var cases []receivertest.Case
	for _, c := range receivertest.Cases() {
		if !c.GoRoute {
			cases = append(cases, c)
		}
	}
	want := make([]receivertest.Result, len(cases))
	for i, c := range cases {
		want[i] = reference(c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, shape := range receivertest.Shapes {
		fixture := shape.Event()
		t.Run(shape.Name, func(t *testing.T) {
			for i, c := range cases {
				t.Run(c.Name, func(t *testing.T) {
					event, err := receivertest.LambdaEvent(fixture, c)
					if err != nil {
						t.Fatal(err)
					}
					o, err := api.Invoke(ctx, event)
					if err != nil {
						t.Fatalf("%v\nstderr:\n%s", err, stderr)
					}
					if o.isError {
						t.Fatalf("the invocation failed: %s", o.body)
					}
					got, err := receivertest.ReadLambdaResponse(o.body)
					if err != nil {
						t.Fatal(err)
					}
					receivertest.Check(t, c, got, want[i])
				})
			}
		})
	}

	t.Run("an event that is not a request fails the invocation", func(t *testing.T) {
		o, err := api.Invoke(ctx, []byte(`{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		var lambdaErr struct{ ErrorMessage, ErrorType string }
		if err := json.Unmarshal(o.body, &lambdaErr); err != nil || !o.isError {
			t.Fatalf("isError %v, body %s", o.isError, o.body)
		}
		if lambdaErr.ErrorType != "EventError" {
			t.Errorf("errorType %q, want EventError", lambdaErr.ErrorType)
		}
		if !strings.Contains(lambdaErr.ErrorMessage, "the webhook receiver cannot serve this Lambda event") ||
			!strings.Contains(lambdaErr.ErrorMessage, "unsupported payload format") {
			t.Errorf("errorMessage %q", lambdaErr.ErrorMessage)
		}
		// The function keeps serving after a failed invocation.
		event, _ := receivertest.LambdaEvent(receivertest.Shapes[0].Event(), receivertest.Cases()[0])
		if o, err := api.Invoke(ctx, event); err != nil || o.isError || !bytes.Contains(o.body, []byte(`"statusCode":200`)) {
			t.Fatalf("after a failed invocation: %v %s", err, o.body)
		}
	})

	t.Run("logs", func(t *testing.T) {
		if strings.Contains(stdout.String()+stderr.String(), receivertest.Secret) {
			t.Fatal("the secret leaked into the function's output")
		}
		levels := map[string]int{}
		for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
			var rec struct{ Level, Msg string }
			if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Level == "" {
				t.Fatalf("a log line is not JSON with a level: %q", line)
			}
			levels[rec.Level]++
		}
		if levels["INFO"] == 0 || levels["WARN"] == 0 || levels["ERROR"] == 0 {
			t.Errorf("levels logged: %v; want deliveries (INFO), refusals (WARN) and failures (ERROR)", levels)
		}
		if !strings.Contains(stdout.String(), `"route":"hello","event":{"action":"update","scope":"repo.content"}`) {
			t.Errorf("the log action printed no delivery on stdout:\n%.500s", stdout)
		}
	})
}

func TestSingleInvocation(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, true},
		{map[string]string{"AWS_LAMBDA_MAX_CONCURRENCY": "1"}, true},
		{map[string]string{"AWS_LAMBDA_MAX_CONCURRENCY": "8"}, false},
		{map[string]string{"GOMAXPROCS": "4"}, false},
	} {
		if got := singleInvocation(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("singleInvocation(%v) = %v, want %v", c.env, got, c.want)
		}
	}
}

// TestBootstrapMisconfigured: with a bad route, or an exec: or robot-update: route in the default
// build (which has neither action), the function stops at start with a message that says what to do, which Lambda
// shows as an init error.
func TestBootstrapMisconfigured(t *testing.T) {
	for routes, want := range map[string]string{
		"hello=shout": `ROBOTHUB_ROUTES: route hello: unknown action "shout"`,
		"hello=log;build=exec:./build.sh": "ROBOTHUB_ROUTES: route build: exec: this receiver was built without the exec action: " +
			"rebuild the bootstrap with -tags lambda.norpc,robothub.exec (make lambda-zip LAMBDA_EXEC=1)",
		"hello=log;robot=robot-update:http://127.0.0.1:8000": "ROBOTHUB_ROUTES: route robot: robot-update: this receiver was built " +
			"without the robot-update action: rebuild the bootstrap with -tags lambda.norpc,robothub.robotupdate (make lambda-zip LAMBDA_ROBOT_UPDATE=1)",
	} {
		t.Run(routes, func(t *testing.T) { testMisconfigured(t, routes, want) })
	}
}

func testMisconfigured(t *testing.T, routes, want string) {
	api := newRuntimeAPI(t)
	var stderr bytes.Buffer
	cmd := exec.Command(buildBootstrap(t, runtime.GOARCH))
	cmd.Env = functionEnv(api, map[string]string{"WEBHOOK_SECRET": receivertest.Secret, "ROBOTHUB_ROUTES": routes})
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if cmd.ProcessState.ExitCode() != 1 {
			t.Fatalf("exit: %v, want status 1; stderr %s", err, &stderr)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("a misconfigured function did not stop")
	}
	var rec struct{ Level, Msg string }
	if err := json.Unmarshal(stderr.Bytes(), &rec); err != nil {
		t.Fatalf("stderr is not one JSON log line: %q", &stderr)
	}
	if rec.Level != "ERROR" || !strings.Contains(rec.Msg, want) {
		t.Errorf("log %+v", rec)
	}
	if strings.Contains(stderr.String(), receivertest.Secret) {
		t.Error("the secret leaked into the log")
	}
	select {
	case <-api.polled:
		t.Error("a misconfigured function asked for an invocation")
	default:
	}
}

// TestBinary checks the deployable binary for both Lambda architectures: static, within the size
// budget, built with the flags the runtime needs.
func TestBinary(t *testing.T) {
	for arch, machine := range map[string]elf.Machine{"arm64": elf.EM_AARCH64, "amd64": elf.EM_X86_64} {
		t.Run(arch, func(t *testing.T) {
			path := buildBootstrap(t, arch)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("linux/%s bootstrap: %d bytes (%.1f MiB)", arch, fi.Size(), float64(fi.Size())/(1<<20))
			if fi.Size() > maxBinaryBytes {
				t.Errorf("%d bytes, over the budget of %d", fi.Size(), maxBinaryBytes)
			}
			f, err := elf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Machine != machine || f.Type != elf.ET_EXEC {
				t.Errorf("ELF machine %v type %v, want %v ET_EXEC", f.Machine, f.Type, machine)
			}
			// -ldflags='-s -w' (not recorded in the build info under -trimpath): no symbols, no DWARF.
			for _, name := range []string{".symtab", ".debug_info"} {
				if f.Section(name) != nil {
					t.Errorf("the binary has a %s section: build it with -ldflags='-s -w'", name)
				}
			}
			for _, p := range f.Progs {
				if p.Type == elf.PT_INTERP {
					t.Error("the binary is dynamically linked: provided.al2023 needs CGO_ENABLED=0")
				}
			}
			bi, err := buildinfo.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			settings := map[string]string{}
			for _, s := range bi.Settings {
				settings[s.Key] = s.Value
			}
			for k, v := range map[string]string{"-tags": "lambda.norpc", "CGO_ENABLED": "0", "-trimpath": "true",
				"GOOS": "linux", "GOARCH": arch} {
				if settings[k] != v {
					t.Errorf("build setting %s = %q, want %q", k, settings[k], v)
				}
			}
		})
	}
}

// benchEnv configures the benchmarks' bootstrap, built as lambda-zip builds it (without the exec
// action): the receiver table's secret and log routes.
var benchEnv = map[string]string{"ROBOTHUB_ROUTES": "hello=log; team/retrain=log", "WEBHOOK_SECRET": receivertest.Secret}

// BenchmarkBootstrapReady measures the function's own cold start: from starting the bootstrap
// process to its first GET /2018-06-01/runtime/invocation/next, ready for an invocation. ns/op is
// that time; p50-ms and max-ms summarise the runs.
func BenchmarkBootstrapReady(b *testing.B) {
	bin := buildBootstrap(b, runtime.GOARCH)
	api := newRuntimeAPI(b)
	env := functionEnv(api, benchEnv)
	var took []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cmd := exec.Command(bin)
		cmd.Env = env
		b.StartTimer()
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		var ready time.Time
		select {
		case ready = <-api.polled:
		case <-time.After(10 * time.Second):
			b.Fatal("the function never asked for an invocation")
		}
		b.StopTimer()
		took = append(took, ready.Sub(start))
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	b.ReportMetric(float64(took[len(took)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(took[len(took)-1])/1e6, "max-ms")
	if st, err := os.Stat(bin); err == nil {
		b.ReportMetric(float64(st.Size())/1e6, "binary-MB")
	}
}

// BenchmarkBootstrapAgainstMinimal holds the bootstrap to the smallest aws-lambda-go function
// (testdata/minimal), both built as lambda-zip builds: the size of each, and the cold start of each
// (from exec to its first GET /2018-06-01/runtime/invocation/next), the median of 30 runs of each,
// alternated so that the machine's load falls on both alike. size-ratio and start-ratio are the
// bootstrap's over the minimal function's.
func BenchmarkBootstrapAgainstMinimal(b *testing.B) {
	const runs = 30
	bins := map[string]string{"bootstrap": buildBootstrap(b, runtime.GOARCH), "minimal": buildFunction(b, runtime.GOARCH, "./testdata/minimal", "lambda.norpc")}
	api := newRuntimeAPI(b)
	env := functionEnv(api, benchEnv)
	took := map[string][]time.Duration{}
	for range b.N {
		for range runs {
			for _, name := range []string{"bootstrap", "minimal"} {
				took[name] = append(took[name], coldStart(b, api, bins[name], env))
			}
		}
	}
	median := func(name string) float64 {
		d := took[name]
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[len(d)/2]) / 1e6
	}
	size := func(name string) float64 {
		st, err := os.Stat(bins[name])
		if err != nil {
			b.Fatal(err)
		}
		return float64(st.Size()) / 1e6
	}
	b.ReportMetric(median("bootstrap"), "bootstrap-p50-ms")
	b.ReportMetric(median("minimal"), "minimal-p50-ms")
	b.ReportMetric(median("bootstrap")/median("minimal"), "start-ratio")
	b.ReportMetric(size("bootstrap"), "bootstrap-MB")
	b.ReportMetric(size("minimal"), "minimal-MB")
	b.ReportMetric(size("bootstrap")/size("minimal"), "size-ratio")
}

// coldStart runs bin until it first asks api for an invocation, and returns how long that took.
func coldStart(b *testing.B, api *runtimeAPI, bin string, env []string) time.Duration {
	cmd := exec.Command(bin)
	cmd.Env = env
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	select {
	case ready := <-api.polled:
		return ready.Sub(start)
	case <-time.After(10 * time.Second):
		b.Fatalf("%s never asked for an invocation", bin)
	}
	return 0
}
