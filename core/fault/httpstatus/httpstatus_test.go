package httpstatus_test

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/fault/httpstatus"
	"github.com/robothub/robothub/core/hub"
)

// TestTableAnswersEveryKindOnEverySurface writes the statuses out as a client of each server reads
// them: the public hub's and its receiver's on the hub and the receiver, the public robot daemon's
// where it differs (400 for a refused action, 422 for an invalid one).
func TestTableAnswersEveryKindOnEverySurface(t *testing.T) {
	want := map[fault.Kind][3]int{ // hub, receiver, daemon
		fault.Invalid:         {400, 400, 422},
		fault.NotFound:        {404, 404, 404},
		fault.Refused:         {409, 409, 400},
		fault.Unavailable:     {503, 503, 503},
		fault.Unauthenticated: {401, 401, 502},
		fault.Forbidden:       {403, 403, 403},
		fault.RateLimited:     {429, 429, 429},
		fault.TooLarge:        {413, 413, 413},
		fault.Upstream:        {502, 502, 502},
		fault.Timeout:         {504, 504, 504},
		fault.Storage:         {507, 507, 507},
	}
	if len(want) != len(fault.Kinds()) {
		t.Fatalf("the test knows %d kinds, core/fault has %d: add the new ones here", len(want), len(fault.Kinds()))
	}
	rows := map[fault.Kind]bool{}
	for _, row := range httpstatus.Table() {
		if rows[row.Kind] {
			t.Errorf("kind %v has two rows", row.Kind)
		}
		rows[row.Kind] = true
	}
	for _, kind := range fault.Kinds() {
		if !rows[kind] {
			t.Errorf("kind %v has no row: its errors are answered 500", kind)
		}
		for i, s := range httpstatus.Surfaces() {
			err := fmt.Errorf("doing it: %w", fault.New(kind, "it went wrong"))
			if got := httpstatus.Of(err, s); got != want[kind][i] {
				t.Errorf("%v on the %v: %d, want %d", kind, s, got, want[kind][i])
			}
			if got := httpstatus.Status(kind, s); got != want[kind][i] {
				t.Errorf("Status(%v, %v) = %d, want %d", kind, s, got, want[kind][i])
			}
		}
	}
}

// An error of two kinds gets the first row's status; errors of the system and of the hub client
// carry their kinds through; an error of no kind is a server error.
func TestOfMatchesKindsThroughWrapping(t *testing.T) {
	diskFull := &fs.PathError{Op: "write", Path: "/data/apps.json", Err: syscall.ENOSPC}
	for _, c := range []struct {
		err  error
		s    httpstatus.Surface
		want int
	}{
		{&hub.Error{Method: "GET", Path: "/api/spaces/a/b", Status: 429}, httpstatus.Receiver, 429}, // RateLimited before Unavailable
		{&hub.Error{Method: "GET", Path: "/api/spaces/a/b", Status: 503}, httpstatus.Receiver, 503},
		{&hub.Error{Method: "GET", Path: "/api/spaces/a/b", Status: 409}, httpstatus.Daemon, 400},
		{&hub.Error{Method: "GET", Path: "/api/spaces/a/b", Status: 401}, httpstatus.Daemon, 502},
		{fmt.Errorf("saving: %w", diskFull), httpstatus.Daemon, 507},
		{fmt.Errorf("saving: %w", syscall.EROFS), httpstatus.Hub, 507},
		{errors.New("a bug"), httpstatus.Hub, 500},
		{&fault.Error{Msg: "no kind"}, httpstatus.Receiver, 500},
	} {
		if got := httpstatus.Of(c.err, c.s); got != c.want {
			t.Errorf("Of(%v, %v) = %d, want %d", c.err, c.s, got, c.want)
		}
	}
}
