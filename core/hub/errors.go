package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// Kinds of failure, for errors.Is.
var (
	ErrNotFound     = errors.New("not found")       // 404: no such webhook (or not yours)
	ErrUnauthorized = errors.New("unauthorized")    // 401: no token, or a token the hub does not know
	ErrForbidden    = errors.New("forbidden")       // 403: the token may not do this
	ErrRateLimited  = errors.New("rate limited")    // 429
	ErrConflict     = errors.New("conflict")        // 409
	ErrInvalid      = errors.New("invalid request") // refused before sending, or 400/422 from the hub
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
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if e.Message != "" && e.Message != http.StatusText(e.Status) {
		b.WriteString(": " + e.Message)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	if e.RequestID != "" {
		b.WriteString(" (request ID " + e.RequestID + ")")
	}
	return b.String()
}

// Is matches the error against ErrNotFound, ErrUnauthorized, ErrForbidden, ErrRateLimited,
// ErrConflict and ErrInvalid by its status, and against core's one vocabulary (core/fault), so that a
// transport that maps fault kinds maps hub failures too: 400/422 is fault.ErrInvalid, 404
// fault.ErrNotFound, 409 fault.ErrRefused, and 429, 502, 503, 504 fault.ErrUnavailable.
func (e *Error) Is(target error) bool {
	switch target {
	case fault.ErrInvalid:
		return e.Status == http.StatusBadRequest || e.Status == http.StatusUnprocessableEntity
	case fault.ErrNotFound:
		return e.Status == http.StatusNotFound
	case fault.ErrRefused:
		return e.Status == http.StatusConflict
	case fault.ErrUnavailable:
		return retryableStatus(e.Status)
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized
	case ErrForbidden:
		return e.Status == http.StatusForbidden
	case ErrRateLimited:
		return e.Status == http.StatusTooManyRequests
	case ErrConflict:
		return e.Status == http.StatusConflict
	case ErrInvalid:
		return e.Status == http.StatusBadRequest || e.Status == http.StatusUnprocessableEntity
	}
	return false
}

// errorFromResponse builds an Error from a failed response and its (capped) body. The hub puts its
// message in X-Error-Message, in the body's "error" (a string or a list), or in "error_description".
func errorFromResponse(method, path string, resp *http.Response, body []byte, now time.Time) *Error {
	e := &Error{Method: method, Path: path, Status: resp.StatusCode, RequestID: requestID(resp.Header)}
	var msgs []string
	if m := strings.TrimSpace(resp.Header.Get("X-Error-Message")); m != "" {
		msgs = append(msgs, m)
	}
	var data struct {
		Error            json.RawMessage `json:"error"`
		ErrorDescription string          `json:"error_description"`
		Message          string          `json:"message"`
		Detail           json.RawMessage `json:"detail"`
	}
	add := func(m string) {
		m = strings.TrimSpace(m)
		for _, have := range msgs {
			if have == m {
				return
			}
		}
		if m != "" {
			msgs = append(msgs, m)
		}
	}
	if json.Unmarshal(body, &data) == nil {
		var s string
		var list []string
		switch {
		case json.Unmarshal(data.Error, &s) == nil:
			add(s)
		case json.Unmarshal(data.Error, &list) == nil:
			for _, m := range list {
				add(m)
			}
		}
		add(data.ErrorDescription)
		add(data.Message)
		if json.Unmarshal(data.Detail, &s) == nil {
			add(s)
		}
	} else if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/plain") && len(body) < 512 {
		add(string(body))
	}
	e.Message = strings.Join(msgs, "; ")
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), now)
	return e
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
