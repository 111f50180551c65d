// Package wait is a test kit: wait until a condition holds, polling, or fail the test saying what
// it waited for.
package wait

import (
	"testing"
	"time"
)

// maxInterval bounds the pause between two polls: a condition that holds soon is seen within a
// millisecond or two, a late one within 20 ms (benchmarks time what they wait for with it), and a
// condition that sends a request is not sent more than 50 times a second.
const maxInterval = 20 * time.Millisecond

// For polls cond until it holds, first every millisecond then less often (up to maxInterval), and
// fails t, naming what, when timeout passes first. Inside a synctest bubble its clock is the
// bubble's.
func For(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for interval := time.Millisecond; !cond(); interval = min(2*interval, maxInterval) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(interval)
	}
}
