package httpapi_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/fault/httpstatus"
	"github.com/robothub/robothub/robotd/httpapi"
)

// StatusOf is the one place where the daemon's errors meet HTTP: each kind has its status,
// wrapped or not, and anything else is a server error.
func TestStatusOfMapsEachKindOnce(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{httpapi.BodyError("body: field url is required"), http.StatusUnprocessableEntity},
		{fmt.Errorf("install: %w", fault.Invalidf("name %q", "x y")), http.StatusUnprocessableEntity},
		{fault.NotFoundf("app %s", "nope"), http.StatusNotFound},
		{fmt.Errorf("start: %w", fault.Refusedf("An app is already running")), http.StatusBadRequest},
		{fault.Unavailablef("no camera"), http.StatusServiceUnavailable},
		{fmt.Errorf("open: %w", apps.ErrTooManySessions), http.StatusTooManyRequests},
		{&httpapi.BodyTimeoutError{After: time.Second}, http.StatusRequestTimeout},
		{fmt.Errorf("writing: %w", syscall.ENOSPC), http.StatusInsufficientStorage},
		{fmt.Errorf("writing: %w", syscall.EROFS), http.StatusInsufficientStorage},
		{errors.New("a bug"), http.StatusInternalServerError},
	} {
		if got := httpapi.StatusOf(c.err); got != c.want {
			t.Errorf("StatusOf(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	log := slog.New(slog.DiscardHandler)
	for _, kind := range fault.Kinds() {
		rec := httptest.NewRecorder()
		httpapi.WriteError(rec, httptest.NewRequest("POST", "/api/x", nil), log, fmt.Errorf("doing it: %w", fault.New(kind, "it went wrong")))
		if want := httpstatus.Status(kind, httpstatus.Daemon); rec.Code != want || !strings.Contains(rec.Body.String(), `{"detail":"doing it: it went wrong"}`) {
			t.Errorf("a %v error: %d %s, want %d", kind, rec.Code, rec.Body, want)
		}
	}
}

type wrapped struct{}

func (w *wrapped) UnmarshalJSON([]byte) error {
	return httpapi.ValueError("pose: m: expected 16 numbers")
}

// A body that cannot be decoded is answered with what is wrong with it, by name.
func TestDecodeBodySaysWhatIsWrong(t *testing.T) {
	type req struct {
		Duration *float64 `json:"duration"`
		Pose     *wrapped `json:"pose"`
	}
	for _, c := range []struct {
		body     string
		limit    int64
		optional bool
		want     string // "" for no error
	}{
		{`{"duration": 2}`, 1 << 10, false, ""},
		{``, 1 << 10, true, ""},
		{`  `, 1 << 10, false, "body: a JSON object is required"},
		{`{"duration": "two"}`, 1 << 10, false, "body: field duration: expected float64, got string"},
		{`[1]`, 1 << 10, false, "body: expected a JSON object, got array"},
		{`{"duration": }`, 1 << 10, false, "body: invalid JSON at offset"},
		{`{"pose": {}}`, 1 << 10, false, "body: pose: m: expected 16 numbers"},
		{`{"duration": 1}` + strings.Repeat(" ", 100), 64, false, "body: larger than 64 bytes"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/api/x", strings.NewReader(c.body))
		var v req
		err := httpapi.DecodeBody(httptest.NewRecorder(), r, &v, c.limit, c.optional)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.body, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%q: got %v, want %q", c.body, err, c.want)
		case c.want != "" && httpapi.StatusOf(err) != http.StatusUnprocessableEntity:
			t.Errorf("%q: status %d, want 422", c.body, httpapi.StatusOf(err))
		}
	}
}

// WriteError answers {"detail": ...} with the error's status.
func TestWriteErrorAnswersDetail(t *testing.T) {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/api/apps/job-status/x", nil)
	httpapi.WriteError(w, r, nil, fault.NotFoundf("Job x not found"))
	if w.Code != http.StatusNotFound || w.Body.String() != `{"detail":"Job x not found"}`+"\n" || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%d %q %q", w.Code, w.Body, w.Header().Get("Content-Type"))
	}
	if _, err := httpapi.BoolQuery(httptest.NewRequest(http.MethodGet, "/?wait=maybe", nil), "wait"); err == nil || err.Error() != "wait: must be true or false" {
		t.Fatalf("BoolQuery: %v", err)
	}
}
