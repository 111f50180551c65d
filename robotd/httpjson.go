package robotd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"syscall"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/fault"
)

// Body size limits.
const (
	maxBodyBytes      = 1 << 20
	maxAudioBodyBytes = 8 << 20 // 10 s of samples as JSON numbers
)

// errBody is a malformed request body: answered with 422.
type errBody struct{ msg string }

func (e *errBody) Error() string { return e.msg }

// statusOf maps an error to its HTTP status: the one place where core errors meet HTTP.
func statusOf(err error) int {
	var body *errBody
	var slow *errBodyTimeout
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
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT), errors.Is(err, syscall.EROFS):
		return http.StatusInsufficientStorage // the data dir cannot be written: not a bug, an operator's problem
	}
	return http.StatusInternalServerError
}

// detail is the error body every route answers with.
type detail struct {
	Detail string `json:"detail"`
}

func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	code := statusOf(err)
	if code == http.StatusRequestTimeout {
		w.Header().Set("Connection", "close") // the rest of the body may still come: do not read it
	}
	if code >= http.StatusInternalServerError {
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeJSON(w, code, detail{Detail: err.Error()})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		code, data = http.StatusInternalServerError, []byte(`{"detail":"encoding the response failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}

// decodeBody decodes the JSON body of r into v. An empty body is allowed when optional. Errors
// are *errBody, naming what is wrong.
func decodeBody(w http.ResponseWriter, r *http.Request, v any, limit int64, optional bool) error {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &errBody{fmt.Sprintf("body: larger than %d bytes", limit)}
		}
		if db, ok := r.Body.(*deadlineBody); ok && isTimeout(err) {
			return &errBodyTimeout{db.after()}
		}
		return &errBody{"body: " + err.Error()}
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		if optional {
			return nil
		}
		return &errBody{"body: a JSON object is required"}
	}
	if err := json.Unmarshal(data, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		var syntaxErr *json.SyntaxError
		var poseErr *poseError
		switch {
		case errors.As(err, &poseErr):
			return &errBody{"body: " + poseErr.msg}
		case errors.As(err, &typeErr) && typeErr.Field != "":
			return &errBody{fmt.Sprintf("body: field %s: expected %s, got %s", typeErr.Field, typeErr.Type, typeErr.Value)}
		case errors.As(err, &typeErr):
			return &errBody{fmt.Sprintf("body: expected a JSON object, got %s", typeErr.Value)}
		case errors.As(err, &syntaxErr):
			return &errBody{fmt.Sprintf("body: invalid JSON at offset %d: %v", syntaxErr.Offset, err)}
		}
		return &errBody{"body: invalid JSON: " + err.Error()}
	}
	return nil
}
