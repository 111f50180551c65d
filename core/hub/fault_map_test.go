package hub

import (
	"errors"
	"testing"

	"github.com/robothub/robothub/core/fault"
)

// TestErrorsMapOntoFault: hub failures and refused requests match core's one error vocabulary, so a
// transport maps them with the fault kinds.
func TestErrorsMapOntoFault(t *testing.T) {
	for status, kind := range map[int]error{400: fault.ErrInvalid, 422: fault.ErrInvalid, 404: fault.ErrNotFound,
		409: fault.ErrRefused, 429: fault.ErrUnavailable, 503: fault.ErrUnavailable} {
		if err := error(&Error{Status: status}); !errors.Is(err, kind) {
			t.Errorf("status %d is not %v", status, kind)
		}
	}
	for status, kind := range map[int]error{401: fault.ErrUnauthenticated, 403: fault.ErrForbidden, 429: fault.ErrRateLimited,
		502: fault.ErrUnavailable, 504: fault.ErrUnavailable} {
		if err := error(&Error{Status: status}); !errors.Is(err, kind) {
			t.Errorf("status %d is not %v", status, kind)
		}
	}
	if errors.Is(&Error{Status: 500}, fault.ErrInvalid) || errors.Is(&Error{Status: 401}, fault.ErrNotFound) ||
		errors.Is(&Error{Status: 409}, fault.ErrInvalid) || errors.Is(&Error{Status: 503}, fault.ErrRateLimited) {
		t.Error("500 or 401 matched a fault kind")
	}
	if _, err := ParseWatchedItem("bucket:foo"); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("a validation error is not fault.ErrInvalid: %v", err)
	}
}
