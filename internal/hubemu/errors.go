package hubemu

import (
	"errors"
	"fmt"
	"time"
)

// Kinds of failure. Handlers map them to status codes in one place (statusOf).
var (
	ErrNotFound     = errors.New("not found")
	ErrInvalid      = errors.New("invalid request")
	ErrUnauthorized = errors.New("unauthorized")
	ErrForbidden    = errors.New("forbidden")
	ErrConflict     = errors.New("conflict")
	ErrRateLimited  = errors.New("rate limited")
	ErrUnavailable  = errors.New("unavailable") // a part the emulator needs (git) is missing
	ErrTooLarge     = errors.New("too large")   // a request body over its cap
)

// Error is a failure of one kind with the message a caller sees.
type Error struct {
	Kind       error
	Message    string
	RetryAfter time.Duration // for ErrRateLimited: when a retry can succeed
	Code       string        // the public hub's X-Error-Code, such as RepoNotFound; "" for none
}

func (e *Error) Error() string { return e.Message }

// Is matches the kind: errors.Is(err, ErrNotFound).
func (e *Error) Is(target error) bool { return e.Kind == target }

func errorf(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

func notFound(what, id string) error { return errorf(ErrNotFound, "%s %s not found", what, id) }
