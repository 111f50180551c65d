package http

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/internal/hubemu"
)

// statusOf maps an error to its status code and the message the caller sees. It is the only place
// where errors become statuses: core/fault's kinds in the order of kindStatuses (so that an error of
// two kinds gets the first), a change the disk refused 507 with the database named. Errors of no
// known kind are 500s whose details go to the log only.
func statusOf(err error) (int, string) {
	var disk *hubemu.DiskError
	if errors.As(err, &disk) {
		return http.StatusInsufficientStorage, disk.Error()
	}
	var fe *fault.Error
	if !errors.As(err, &fe) {
		return http.StatusInternalServerError, "internal error"
	}
	for _, ks := range kindStatuses {
		if errors.Is(err, ks.kind) {
			return ks.status, fe.Msg
		}
	}
	return http.StatusInternalServerError, "internal error"
}

var kindStatuses = []struct {
	kind   *fault.Error
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
