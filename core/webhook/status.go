package webhook

import (
	"errors"
	"net/http"

	"github.com/robothub/robothub/core/fault"
)

// statusOf is the status of a refused request or a handler's error, and the one place where the
// receiver's errors become HTTP statuses: a *FieldError is JSON that is not a payload (422); an
// error of a core/fault kind gets its kind's status; an error of no kind is 500.
//
// The kinds are tried in the order of kindStatuses, so that an error of two kinds gets the first:
// the hub client's answer to a 429 is fault.RateLimited and fault.Unavailable, and is a 429 here.
func statusOf(err error) int {
	if errors.As(err, new(*FieldError)) {
		return http.StatusUnprocessableEntity
	}
	for _, ks := range kindStatuses {
		if errors.Is(err, ks.kind) {
			return ks.status
		}
	}
	return http.StatusInternalServerError
}

var kindStatuses = []struct {
	kind   error
	status int
}{
	{fault.ErrInvalid, http.StatusBadRequest},
	{fault.ErrUnauthenticated, http.StatusUnauthorized},
	{fault.ErrForbidden, http.StatusForbidden},
	{fault.ErrNotFound, http.StatusNotFound},
	{fault.ErrRefused, http.StatusConflict},
	{fault.ErrTooLarge, http.StatusRequestEntityTooLarge},
	{fault.ErrRateLimited, http.StatusTooManyRequests},
	{fault.ErrUpstream, http.StatusBadGateway},
	{fault.ErrUnavailable, http.StatusServiceUnavailable},
	{fault.ErrTimeout, http.StatusGatewayTimeout},
}
