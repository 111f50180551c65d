package delivery

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runDirs makes a job's run directory and the mount point of its root, as runJob does.
func runDirs(t testing.TB) (run, root string) {
	t.Helper()
	base := t.TempDir()
	run, root = filepath.Join(base, "home"), filepath.Join(base, "root")
	for _, p := range []string{run, root} {
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return run, root
}

// TestSandboxedJobReadsOnlyWhatItMay starts jobs the way runJob does, as this test's own user: a
// file in a directory the job was not given does not exist for it, its run directory and the
// system's programs do; and the test process, which started them, is not itself restricted.
func TestSandboxedJobReadsOnlyWhatItMay(t *testing.T) {
	private := filepath.Join(t.TempDir(), "hub")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	const canary = "hf_canary_token_in_the_hub_data_dir"
	token := filepath.Join(private, "token")
	if err := os.WriteFile(token, []byte(canary), 0o600); err != nil {
		t.Fatal(err)
	}
	read, _ := jobReadDirs("/usr/bin:/bin", nil, []string{private})
	for range 5 {
		run, root := runDirs(t)
		cmd := exec.Command("/bin/sh", "-c", `cat "$1"; echo "read: $?"; echo mine > "$HOME/x" && cat "$HOME/x"; ls /usr/bin >/dev/null && echo "usr: ok"; id -u`, "sh", token)
		cmd.Env, cmd.Dir = []string{"PATH=/usr/bin:/bin", "HOME=" + run}, run
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := startSandboxed(cmd, read, run, root); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if s := out.String(); strings.Contains(s, canary) || !strings.Contains(s, "No such file or directory") || !strings.Contains(s, "read: 1") ||
			!strings.Contains(s, "mine") || !strings.Contains(s, "usr: ok") {
			t.Fatalf("the job's output:\n%s\nwant the token absent, its HOME and /usr/bin usable", s)
		}
	}
	if b, err := os.ReadFile(token); err != nil || string(b) != canary {
		t.Fatalf("the hub itself can no longer read its files: %q %v", b, err)
	}
}

// A job has a network of its own: what listens on this machine's loopback (a TCP port, a unix
// socket in a directory it was not given) is not there for it; its own loopback works.
func TestSandboxedJobHasNoRouteToThisMachine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("HTTP/1.0 200 OK\r\n\r\nthe-hosts-service\n"))
			c.Close()
		}
	}()
	sock := filepath.Join(t.TempDir(), "daemon.sock")
	uln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer uln.Close()
	go func() {
		for {
			c, err := uln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("HTTP/1.0 200 OK\r\n\r\nthe-hosts-socket\n"))
			c.Close()
		}
	}()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	read, _ := jobReadDirs("/usr/bin:/bin", nil, nil)
	run, root := runDirs(t)
	script := `curl -sS --max-time 5 http://` + ln.Addr().String() + `/; echo "tcp: $?"
curl -sS --max-time 5 --unix-socket ` + sock + ` http://localhost/; echo "unix: $?"
ip -o link 2>/dev/null | cut -d: -f2 | tr -d ' ' | tr '\n' ' '; echo`
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env, cmd.Dir = []string{"PATH=/usr/bin:/bin", "HOME=" + run}, run
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := startSandboxed(cmd, read, run, root); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	s := out.String()
	if strings.Contains(s, "the-hosts-") || strings.Contains(s, "tcp: 0") || strings.Contains(s, "unix: 0") {
		t.Fatalf("the job reached this machine's services:\n%s", s)
	}
	if !strings.Contains(s, "tcp: 7") || !strings.Contains(s, "unix: 7") {
		t.Fatalf("the job's output:\n%s\nwant both connections refused (curl: 7)", s)
	}
}

func TestJobReadDirsLeaveOutTheHubsOwn(t *testing.T) {
	data := filepath.Join(t.TempDir(), "hub")
	dirs, skipped := jobReadDirs("/usr/bin:relative:"+filepath.Dir(data)+":/:/usr/bin", nil, []string{data})
	if strings.Join(skipped, " ") != filepath.Dir(data)+" /" {
		t.Errorf("skipped %q; want the data dir's parent and /", skipped)
	}
	for _, d := range dirs {
		if d == "relative" || d == "/" || d == filepath.Dir(data) {
			t.Errorf("jobs read %q", d)
		}
	}
}

// BenchmarkJobStart measures what the sandbox adds to starting a job: /bin/true started plainly,
// and in its Landlock domain (a ruleset made, one OS thread used up).
func BenchmarkJobStart(b *testing.B) {
	read, _ := jobReadDirs("/usr/bin:/bin", nil, nil)
	run, root := runDirs(b)
	for _, sandboxed := range []bool{false, true} {
		name := "plain"
		if sandboxed {
			name = "sandboxed"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				var err error
				if sandboxed {
					err = startSandboxed(cmd, read, run, root)
				} else {
					err = cmd.Start()
				}
				if err == nil {
					err = cmd.Wait()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
