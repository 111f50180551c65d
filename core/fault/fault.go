// Package fault holds the kinds of error that core packages return (invalid input, not found,
// refused in the current state), so that each transport maps them once to its own codes, whatever
// core package an error comes from.
package fault

import (
	"errors"
	"fmt"
)

// Kind classifies an Error.
type Kind int

// The kinds of error.
const (
	Invalid     Kind = iota + 1 // the request is malformed or out of range
	NotFound                    // the thing named does not exist
	Refused                     // the request is well formed but cannot be done in the current state
	Unavailable                 // the request could not be done now for a cause outside the caller's request
)

// Error is an error of a Kind with a message meant for the caller.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Is reports whether target is a sentinel of the same kind, so errors.Is(err, fault.ErrInvalid) works.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Kind == e.Kind && t.Msg == ""
}

// Sentinels for errors.Is.
var (
	ErrInvalid  = &Error{Kind: Invalid}
	ErrNotFound = &Error{Kind: NotFound}
	ErrRefused  = &Error{Kind: Refused}
	// ErrUnavailable: a transport answers it as "try later" (HTTP 503).
	ErrUnavailable = &Error{Kind: Unavailable}
)

// Invalidf, NotFoundf and Refusedf build errors of their kind.
func Invalidf(format string, args ...any) error  { return newf(Invalid, format, args) }
func NotFoundf(format string, args ...any) error { return newf(NotFound, format, args) }
func Refusedf(format string, args ...any) error  { return newf(Refused, format, args) }

// Unavailablef builds an error of kind Unavailable.
func Unavailablef(format string, args ...any) error { return newf(Unavailable, format, args) }

func newf(k Kind, format string, args []any) error {
	if len(args) == 0 {
		return &Error{Kind: k, Msg: format}
	}
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}
