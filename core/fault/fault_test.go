package fault

import (
	"errors"
	"fmt"
	"testing"
)

func TestKindsMatchTheirSentinelsOnly(t *testing.T) {
	cases := []struct {
		err  error
		want error
	}{
		{Invalidf("speed %d is out of range", 9), ErrInvalid},
		{NotFoundf("app %q is not installed", "x"), ErrNotFound},
		{Refusedf("An app is already running"), ErrRefused},
	}
	for _, c := range cases {
		wrapped := fmt.Errorf("starting: %w", c.err)
		for _, s := range []error{ErrInvalid, ErrNotFound, ErrRefused} {
			if got := errors.Is(wrapped, s); got != (s == c.want) {
				t.Errorf("errors.Is(%q, %v) = %v", wrapped, s.(*Error).Kind, got)
			}
		}
	}
	if got := Invalidf("speed %d is out of range", 9).Error(); got != "speed 9 is out of range" {
		t.Errorf("message %q", got)
	}
	if got := Refusedf("100% busy").Error(); got != "100% busy" {
		t.Errorf("a message without arguments is kept as written: %q", got)
	}
}
