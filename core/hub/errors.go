package hub

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// Error is a response with a status of 400 or more.
type Error struct {
	Method     string // GET, POST, DELETE
	Path       string // /api/settings/webhooks/{id}, without the endpoint
	Status     int
	Message    string        // the hub's message: X-Error-Message and the body's "error", or the status text
	RequestID  string        // X-Request-Id, for a support request
	RetryAfter time.Duration // from Retry-After on 429 and 503
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if e.Message != "" && e.Message != http.StatusText(e.Status) {
		s += ": " + e.Message
	}
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	if e.RequestID != "" {
		s += " (request ID " + e.RequestID + ")"
	}
	return s
}

// Is matches the error by its status against core's one vocabulary (core/fault), so that a
// transport that maps fault kinds maps hub failures too: 401 is fault.ErrUnauthenticated, 403
// fault.ErrForbidden, 404 fault.ErrNotFound, 409 fault.ErrRefused, 400/422 fault.ErrInvalid, 429
// fault.ErrRateLimited, and 429, 502, 503, 504 fault.ErrUnavailable.
func (e *Error) Is(target error) bool {
	switch target {
	case fault.ErrUnauthenticated:
		return e.Status == http.StatusUnauthorized
	case fault.ErrForbidden:
		return e.Status == http.StatusForbidden
	case fault.ErrNotFound:
		return e.Status == http.StatusNotFound
	case fault.ErrRefused:
		return e.Status == http.StatusConflict
	case fault.ErrInvalid:
		return e.Status == http.StatusBadRequest || e.Status == http.StatusUnprocessableEntity
	case fault.ErrRateLimited:
		return e.Status == http.StatusTooManyRequests
	case fault.ErrUnavailable:
		return retryableStatus(e.Status)
	}
	return false
}

// errorFromResponse builds an Error from a failed response and its (capped) body. The hub puts its
// message in X-Error-Message, in the body's "error" (a string or a list), or in "error_description".
func errorFromResponse(method, path string, resp *http.Response, body []byte, now time.Time) *Error {
	msgs := []string{resp.Header.Get("X-Error-Message")}
	var data struct {
		Error            json.RawMessage `json:"error"`
		ErrorDescription string          `json:"error_description"`
		Message          string          `json:"message"`
		Detail           json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &data) == nil {
		var s string
		var list []string
		if json.Unmarshal(data.Error, &s) == nil {
			list = []string{s}
		} else if json.Unmarshal(data.Error, &list) != nil {
			list = nil
		}
		msgs = append(append(msgs, list...), data.ErrorDescription, data.Message)
		if json.Unmarshal(data.Detail, &s) == nil {
			msgs = append(msgs, s)
		}
	} else if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/plain") && len(body) < 512 {
		msgs = append(msgs, string(body))
	}
	var kept []string
	for _, m := range msgs {
		if m = strings.TrimSpace(m); m != "" && !slices.Contains(kept, m) {
			kept = append(kept, m)
		}
	}
	return &Error{Method: method, Path: path, Status: resp.StatusCode,
		Message:   cmp.Or(strings.Join(kept, "; "), http.StatusText(resp.StatusCode)),
		RequestID: requestID(resp.Header), RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), now)}
}

func requestID(h http.Header) string {
	for _, k := range []string{"X-Request-Id", "X-Amzn-Trace-Id", "X-Amz-Cf-Id"} {
		if v := h.Get(k); v != "" {
			return v
		}
	}
	return ""
}

// TransportError is a request that got no response: the connection was refused or reset, or the
// attempt timed out.
type TransportError struct {
	Method string
	Path   string
	Err    error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Method, e.Path, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }
