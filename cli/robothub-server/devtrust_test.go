package main

// Issue 30 through the built robothub (the test binary, which testscript puts on PATH as robothub):
// what a hub user's job runs in robothub dev cannot reach the robot daemon, its sockets or the
// hub's token; robothub dev's broker takes no client without its password; and where the kernel
// refuses a job its namespaces, the job does not run and its run says why.

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/mqtt"
	"github.com/robothub/robothub/core/fleet"
	"github.com/robothub/robothub/internal/testkit/syncbuf"
)

// devProcess is `robothub dev` run as its own process on free ports.
type devProcess struct {
	dir                          string // its data dir
	hubURL, daemonURL, brokerURL string
	daemonPort                   int
	stdout                       *syncbuf.Buffer
}

func startDevProcess(t *testing.T) *devProcess {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the whole system")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the job sandbox and the owner socket's checks are Linux's")
	}
	bin, err := exec.LookPath("robothub")
	if err != nil {
		t.Fatalf("robothub is not on PATH (testscript puts it there): %v", err)
	}
	home := t.TempDir()
	d := &devProcess{dir: filepath.Join(home, "dev"), stdout: &syncbuf.Buffer{}}
	hubAddr, recvAddr, brokerAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	_, port, _ := net.SplitHostPort(freeAddr(t))
	d.daemonPort, _ = strconv.Atoi(port)
	cmd := exec.Command(bin, "dev", "--data-dir", d.dir, "--hub-addr", hubAddr, "--receiver-addr", recvAddr, "--daemon-port", port,
		"--broker-addr", brokerAddr, "--python", "/usr/bin/python3", "--system-site-packages")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ROBOT_DAEMON_URL=http://127.0.0.1:" + port}
	stderr := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = d.stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(40 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("robothub dev stdout:\n%s\nstderr:\n%s", d.stdout, stderr)
		}
	})
	for deadline := time.Now().Add(4 * time.Minute); !strings.Contains(d.stdout.String(), "robothub dev is running"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			t.Fatalf("robothub dev did not start:\n%s\n%s", d.stdout, stderr)
		}
	}
	d.hubURL, d.daemonURL, d.brokerURL = "http://"+hubAddr, "http://127.0.0.1:"+port, "mqtt://"+brokerAddr
	return d
}

func (d *devProcess) hubToken(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(d.dir, "hub", "token"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// Issue 30, item 2: in robothub dev, jobs ran as the daemon's user with the network and unix
// sockets open: another hub user's job curled the daemon and put the robot to sleep, read camera
// frames from the media socket, and read the hub's token through an app install. A job now has a
// network and a filesystem of its own: the daemon's port, its owner socket, its media socket and
// the hub's data dir are not there for it.
func TestDevJobReachesNothingOfThisMachine(t *testing.T) {
	d := startDevProcess(t)
	token := d.hubToken(t)
	robot := filepath.Join(d.dir, "robot")
	state := func() string {
		out, err := exec.Command("curl", "-sS", "--unix-socket", filepath.Join(robot, "daemon.sock"), "http://localhost/api/state/full").CombinedOutput()
		if err != nil {
			t.Fatalf("the robot's state through its owner socket: %v %s", err, out)
		}
		return string(out)
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(state(), `"awake":true`) || !strings.Contains(state(), `"move":null`); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the robot did not wake up: %s", state())
		}
	}
	for _, p := range []string{filepath.Join(robot, "daemon.sock"), filepath.Join(robot, "media.sock")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("robothub dev's daemon has no %s to attack: %v", filepath.Base(p), err)
		}
	}
	script := fmt.Sprintf(`try() { what=$1; shift; if out=$("$@" 2>&1); then echo "REACHED $what: $out"; else echo "REFUSED $what ($?): $out"; fi; }
try daemon-tcp curl -sS --max-time 5 -X POST %[1]s/api/move/play/goto_sleep
try daemon-status curl -sS --max-time 5 %[1]s/api/daemon/status
try daemon-socket curl -sS --max-time 5 --unix-socket %[2]s/daemon.sock -X POST http://localhost/api/move/play/goto_sleep
try media-socket curl -sS --max-time 5 --unix-socket %[2]s/media.sock http://localhost/
try hub-token cat %[3]s/hub/token
try hub-api curl -sS --max-time 5 %[4]s/api/whoami-v2
try robot-token cat %[2]s/api-token
echo done`, d.daemonURL, robot, d.dir, d.hubURL)
	log := jobLogOnEvent(t, d.hubURL, token, "local", script)
	t.Logf("the job's log:\n%s", log)
	if !strings.Contains(log, "done") {
		t.Fatalf("the job did not run to its end:\n%s", log)
	}
	// curl's 7 is "could not connect": a 52 or another code would mean it reached a socket.
	for _, want := range []string{"REFUSED daemon-tcp (7)", "REFUSED daemon-status (7)", "REFUSED daemon-socket (7)", "REFUSED media-socket (7)",
		"REFUSED hub-api (7)", "REFUSED hub-token (1)", "REFUSED robot-token (1)"} {
		if !strings.Contains(log, want) {
			t.Errorf("the job's log lacks %q", want)
		}
	}
	if strings.Contains(log, "REACHED") || strings.Contains(log, token) {
		t.Errorf("a job of the local hub reached this machine's services or files:\n%s", log)
	}
	// The robot did not move: still awake, no move (a goto_sleep would still run or have ended asleep).
	if s := state(); !strings.Contains(s, `"awake":true`) || !strings.Contains(s, `"move":null`) {
		t.Errorf("the robot after the job: %s", s)
	}
}

// Issue 30, item 8: robothub dev's broker took anonymous clients, so any local user could publish
// a robot's status and robothub fleet wait reported success. It takes only clients with the
// password it keeps in its data dir (0600), which its robot and robothub fleet use.
func TestDevBrokerTakesNoClientWithoutItsPassword(t *testing.T) {
	d := startDevProcess(t)
	passwordFile := filepath.Join(d.dir, DevBrokerPasswordFile)
	fi, err := os.Stat(passwordFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", passwordFile, fi.Mode().Perm())
	}
	password, _ := os.ReadFile(passwordFile)
	if !strings.Contains(d.stdout.String(), "--password-file "+passwordFile) {
		t.Errorf("robothub dev does not say how fleet commands get the password:\n%s", d.stdout)
	}

	// A forger, as any local user could: no password, then a wrong one.
	const sha = "0123456789abcdef0123456789abcdef01234567"
	forged, _ := fleet.Marshal(fleet.Status{V: 1, Robot: "robot-1", Daemon: "dev", Time: time.Now(),
		Apps: []fleet.AppStatus{{Name: "my_app", Space: "local/my_app", Revision: sha}}})
	for _, pw := range []string{"", "guessed"} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := mqtt.Connect(ctx, mqtt.Config{URL: d.brokerURL, ClientID: "forger", Username: "robot-1", Password: pw})
		if err == nil {
			err = c.AwaitConnection(ctx)
			if err == nil {
				err = c.Publish(ctx, fleet.Topics{}.Status("robot-1"), forged, true)
			}
			c.Close(context.Background())
		}
		cancel()
		if err == nil {
			t.Errorf("a client with password %q connected to dev's broker and published robot-1's status", pw)
		}
	}
	// fleet wait does not believe a status nobody could forge.
	code, out, errOut := runCLI(t, nil, "", "fleet", "wait", "--broker", d.brokerURL, "--password-file", passwordFile,
		"--space", "local/my_app", "--revision", sha, "--timeout", "3s")
	if code == 0 {
		t.Fatalf("fleet wait reported success on a status nobody published:\n%s\n%s", out, errOut)
	}
	// With the password, fleet ls sees dev's robot.
	code, out, errOut = runCLI(t, nil, "", "fleet", "ls", "--broker", d.brokerURL, "--password-file", passwordFile)
	if code != 0 || !strings.Contains(out, "robot-1") {
		t.Fatalf("fleet ls with dev's password: %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, nil, "", "fleet", "ls", "--broker", d.brokerURL)
	if code == 0 {
		t.Fatal("fleet ls without the password listed dev's fleet")
	}
	if strings.Contains(errOut, strings.TrimSpace(string(password))) {
		t.Fatal("an error shows the broker's password")
	}
}

// Where the kernel refuses a job its own namespaces (here: a user namespace whose limit of network
// namespaces is 0, as a hardened system may set), the job does not run, and its run says why.
func TestJobWithoutNamespacesDoesNotRun(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("namespaces are Linux's")
	}
	if err := exec.Command("unshare", "-Ur", "true").Run(); err != nil {
		t.Skipf("this system makes no user namespace for the test (%v)", err)
	}
	bin, err := exec.LookPath("robothub")
	if err != nil {
		t.Fatalf("robothub is not on PATH: %v", err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	cmd := exec.Command("unshare", "-Ur", "sh", "-c", `echo 0 > /proc/sys/user/max_net_namespaces && exec "$@"`, "sh",
		bin, "hub", "serve", "--addr", "127.0.0.1:0", "--allow-jobs", "--db", ":memory:")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	p := runHubProcess(t, cmd)
	endpoint := p.waitFor(t, `Local hub listening on (http://\S+)`)
	token := p.waitFor(t, `(?m)^export HF_TOKEN=(hf_\S+)$`)
	run := jobRunOnEvent(t, endpoint, token, "local", "touch "+marker)
	runErr := run.Error
	if !strings.Contains(runErr, "the kernel refused the job its own network and mount namespaces") {
		t.Errorf("the run's error %q does not say why the job did not run", runErr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the job ran without its namespaces")
	}
}
