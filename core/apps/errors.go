package apps

import "github.com/robothub/robothub/core/fault"

// Sentinels for errors.Is: the app manager's errors are fault.Errors, which robotd maps to status codes.
var (
	ErrInvalid  = fault.ErrInvalid
	ErrNotFound = fault.ErrNotFound
	ErrRefused  = fault.ErrRefused
)

func invalidError(msg string) error  { return fault.Invalidf("%s", msg) }
func notFoundError(msg string) error { return fault.NotFoundf("%s", msg) }
func refusedError(msg string) error  { return fault.Refusedf("%s", msg) }
