//go:build unix

package procgroup_test

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/core/procgroup"
	"github.com/robothub/robothub/core/procgroup/procinfo"
)

func TestRunKillsTheGroupAtTheEndOfItsContext(t *testing.T) {
	stop := errors.New("cancelled by the test")
	ctx, cancel := context.WithCancelCause(context.Background())
	var out syncBuffer
	cmd := exec.Command("sh", "-c", "echo started; sleep 60 & wait")
	done := make(chan error, 1)
	go func() { done <- procgroup.Run(ctx, cmd, &out) }()
	wait.For(t, 5*time.Second, "the command's first line", func() bool { return strings.Contains(out.String(), "started") })
	pid := cmd.Process.Pid
	wait.For(t, 5*time.Second, "the sleep in the group", func() bool { return len(procinfo.Members(pid)) == 2 })
	children := slices.DeleteFunc(procinfo.Members(pid), func(p int) bool { return p == pid })
	cancel(stop)
	if err := <-done; !errors.Is(err, stop) {
		t.Fatalf("Run after cancel: %v, want the context's cause", err)
	}
	wait.For(t, 5*time.Second, "the sleep killed with the shell", func() bool { return !slices.ContainsFunc(children, procinfo.Alive) })
}

func TestRunNamesTheCommandInItsError(t *testing.T) {
	var out syncBuffer
	err := procgroup.Run(context.Background(), exec.Command("sh", "-c", "echo oops >&2; exit 3"), &out)
	if err == nil || err.Error() != "sh exited with code 3" || out.String() != "oops\n" {
		t.Fatalf("Run: %v, output %q", err, out.String())
	}
	err = procgroup.Run(context.Background(), exec.Command("/nonexistent/tool"), &out)
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/tool not found") {
		t.Fatalf("Run of a missing program: %v", err)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
