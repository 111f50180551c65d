package spaces

import (
	"fmt"

	"github.com/robothub/robothub/core/fault"
)

func errorf(kind fault.Kind, format string, args ...any) error {
	return &fault.Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

func notFound(what, id string) error { return errorf(fault.NotFound, "%s %s not found", what, id) }
