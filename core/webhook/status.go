package webhook

import (
	"errors"
	"net/http"

	"github.com/robothub/robothub/core/fault/httpstatus"
)

// statusOf is the status of a refused request or a handler's error: a *FieldError is JSON that is
// not a payload, 422 as the public hub's receiver answers it (the receiver's own check of a body,
// which no core kind names: not JSON at all is fault.Invalid, 400); any other error gets its
// core/fault kind's status from the one table (core/fault/httpstatus), or 500.
func statusOf(err error) int {
	if errors.As(err, new(*FieldError)) {
		return http.StatusUnprocessableEntity
	}
	return httpstatus.Of(err, httpstatus.Receiver)
}
