package dirlock

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSecondHolderIsRefusedWithThePID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.lock")
	l, err := Acquire(path, "robot-daemon")
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to the open file, so a second open in this process conflicts as a second
	// process would.
	_, err = Acquire(path, "robot-daemon")
	want := fmt.Sprintf("%s is in use by another robot-daemon (PID %d)", path, os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("second Acquire: %v, want %q", err, want)
	}
	l.Release()
	l2, err := Acquire(path, "robot-daemon")
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l2.Release()
}

// A holder killed with SIGKILL leaves no stale lock.
func TestLockOfAKilledProcessIsFree(t *testing.T) {
	if os.Getenv("DIRLOCK_HOLD") != "" {
		if _, err := Acquire(os.Getenv("DIRLOCK_HOLD"), "test"); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("locked")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "hub.db.lock")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestLockOfAKilledProcessIsFree$")
	cmd.Env = append(os.Environ(), "DIRLOCK_HOLD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("holder: %q %v", buf, err)
	}
	if _, err := Acquire(path, "hub"); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("PID %d", cmd.Process.Pid)) {
		t.Fatalf("while held by PID %d: %v", cmd.Process.Pid, err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	l, err := Acquire(path, "hub")
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	l.Release()
}
