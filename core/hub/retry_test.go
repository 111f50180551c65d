package hub

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":     0,
		"7":    7 * time.Second,
		"-3":   0,
		"soon": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Minute).Format(http.TimeFormat):     0,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

func TestBackoffGrowsWithJitterWithinBounds(t *testing.T) {
	p := RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: 400 * time.Millisecond}
	for attempt, nominal := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 9: 400 * time.Millisecond} {
		seen := map[time.Duration]bool{}
		for range 200 {
			d := Backoff(p.BaseDelay, p.MaxDelay, attempt)
			if d < nominal/2 || d > nominal*3/2 {
				t.Fatalf("attempt %d: %s outside [%s, %s]", attempt, d, nominal/2, nominal*3/2)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Errorf("attempt %d: only %d distinct pauses: no jitter", attempt, len(seen))
		}
	}
}

// TestBackoffWithoutCap: with no cap the pause keeps doubling (the forward action's use) up to an
// hour, and a large attempt number neither overflows nor goes negative.
func TestBackoffWithoutCap(t *testing.T) {
	for attempt, nominal := range map[int]time.Duration{1: time.Second, 4: 8 * time.Second} {
		if d := Backoff(time.Second, 0, attempt); d < nominal/2 || d > nominal*3/2 {
			t.Errorf("attempt %d: %s outside [%s, %s]", attempt, d, nominal/2, nominal*3/2)
		}
	}
	if d := Backoff(time.Second, 0, 200); d < 30*time.Minute || d > 90*time.Minute {
		t.Errorf("attempt 200: %s, want about an hour", d)
	}
	if d := Backoff(0, time.Second, 3); d != 0 {
		t.Errorf("no base: %s, want 0", d)
	}
}
