package wait_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"
)

// For returns once the condition holds, having polled it until then.
func TestForReturnsWhenTheConditionHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var polls atomic.Int32
		start := time.Now()
		go func() { time.Sleep(300 * time.Millisecond); polls.Store(-100) }()
		wait.For(t, time.Second, "the flag", func() bool { return polls.Add(1) < 0 })
		if waited := time.Since(start); waited < 300*time.Millisecond || waited > 400*time.Millisecond {
			t.Errorf("returned after %s, want soon after 300ms", waited)
		}
	})
}

// A condition that never holds fails the test after the timeout, naming what it waited for.
func TestForFailsNamingWhatItWaitedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			wait.For(rec, 2*time.Second, "the robot to wake up", func() bool { return false })
		}()
		<-done
		if rec.msg != "timed out after 2s waiting for the robot to wake up" {
			t.Errorf("failure %q", rec.msg)
		}
	})
}

// recorder keeps a Fatalf's message and ends the goroutine that called it, as testing does.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
