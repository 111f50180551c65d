package delivery

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxedJobReadsOnlyWhatItMay starts jobs the way runJob does, as this test's own user: a
// file in a directory the job was not given cannot be read, its run directory and the system's
// programs can; and the test process, which started them, is not itself restricted.
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
	for range 20 { // each start uses, and ends, a thread of its own
		run := t.TempDir()
		cmd := exec.Command("/bin/sh", "-c", `cat "$1"; echo "read: $?"; echo mine > "$HOME/x" && cat "$HOME/x"; ls /usr/bin >/dev/null && echo "usr: ok"`, "sh", token)
		cmd.Env, cmd.Dir = []string{"PATH=/usr/bin:/bin", "HOME=" + run}, run
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := startSandboxed(cmd, read, run); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if s := out.String(); strings.Contains(s, canary) || !strings.Contains(s, "Permission denied") || !strings.Contains(s, "read: 1") ||
			!strings.Contains(s, "mine") || !strings.Contains(s, "usr: ok") {
			t.Fatalf("the job's output:\n%s\nwant the token refused, its HOME and /usr/bin usable", s)
		}
	}
	if b, err := os.ReadFile(token); err != nil || string(b) != canary {
		t.Fatalf("the hub itself can no longer read its files: %q %v", b, err)
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
	run := b.TempDir()
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
					err = startSandboxed(cmd, read, run)
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
