// Package fault is the one error vocabulary of core and of the servers built on it: the kinds of
// error (invalid input, not found, refused in the current state, ...), so that each transport maps
// them once, in one function, to its own codes, whatever package an error comes from.
package fault

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies an Error. Core says what went wrong and nothing about how a transport answers
// it: the HTTP servers (the receiver, the local hub, the robot daemon) all answer a kind with the
// status of the one table, in httpstatus/.
type Kind int

// The kinds of error.
const (
	Invalid         Kind = iota + 1 // the request is malformed or out of range
	NotFound                        // the thing named does not exist
	Refused                         // well formed, but not in the current state (a conflict)
	Unavailable                     // not possible now, for a cause outside the caller's request
	Unauthenticated                 // no credentials, or ones nobody knows
	Forbidden                       // the credentials may not do this
	RateLimited                     // too many requests; RetryAfter says when to come back
	TooLarge                        // the request is over a size cap
	Upstream                        // a service this one called failed or refused
	Timeout                         // the work did not finish in its time
	Storage                         // this machine's disk refused a write: full, over quota or read-only
)

var kindNames = map[Kind]string{Invalid: "invalid", NotFound: "not found", Refused: "refused",
	Unavailable: "unavailable", Unauthenticated: "unauthenticated", Forbidden: "forbidden",
	RateLimited: "rate limited", TooLarge: "too large", Upstream: "upstream", Timeout: "timeout",
	Storage: "storage"}

func (k Kind) String() string {
	if name, ok := kindNames[k]; ok {
		return name
	}
	return fmt.Sprintf("kind %d", int(k))
}

// Kinds lists every kind, so that a table of them (httpstatus) can be checked for gaps.
func Kinds() []Kind {
	kinds := make([]Kind, len(sentinels))
	for i, s := range sentinels {
		kinds[i] = s.Kind
	}
	return kinds
}

// Sentinel is kind k's sentinel (ErrInvalid for Invalid, ...): the value errors.Is needs, since
// error types outside this package (hub.Error) match the sentinels themselves.
func Sentinel(k Kind) error {
	for _, s := range sentinels {
		if s.Kind == k {
			return s
		}
	}
	return &Error{Kind: k}
}

// Error is an error of a Kind with a message meant for the caller.
type Error struct {
	Kind       Kind
	Msg        string
	Code       string        // a machine-readable code, such as the public hub's RepoNotFound; "" for none
	RetryAfter time.Duration // when a retry can succeed (RateLimited, Unavailable); 0 when unknown
}

func (e *Error) Error() string { return e.Msg }

// Is reports whether target is a sentinel of the same kind, so errors.Is(err, fault.ErrInvalid) works.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Kind == e.Kind && t.Msg == ""
}

// Sentinels for errors.Is.
var (
	ErrInvalid         = &Error{Kind: Invalid}
	ErrNotFound        = &Error{Kind: NotFound}
	ErrRefused         = &Error{Kind: Refused}
	ErrUnavailable     = &Error{Kind: Unavailable}
	ErrUnauthenticated = &Error{Kind: Unauthenticated}
	ErrForbidden       = &Error{Kind: Forbidden}
	ErrRateLimited     = &Error{Kind: RateLimited}
	ErrTooLarge        = &Error{Kind: TooLarge}
	ErrUpstream        = &Error{Kind: Upstream}
	ErrTimeout         = &Error{Kind: Timeout}
	ErrStorage         = &Error{Kind: Storage}

	sentinels = []*Error{ErrInvalid, ErrNotFound, ErrRefused, ErrUnavailable, ErrUnauthenticated, ErrForbidden,
		ErrRateLimited, ErrTooLarge, ErrUpstream, ErrTimeout, ErrStorage}
)

// Invalidf, NotFoundf, Refusedf and Unavailablef build errors of their kind.
func Invalidf(format string, args ...any) error     { return newf(Invalid, format, args) }
func NotFoundf(format string, args ...any) error    { return newf(NotFound, format, args) }
func Refusedf(format string, args ...any) error     { return newf(Refused, format, args) }
func Unavailablef(format string, args ...any) error { return newf(Unavailable, format, args) }

// New builds an error of kind k. A message without arguments is kept as written.
func New(k Kind, format string, args ...any) error { return newf(k, format, args) }

func newf(k Kind, format string, args []any) error {
	if len(args) == 0 {
		return &Error{Kind: k, Msg: format}
	}
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}
