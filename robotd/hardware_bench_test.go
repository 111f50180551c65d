package robotd_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/hardware"
	"github.com/robothub/robothub/adapters/hardware/busemu"
)

// cpuSeconds is the user and system CPU time a process has used so far.
func cpuSeconds(b *testing.B, pid int) float64 {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command name (which may hold spaces) start after the last ')'.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // clock ticks: USER_HZ is 100 on Linux
}

// BenchmarkHardwareDaemonCPU measures the CPU a built robot-daemon uses while its 50 Hz loop drives
// the motor bus (an emulated one, in this process, through a pty: the daemon runs exactly as on
// the robot, with --serialport), awake and holding its pose, over 20 s; and, in the same run, the
// same daemon on --sim. It also builds the daemon for linux/arm64 (the robot's CPU) and reports
// its size.
func BenchmarkHardwareDaemonCPU(b *testing.B) {
	venv := benchVenv(b)
	dir := b.TempDir()
	bin := filepath.Join(dir, "robot-daemon")
	if out, err := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/robot-daemon").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v %s", err, out)
	}
	arm := filepath.Join(dir, "robot-daemon-arm64")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", arm, "./cmd/robot-daemon")
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build for arm64: %v %s", err, out)
	}
	const window = 20 * time.Second
	measure := func(args ...string) float64 {
		port := freePort(b)
		cmd := exec.Command(bin, append([]string{"--port", strconv.Itoa(port), "--data-dir", b.TempDir(), "--apps-venv", venv,
			"--hub-url", "none", "--log-level", "warn", "--token", benchToken}, args...)...)
		cmd.Env = append(os.Environ(), fmt.Sprintf("ROBOT_DAEMON_URL=http://127.0.0.1:%d", port))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
		}()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", port)); err == nil {
				resp.Body.Close()
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("daemon did not start")
			}
		}
		// Measured once the wake-up move is over: awake, no move running.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			var st struct {
				Awake bool      `json:"awake"`
				Move  *struct{} `json:"move"`
			}
			if resp, err := getWithToken(fmt.Sprintf("http://127.0.0.1:%d/api/state/full", port), benchToken); err == nil {
				err = json.NewDecoder(resp.Body).Decode(&st)
				resp.Body.Close()
				if err == nil && st.Awake && st.Move == nil {
					break
				}
			}
			if time.Now().After(deadline) {
				b.Fatal("the robot did not wake up")
			}
		}
		before, t0 := cpuSeconds(b, cmd.Process.Pid), time.Now()
		time.Sleep(window)
		return (cpuSeconds(b, cmd.Process.Pid) - before) / time.Since(t0).Seconds() * 100
	}
	for b.Loop() {
		emu, err := busemu.Start(busemu.Options{Config: hardware.DefaultConfig(), Asleep: true, Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		hw := measure("--serialport", emu.Path())
		emu.Close()
		sim := measure("--sim")
		b.ReportMetric(hw, "hardware-cpu-%")
		b.ReportMetric(sim, "sim-cpu-%")
	}
	info, err := os.Stat(arm)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(info.Size())/1e6, "arm64-binary-MB")
}
