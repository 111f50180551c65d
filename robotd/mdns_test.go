package robotd_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/syncbuf"
)

// netns runs ip, failing the test on an error.
func netns(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// A robot and a laptop on one link, each in a network namespace this test makes (veth pair,
// 10.77.0.1 and .2): the daemon on the robot listens on 0.0.0.0 and announces itself; a script on
// the laptop with no ROBOT_DAEMON_URL, only ROBOT_DAEMON_TOKEN, finds it as robot.local and moves
// it. Needs root and ip(8); skipped otherwise.
func TestLaptopScriptFindsTheRobotByItsMDNSName(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making network namespaces needs root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("ip(8) is not installed (iproute2)")
	}
	id := os.Getpid() % 100000
	robotNS, laptopNS := fmt.Sprintf("rh-robot-%d", id), fmt.Sprintf("rh-laptop-%d", id)
	robotIf, laptopIf := fmt.Sprintf("rhr%d", id), fmt.Sprintf("rhl%d", id)
	netns(t, "netns", "add", robotNS)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", robotNS).Run() })
	netns(t, "netns", "add", laptopNS)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", laptopNS).Run() })
	netns(t, "link", "add", robotIf, "type", "veth", "peer", "name", laptopIf)
	netns(t, "link", "set", robotIf, "netns", robotNS)
	netns(t, "link", "set", laptopIf, "netns", laptopNS)
	for _, side := range []struct{ ns, ifc, addr string }{{robotNS, robotIf, "10.77.0.1/24"}, {laptopNS, laptopIf, "10.77.0.2/24"}} {
		netns(t, "-n", side.ns, "link", "set", "lo", "up")
		netns(t, "-n", side.ns, "addr", "add", side.addr, "dev", side.ifc)
		netns(t, "-n", side.ns, "link", "set", side.ifc, "up", "multicast", "on")
		netns(t, "-n", side.ns, "route", "add", "224.0.0.0/4", "dev", side.ifc)
	}

	// The apps venv (robot_sdk inside) is made by a daemon on this side first.
	startDaemon(t, daemonOptions{}).stop()

	const token = "test-token-for-the-laptop-0123456789"
	args, _ := json.Marshal([]string{"robot-daemon", "--sim", "--host", "0.0.0.0", "--port", "8000", "--data-dir", t.TempDir(),
		"--apps-venv", sharedVenv, "--hub-url", "none", "--preload-moves", "none", "--token", token, "--log-level", "info"})
	daemonCmd := exec.Command("ip", "netns", "exec", robotNS, os.Args[0], "-test.run=^$")
	daemonCmd.Env = append(os.Environ(), "ROBOTD_TEST_DAEMON_ARGS="+string(args))
	logs, err := daemonCmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := daemonCmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = daemonCmd.Process.Kill(); _ = daemonCmd.Wait() })
	announced := make(chan string, 1)
	logText := &syncbuf.Buffer{}
	go func() {
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			_, _ = logText.Write([]byte(sc.Text() + "\n"))
			if strings.Contains(sc.Text(), "announced on the local network") {
				announced <- sc.Text()
			}
		}
		close(announced)
	}()
	select {
	case line, ok := <-announced:
		if !ok {
			t.Fatalf("the daemon ended before announcing itself:\n%s", logText.String())
		}
		if !strings.Contains(line, "host=robot.local") {
			t.Fatalf("announced as %s, want robot.local", line)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the daemon did not announce itself within 2 minutes")
	}

	script := filepath.Join(t.TempDir(), "laptop.py")
	if err := os.WriteFile(script, []byte(`from robot_sdk import Robot
with Robot() as robot:
    print("url", robot.url)
    robot.set_target(antennas=[0.4, -0.4])
    print("antennas", robot.get_state()["target_antennas_position"])
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", laptopNS, filepath.Join(sharedVenv, "bin", "python"), script)
	cmd.Env = append(os.Environ(), "ROBOT_DAEMON_TOKEN="+token)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the laptop's script: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "url http://10.77.0.1:8000\n") || !strings.Contains(string(out), "antennas [0.4, -0.4]") {
		t.Fatalf("the laptop's script did not find and move the robot by its mDNS name:\n%s", out)
	}
	if strings.Contains(logText.String(), token) {
		t.Fatal("the token shows in the daemon's log")
	}
}
