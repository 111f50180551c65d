package apps

import "errors"

// Kind classifies an Error so that each transport can map it once to its own codes.
type Kind int

// The kinds of error the app manager returns.
const (
	Invalid  Kind = iota + 1 // the request is malformed or out of range
	NotFound                 // the thing named (an app, a job, a session) does not exist
	Refused                  // the request is well formed but cannot be done in the current state
)

// Error is an app manager error with a message meant for the caller.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Is reports whether target is an *Error of the same kind, so errors.Is(err, apps.ErrInvalid) works.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Kind == e.Kind && t.Msg == ""
}

// Sentinels for errors.Is.
var (
	ErrInvalid  = &Error{Kind: Invalid}
	ErrNotFound = &Error{Kind: NotFound}
	ErrRefused  = &Error{Kind: Refused}
)

func invalidError(msg string) error  { return &Error{Kind: Invalid, Msg: msg} }
func notFoundError(msg string) error { return &Error{Kind: NotFound, Msg: msg} }
func refusedError(msg string) error  { return &Error{Kind: Refused, Msg: msg} }
