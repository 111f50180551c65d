package robotd_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/hardware"
	"github.com/robothub/robothub/adapters/hardware/busemu"
	"github.com/robothub/robothub/adapters/hardware/media"
)

// familyCPU is the CPU time of a process and its children (the daemon's GStreamer pipelines).
func familyCPU(b *testing.B, pid int) float64 {
	total := cpuSeconds(b, pid)
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		stat, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
		if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			total += cpuSeconds(b, child)
		}
	}
	return total
}

// BenchmarkMediaDaemonCPU runs a built robot-daemon driving the motor bus (the emulator, on a pty,
// at 50 Hz) with GStreamer's test camera at 640x480 30 fps and test microphone at 16 kHz, while an
// app reads every frame and every chunk from the media socket, for 20 s. It reports the CPU of the
// daemon and its pipelines (one core = 100%), the frames the app got per second, and the control
// loop's period p99 over that time, which must stay within 22 ms while media run.
func BenchmarkMediaDaemonCPU(b *testing.B) {
	venv := benchVenv(b)
	dir := b.TempDir()
	bin := filepath.Join(dir, "robot-daemon")
	if out, err := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/robot-daemon").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v %s", err, out)
	}
	const window = 20 * time.Second
	for b.Loop() {
		emu, err := busemu.Start(busemu.Options{Config: hardware.DefaultConfig(), Asleep: true, Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		port, data := freePort(b), b.TempDir()
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--data-dir", data, "--apps-venv", venv, "--hub-url", "none",
			"--log-level", "warn", "--serialport", emu.Path(), "--camera", "test", "--microphone", "test", "--speaker", "test",
			"--camera-mode", "640x480@30", "--token", benchToken)
		cmd.Env = append(os.Environ(), fmt.Sprintf("ROBOT_DAEMON_URL=http://127.0.0.1:%d", port))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		base := fmt.Sprintf("http://127.0.0.1:%d", port)
		status := func() (st struct {
			Hardware *struct {
				ControlLoop struct {
					PeriodP99Ms float64 `json:"period_p99_ms"`
				} `json:"control_loop"`
			} `json:"hardware"`
		}) {
			resp, err := getWithToken(base+"/api/daemon/status", benchToken)
			if err == nil {
				_ = json.NewDecoder(resp.Body).Decode(&st)
				resp.Body.Close()
			}
			return st
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
			var st struct {
				Awake bool      `json:"awake"`
				Move  *struct{} `json:"move"`
			}
			if resp, err := getWithToken(base+"/api/state/full", benchToken); err == nil {
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
		sock := filepath.Join(data, "media.sock")
		video, err := media.DialSocket(sock, "video")
		if err != nil {
			b.Fatal(err)
		}
		audio, err := media.DialSocket(sock, "audio")
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			for {
				if _, err := audio.Chunk(); err != nil {
					return
				}
			}
		}()
		if _, err := video.Frame(); err != nil { // the camera runs
			b.Fatal(err)
		}
		frames := 0
		before, t0 := familyCPU(b, cmd.Process.Pid), time.Now()
		for time.Since(t0) < window {
			if _, err := video.Frame(); err != nil {
				b.Fatal(err)
			}
			frames++
		}
		cpu := (familyCPU(b, cmd.Process.Pid) - before) / time.Since(t0).Seconds() * 100
		fps := float64(frames) / time.Since(t0).Seconds()
		loop := status().Hardware
		video.Close()
		audio.Close()
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		emu.Close()
		if loop == nil {
			b.Fatal("the daemon reports no control loop")
		}
		b.ReportMetric(cpu, "media-cpu-%")
		b.ReportMetric(fps, "app-fps")
		b.ReportMetric(loop.ControlLoop.PeriodP99Ms, "loop-period-p99-ms")
	}
}
