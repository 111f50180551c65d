package robotd_test

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/hardware"
	"github.com/robothub/robothub/adapters/hardware/busemu"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/internal/testkit/syncbuf"
)

// daemonBinary is the robot-daemon built once for the tests that run the built programs
// (builtBinaries), for the tests that signal it as a service manager does.
// ROBOTD_TEST_DAEMON_BIN names another build instead (to check a test against another version).
var daemonBinary = sync.OnceValues(func() (string, error) {
	if bin := os.Getenv("ROBOTD_TEST_DAEMON_BIN"); bin != "" {
		return bin, nil
	}
	dir, err := builtBinaries()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "robot-daemon"), nil
})

// robotProcess is a built robot-daemon driving an emulated motor bus through its serial port, as
// on the robot.
type robotProcess struct {
	*daemon
	cmd    *exec.Cmd
	emu    *busemu.Bus
	rest   map[byte]int32 // the motors' positions in the sleep pose
	exited chan error
}

func startRobotProcess(t *testing.T) *robotProcess {
	t.Helper()
	bin, err := daemonBinary()
	if err != nil {
		t.Fatal(err)
	}
	cfg := hardware.DefaultConfig()
	rest, err := busemu.RestingAt(cfg, robot.SleepPose)
	if err != nil {
		t.Fatal(err)
	}
	emu, err := busemu.Start(busemu.Options{Config: cfg, Asleep: true, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	port := freePort(t)
	p := &robotProcess{daemon: &daemon{t: t, url: fmt.Sprintf("http://127.0.0.1:%d", port), dataDir: t.TempDir(), log: &syncbuf.Buffer{}},
		emu: emu, rest: rest, exited: make(chan error, 1)}
	p.cmd = exec.Command(bin, "--serialport", emu.Path(), "--bus-timeout", emulatorBusTimeout, "--port", strconv.Itoa(port), "--data-dir", p.dataDir,
		"--hub-url", "none", "--log-level", "info")
	p.cmd.Args = append(p.cmd.Args, venvArgs(sharedVenv)...)
	p.cmd.Stderr = p.log
	mu := venvLock(sharedVenv)
	mu.Lock() // the first daemon creates the shared venv
	defer mu.Unlock()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		if t.Failed() {
			t.Logf("daemon log:\n%s", p.log.String())
		}
	})
	p.waitFor(2*time.Minute, "the daemon serves /healthz", func() bool {
		select {
		case err := <-p.exited:
			t.Fatalf("the daemon exited: %v\n%s", err, p.log.String())
		default:
		}
		resp, err := http.Get(p.url + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	p.token = ownerToken(t, p.dataDir, nil, nil)
	return p
}

// signal sends sig to the daemon.
func (p *robotProcess) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
}

// wait waits for the daemon to exit and returns how.
func (p *robotProcess) wait(timeout time.Duration) error {
	p.t.Helper()
	select {
	case err := <-p.exited:
		return err
	case <-time.After(timeout):
		p.t.Fatalf("the daemon did not exit within %v\n%s", timeout, p.log.String())
		return nil
	}
}

// awayFromRest reports the motors not at their sleep-pose positions (within 40 ticks, 3.5°), by id.
func (p *robotProcess) awayFromRest() map[byte]int32 {
	away := map[byte]int32{}
	for id, want := range p.rest {
		if got := p.emu.Position(id); math.Abs(float64(got-want)) > 40 {
			away[id] = got
		}
	}
	return away
}

// waitTorqueOff waits until every motor's torque is off: the daemon's last write is on the line
// when it exits, and the emulated motors take it as they read it.
func (p *robotProcess) waitTorqueOff() {
	p.t.Helper()
	p.waitFor(5*time.Second, "every motor's torque is off after the daemon exited", func() bool {
		for id := range p.rest {
			if p.emu.Torque(id) {
				return false
			}
		}
		return true
	})
}

// Stopped while awake (systemctl stop: SIGTERM), the daemon lays the head down before its motors
// let go: when it has exited, every motor is off and in the sleep pose, not dropped where it was.
func TestSIGTERMLaysTheHeadDownBeforeTheMotorsLetGo(t *testing.T) {
	p := startRobotProcess(t)
	p.waitRobot(10*time.Second, "the robot woke up", func(s robotState) bool { return s.Awake })
	if away := p.awayFromRest(); len(away) == 0 {
		t.Fatal("awake, yet every motor is in the sleep pose")
	}
	start := time.Now()
	p.signal(syscall.SIGTERM)
	if err := p.wait(15 * time.Second); err != nil {
		t.Fatalf("exit: %v", err)
	}
	t.Logf("stopped in %v", time.Since(start))
	p.waitTorqueOff()
	if away := p.awayFromRest(); len(away) != 0 {
		t.Errorf("motors let go away from the sleep pose (ticks by id, want %v): %v", p.rest, away)
	}
	if log := p.log.String(); !strings.Contains(log, "laying the robot down before its motors let go") {
		t.Errorf("the log does not say the robot was laid down:\n%s", log)
	}
}

// A second Ctrl-C skips what is left of the move: the motors let go at once.
func TestASecondSignalSkipsTheSleepMove(t *testing.T) {
	p := startRobotProcess(t)
	p.waitRobot(10*time.Second, "the robot woke up", func(s robotState) bool { return s.Awake })
	p.signal(syscall.SIGINT)
	p.waitFor(10*time.Second, "the daemon starts laying the robot down", func() bool {
		return strings.Contains(p.log.String(), "laying the robot down before its motors let go")
	})
	p.signal(syscall.SIGINT)
	if err := p.wait(10 * time.Second); err != nil {
		t.Fatalf("exit: %v", err)
	}
	p.waitTorqueOff()
	if log := p.log.String(); !strings.Contains(log, "the robot's motors let go before it lay down") || !strings.Contains(log, "skipped=true") {
		t.Errorf("the log does not say the move was skipped:\n%s", log)
	}
}
