//go:build unix

package procgroup_test

import (
	"context"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/core/procgroup"
	"github.com/robothub/robothub/core/procgroup/procinfo"
)

func TestKillReachesTheChildrenOfAShell(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 60 & sleep 60 & wait")
	procgroup.Isolate(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if got := procgroup.Of(pid); got != pid {
		t.Fatalf("Of(%d) = %d, want the command to lead its own group", pid, got)
	}
	wait.For(t, 5*time.Second, "the shell and its two sleeps in the group", func() bool { return len(procinfo.Members(pid)) == 3 })
	children := slices.DeleteFunc(procinfo.Members(pid), func(p int) bool { return p == pid })
	if id := procinfo.Identity(pid); id == 0 || id != procinfo.Identity(pid) {
		t.Fatalf("Identity(%d) = %d, want a stable non-zero start time", pid, id)
	}

	if err := procgroup.Signal(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	wait.For(t, 5*time.Second, "every child of the shell gone after SIGTERM to the group", func() bool {
		return !slices.ContainsFunc(children, procinfo.Alive)
	})
	if procinfo.Alive(pid) || procinfo.Identity(pid) != 0 {
		t.Fatalf("the reaped shell %d still looks alive", pid)
	}
}

func TestKillOnCancelKillsTheGroupOnTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", "trap '' TERM INT; sleep 60 & wait")
	procgroup.KillOnCancel(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	wait.For(t, 5*time.Second, "the sleep in the group", func() bool { return len(procinfo.Members(pid)) == 2 })
	children := slices.DeleteFunc(procinfo.Members(pid), func(p int) bool { return p == pid })
	if err := cmd.Wait(); err == nil {
		t.Fatal("a command killed at its deadline exited cleanly")
	}
	wait.For(t, 5*time.Second, "the sleep killed with the shell", func() bool { return !slices.ContainsFunc(children, procinfo.Alive) })
}
