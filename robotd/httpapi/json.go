package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"syscall"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/fault"
)

// Body size limits.
const (
	MaxBodyBytes      = 1 << 20
	MaxAudioBodyBytes = 8 << 20 // 10 s of samples as JSON numbers
)

// bodyError is a malformed request body or query: answered with 422.
type bodyError struct{ msg string }

func (e *bodyError) Error() string { return e.msg }

// BodyError is a malformed request (body, field or query parameter) that msg names: 422.
func BodyError(msg string) error { return &bodyError{msg} }

// valueError is what a type's UnmarshalJSON returns when its value cannot be read: DecodeBody
// reports it as it is, after "body: ".
type valueError struct{ msg string }

func (e *valueError) Error() string { return e.msg }

// ValueError is returned by a request type's UnmarshalJSON to say, in msg, what is wrong with its
// value; DecodeBody answers "body: " + msg with 422.
func ValueError(msg string) error { return &valueError{msg} }

// StatusOf maps an error to its HTTP status: the one place where core errors meet HTTP.
func StatusOf(err error) int {
	var body *bodyError
	var slow *BodyTimeoutError
	switch {
	case errors.As(err, &slow):
		return http.StatusRequestTimeout
	case errors.Is(err, apps.ErrTooManySessions):
		return http.StatusTooManyRequests
	case errors.As(err, &body), errors.Is(err, fault.ErrInvalid):
		return http.StatusUnprocessableEntity
	case errors.Is(err, fault.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, fault.ErrRefused):
		return http.StatusBadRequest
	case errors.Is(err, fault.ErrUnavailable):
		return http.StatusServiceUnavailable
	case errors.Is(err, fault.ErrUpstream):
		return http.StatusBadGateway // a service the daemon called (the hub) failed
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT), errors.Is(err, syscall.EROFS):
		return http.StatusInsufficientStorage // the data dir cannot be written: not a bug, an operator's problem
	}
	return http.StatusInternalServerError
}

// Detail is the error body every route answers with.
type Detail struct {
	Detail string `json:"detail"`
}

// StatusOK is the answer of routes that only say it worked: {"status": "ok"} (or "stopped", ...).
type StatusOK struct {
	Status string `json:"status"`
}

// WriteError answers err with its status (StatusOf) as {"detail": err}; server errors are logged.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	code := StatusOf(err)
	if code == http.StatusRequestTimeout {
		w.Header().Set("Connection", "close") // the rest of the body may still come: do not read it
	}
	if code >= http.StatusInternalServerError {
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	WriteJSON(w, code, Detail{Detail: err.Error()})
}

// WriteJSON answers v as JSON with code.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		code, data = http.StatusInternalServerError, []byte(`{"detail":"encoding the response failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}

// DecodeBody decodes the JSON body of r into v, reading at most limit bytes. An empty body is
// allowed when optional. Errors are BodyError (422) naming what is wrong, or *BodyTimeoutError
// (408) for a body that did not come in time.
func DecodeBody(w http.ResponseWriter, r *http.Request, v any, limit int64, optional bool) error {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return BodyError(fmt.Sprintf("body: larger than %d bytes", limit))
		}
		if db, ok := r.Body.(*deadlineBody); ok && isTimeout(err) {
			return &BodyTimeoutError{db.timeout}
		}
		return BodyError("body: " + err.Error())
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		if optional {
			return nil
		}
		return BodyError("body: a JSON object is required")
	}
	if err := json.Unmarshal(data, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		var syntaxErr *json.SyntaxError
		var valueErr *valueError
		switch {
		case errors.As(err, &valueErr):
			return BodyError("body: " + valueErr.msg)
		case errors.As(err, &typeErr) && typeErr.Field != "":
			return BodyError(fmt.Sprintf("body: field %s: expected %s, got %s", typeErr.Field, typeErr.Type, typeErr.Value))
		case errors.As(err, &typeErr):
			return BodyError(fmt.Sprintf("body: expected a JSON object, got %s", typeErr.Value))
		case errors.As(err, &syntaxErr):
			return BodyError(fmt.Sprintf("body: invalid JSON at offset %d: %v", syntaxErr.Offset, err))
		}
		return BodyError("body: invalid JSON: " + err.Error())
	}
	return nil
}

// BoolQuery reads an optional true/false query parameter.
func BoolQuery(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, BodyError(name + ": must be true or false")
	}
	return b, nil
}

// RequiredBool reads a true/false query parameter that must be there.
func RequiredBool(r *http.Request, name string) (bool, error) {
	if r.URL.Query().Get(name) == "" {
		return false, BodyError(fmt.Sprintf("query parameter %s is required: true or false", name))
	}
	return BoolQuery(r, name)
}

// Truncate shortens what a client sent to 40 bytes, for an answer that quotes it.
func Truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
