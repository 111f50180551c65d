package http

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/fault/httpstatus"
	"github.com/robothub/robothub/internal/hubemu"
)

// TestStatusOfEveryKind checks the hub's errors' statuses, with the message a caller reads: each
// kind's status, a wrapped kind, 507 naming the database for a full disk, and 500 with no detail for
// an error of no kind; then that an answer of each kind has the one table's status for the hub.
func TestStatusOfEveryKind(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		msg    string
	}{
		{fault.Invalidf("name: empty"), 400, "name: empty"},
		{fault.New(fault.Unauthenticated, "no token"), 401, "no token"},
		{fault.New(fault.Forbidden, "read role"), 403, "read role"},
		{fault.NotFoundf("webhook x not found"), 404, "webhook x not found"},
		{fault.Refusedf("disabled"), 409, "disabled"},
		{fault.New(fault.TooLarge, "too big"), 413, "too big"},
		{fault.New(fault.RateLimited, "slow down"), 429, "slow down"},
		{fault.New(fault.Upstream, "receiver failed"), 502, "receiver failed"},
		{fault.Unavailablef("no git"), 503, "no git"},
		{fault.New(fault.Timeout, "too long"), 504, "too long"},
		{fmt.Errorf("creating: %w", fault.Refusedf("exists")), 409, "exists"},
		{&hubemu.DiskError{Database: "/data/hub.db", Err: errors.New("database or disk is full")}, 507,
			"the hub cannot write its database /data/hub.db: database or disk is full"},
		{&os.PathError{Op: "write", Path: "/data/spaces/a/b/objects/x", Err: syscall.ENOSPC}, 507,
			"the hub cannot write to its disk: no space left on device"},
		{errors.New("sql: connection is already closed"), 500, "internal error"},
	} {
		status, msg := statusOf(c.err)
		if status != c.status || msg != c.msg {
			t.Errorf("statusOf(%v) = %d %q, want %d %q", c.err, status, msg, c.status, c.msg)
		}
	}
	s := &Server{log: slog.New(slog.DiscardHandler)}
	for _, kind := range fault.Kinds() {
		rec := httptest.NewRecorder()
		s.writeError(rec, httptest.NewRequest("POST", "/api/x", nil), fmt.Errorf("doing it: %w", fault.New(kind, "it went wrong")))
		if want := httpstatus.Status(kind, httpstatus.Hub); rec.Code != want || !strings.Contains(rec.Body.String(), `{"error":"it went wrong"}`) {
			t.Errorf("a %v error: %d %s, want %d", kind, rec.Code, rec.Body, want)
		}
	}
}

// TestErrorAnswersCarryRetryAfterAndCode checks what writeError adds to the body: Retry-After,
// X-Error-Code and X-Error-Message, and a Bearer challenge on 401.
func TestErrorAnswersCarryRetryAfterAndCode(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler)}
	rec := httptest.NewRecorder()
	s.writeError(rec, httptest.NewRequest("POST", "/x", nil), &fault.Error{Kind: fault.RateLimited, Msg: "used its triggers", RetryAfter: 90 * time.Second})
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "90" || rec.Header().Get("X-Error-Message") != "used its triggers" ||
		!strings.Contains(rec.Body.String(), `{"error":"used its triggers"}`) {
		t.Errorf("429 answer: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	rec = httptest.NewRecorder()
	s.writeError(rec, httptest.NewRequest("GET", "/x", nil), &fault.Error{Kind: fault.Unauthenticated, Code: "RepoNotFound", Msg: "no such repo"})
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("X-Error-Code") != "RepoNotFound" ||
		!strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") || rec.Header().Get("Connection") != "close" {
		t.Errorf("401 answer: %d %v", rec.Code, rec.Header())
	}
}
