package http

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/fault/httpstatus"
	"github.com/robothub/robothub/internal/hubemu"
)

// statusOf maps an error to its status code and the message the caller sees. The status is the
// one table's (core/fault/httpstatus), the public hub's statuses; the message is a core/fault
// error's own, a full disk's naming the database (a *hubemu.DiskError, of kind fault.Storage) or
// the system's error, and nothing for a server error, whose details go to the log only.
func statusOf(err error) (int, string) {
	status := httpstatus.Of(err, httpstatus.Hub)
	var fe *fault.Error
	var disk *hubemu.DiskError
	var errno syscall.Errno
	switch {
	case status == http.StatusInternalServerError:
	case errors.As(err, &fe):
		return status, fe.Msg
	case errors.As(err, &disk):
		return status, disk.Error()
	case errors.As(err, &errno): // a file write the disk refused (fault.Storage): no path, no detail
		return status, "the hub cannot write to its disk: " + errno.Error()
	}
	return http.StatusInternalServerError, "internal error"
}

func errorf(kind fault.Kind, format string, args ...any) error {
	return &fault.Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// writeError answers err as {"error": message} with its status; the public hub sends the message
// in X-Error-Message too, and a machine-readable code in X-Error-Code.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := statusOf(err)
	if status >= http.StatusInternalServerError {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "request_id", w.Header().Get("X-Request-Id"), "err", err)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="robothub hub emulator"`)
	}
	closeUnread(w, status)
	var known *fault.Error
	if errors.As(err, &known) && known.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(known.RetryAfter.Round(time.Second)/time.Second)))
	}
	if known != nil && known.Code != "" {
		w.Header().Set("X-Error-Code", known.Code)
	}
	w.Header().Set("X-Error-Message", headerSafe(msg))
	writeJSON(w, status, map[string]string{"error": msg})
}

func headerSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return ' '
		}
		return r
	}, s)
}

// closeUnread marks a refusal that is answered before the request's body is read (401, 403, 413) as
// the connection's last answer. Otherwise net/http, to reuse the connection, first reads what is
// left of a small body, and a client that sent its headers and never its body would wait for its
// answer until the read timeout.
func closeUnread(w http.ResponseWriter, status int) {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestEntityTooLarge:
		w.Header().Set("Connection", "close")
	}
}
