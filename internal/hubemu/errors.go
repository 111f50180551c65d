package hubemu

import (
	"fmt"

	"github.com/robothub/robothub/core/fault"
)

// The emulator's errors are core/fault's; the one table (core/fault/httpstatus) gives their statuses.

func errorf(kind fault.Kind, format string, args ...any) error {
	return &fault.Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

func notFound(what, id string) error { return errorf(fault.NotFound, "%s %s not found", what, id) }
