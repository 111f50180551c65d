package hubemu

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// maxRequestBytes caps a request body.
const maxRequestBytes = 1 << 20

// statusOf maps an error to its status code and the message the caller sees. It is the only place
// where errors become statuses. Errors of no known kind are 500s whose details go to the log only.
func statusOf(err error) (int, string) {
	var e *fault.Error
	if errors.As(err, &e) {
		for _, ks := range kindStatuses {
			if errors.Is(err, ks.kind) {
				return ks.status, e.Msg
			}
		}
	}
	return http.StatusInternalServerError, "internal error"
}

// kindStatuses are tried in order: an error of two kinds gets the first.
var kindStatuses = []struct {
	kind   error
	status int
}{
	{fault.ErrInvalid, 400}, {fault.ErrUnauthenticated, 401}, {fault.ErrForbidden, 403}, {fault.ErrNotFound, 404},
	{fault.ErrRefused, 409}, {fault.ErrTooLarge, 413}, {fault.ErrRateLimited, 429}, {fault.ErrUpstream, 502},
	{fault.ErrUnavailable, 503}, {fault.ErrTimeout, 504},
}

// apiFunc is a handler that returns an error instead of writing it.
type apiFunc func(w http.ResponseWriter, r *http.Request, p Principal) error

// authed checks the bearer token and its role, then calls fn; an error from either is written as
// {"error": message} with the status statusOf gives.
func (e *Emulator) authed(role string, fn apiFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := e.Authenticate(r.Context(), bearerToken(r))
		if err == nil && role == RoleWrite && !p.CanWrite() {
			err = errorf(fault.Forbidden, "this token has the read role: %s %s needs a token with the write role", r.Method, r.URL.Path)
		}
		if err == nil {
			err = fn(w, r, p)
		}
		if err != nil {
			e.writeError(w, r, err)
		}
	})
}

func bearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

func (e *Emulator) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := statusOf(err)
	if status == http.StatusInternalServerError && storageFailure(err) {
		status, msg = http.StatusInsufficientStorage, "the hub cannot write its database "+e.dsn+": "+err.Error()
	}
	if status >= http.StatusInternalServerError {
		e.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "request_id", w.Header().Get("X-Request-Id"), "err", err)
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
	// The public hub sends its message in the X-Error-Message header as well as in the body.
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

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status, buf = http.StatusInternalServerError, *bytes.NewBufferString(`{"error":"internal error: the answer does not encode"}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// decode reads a JSON request body into v, refusing unknown fields, trailing data and bodies over
// maxRequestBytes, with a message that names the problem.
func decode(r *http.Request, v any) error { return decodeBody(r, v, true) }

// decodeLenient is decode for the routes whose public clients send fields the emulator has no use
// for (hardware, secrets and variables of a new space): unknown fields are ignored.
func decodeLenient(r *http.Request, v any) error { return decodeBody(r, v, false) }

func decodeBody(r *http.Request, v any, strict bool) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	if err != nil {
		return errorf(fault.Invalid, "reading the request body: %v", err)
	}
	if len(body) > maxRequestBytes {
		return errorf(fault.Invalid, "the request body is larger than %d bytes", maxRequestBytes)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return errorf(fault.Invalid, "the request body is empty: send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return errorf(fault.Invalid, "%s: must be %s", te.Field, jsonTypeName(te.Type.Kind().String()))
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return errorf(fault.Invalid, "unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
		default:
			return errorf(fault.Invalid, "the request body is not valid JSON: %v", err)
		}
	}
	if dec.More() {
		return errorf(fault.Invalid, "the request body has data after its JSON object")
	}
	return nil
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	default:
		return "a number"
	}
}

// middleware gives every response a request ID, turns the mux's own 404 and 405 answers into JSON
// error bodies, recovers from panics, and logs each request (never its headers).
func (e *Emulator) middleware(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var idb [8]byte
		_, _ = rand.Read(idb[:])
		id := hex.EncodeToString(idb[:])
		w.Header().Set("X-Request-Id", id)
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			if v := recover(); v != nil {
				e.log.Error("handler panicked", "method", r.Method, "path", r.URL.Path, "request_id", id,
					"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if !sw.wrote {
					writeJSON(sw, http.StatusInternalServerError, map[string]string{"error": "internal error"})
				}
			}
			if e.log.Enabled(r.Context(), slog.LevelDebug) {
				e.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", sw.status, "duration", time.Since(start), "request_id", id)
			}
		}()
		if err := emptyGitSegment(r); err != nil {
			e.writeGitError(sw, r, err)
			return
		}
		h, pattern := mux.Handler(r)
		if pattern == "" {
			// No route: let the mux decide between 404 and 405 (it sets Allow), then answer in JSON.
			rec := &statusWriter{ResponseWriter: discardWriter{header: w.Header()}}
			h.ServeHTTP(rec, r)
			msg := "no such route: " + r.Method + " " + r.URL.Path
			if rec.status == http.StatusMethodNotAllowed {
				msg = "method " + r.Method + " is not allowed on " + r.URL.Path + " (allowed: " + w.Header().Get("Allow") + ")"
			} else {
				rec.status = http.StatusNotFound
			}
			w.Header().Del("X-Content-Type-Options")
			writeJSON(sw, rec.status, map[string]string{"error": msg})
			return
		}
		mux.ServeHTTP(sw, r)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if !s.wrote {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

type discardWriter struct{ header http.Header }

func (d discardWriter) Header() http.Header         { return d.header }
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d discardWriter) WriteHeader(int)             {}

func handleHealth() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

func (e *Emulator) handleWhoami(w http.ResponseWriter, r *http.Request, p Principal) error {
	writeJSON(w, http.StatusOK, map[string]any{
		"type": "user", "id": p.User.ID, "name": p.User.Name,
		"orgs": []any{}, // the emulator has no organizations
		"auth": map[string]any{"type": "access_token", "accessToken": map[string]string{"displayName": p.TokenName, "role": p.Role}},
	})
	return nil
}

// webhookRecord is a webhook in the hub's JSON shape.
type webhookRecord struct {
	ID       string          `json:"id"`
	URL      string          `json:"url,omitempty"`
	Job      *jobRecord      `json:"job,omitempty"`
	Watched  json.RawMessage `json:"watched"`
	Domains  json.RawMessage `json:"domains"`
	Secret   string          `json:"secret,omitempty"`
	Disabled bool            `json:"disabled"`
}

// jobRecord is the job a job webhook runs, with the names (never the values) of its secrets.
type jobRecord struct {
	ID          string            `json:"id"`
	Command     []string          `json:"command"`
	Arguments   []string          `json:"arguments"`
	Environment map[string]string `json:"environment"`
	Secrets     []string          `json:"secrets"`
}

func recordOf(w *Webhook) webhookRecord {
	watched, _ := json.Marshal(w.Watched)
	domains, _ := json.Marshal(w.Domains)
	rec := webhookRecord{ID: w.ID, URL: w.URL, Watched: watched, Domains: domains, Secret: w.Secret, Disabled: w.Disabled}
	rec.Job = jobRecordFor(w)
	return rec
}

// jobRecordFor is the job part of a job webhook's record, or nil.
func jobRecordFor(w *Webhook) *jobRecord {
	if w.JobID != "" {
		j := &jobRecord{ID: w.JobID, Command: []string{}, Arguments: []string{}, Environment: map[string]string{}, Secrets: w.SecretNames}
		if w.Job != nil {
			j.Command = w.Job.Command
			j.Environment = w.Job.Environment
		}
		if j.Secrets == nil {
			j.Secrets = []string{}
		}
		return j
	}
	return nil
}

func (e *Emulator) handleListWebhooks(w http.ResponseWriter, r *http.Request, p Principal) error {
	body, err := e.readWebhookList(r.Context(), p.User.ID)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}

func writeWebhook(w http.ResponseWriter, status int, wh *Webhook) {
	writeJSON(w, status, map[string]webhookRecord{"webhook": recordOf(wh)})
}

func (e *Emulator) handleGetWebhook(w http.ResponseWriter, r *http.Request, p Principal) error {
	wh, err := e.Webhook(r.Context(), p.User.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeWebhook(w, http.StatusOK, wh)
	return nil
}

func (e *Emulator) handleCreateWebhook(w http.ResponseWriter, r *http.Request, p Principal) error {
	var in WebhookInput
	if err := decode(r, &in); err != nil {
		return err
	}
	wh, err := e.CreateWebhook(r.Context(), p.User.ID, in)
	if err != nil {
		return err
	}
	writeWebhook(w, http.StatusOK, wh)
	return nil
}

func (e *Emulator) handleUpdateWebhook(w http.ResponseWriter, r *http.Request, p Principal) error {
	var in WebhookInput
	if err := decode(r, &in); err != nil {
		return err
	}
	wh, err := e.UpdateWebhook(r.Context(), p.User.ID, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeWebhook(w, http.StatusOK, wh)
	return nil
}

func (e *Emulator) handleSetDisabled(disabled bool) apiFunc {
	return func(w http.ResponseWriter, r *http.Request, p Principal) error {
		wh, err := e.SetWebhookDisabled(r.Context(), p.User.ID, r.PathValue("id"), disabled)
		if err != nil {
			return err
		}
		writeWebhook(w, http.StatusOK, wh)
		return nil
	}
}

func (e *Emulator) handleDeleteWebhook(w http.ResponseWriter, r *http.Request, p Principal) error {
	if err := e.DeleteWebhook(r.Context(), p.User.ID, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (e *Emulator) handleEmit(w http.ResponseWriter, r *http.Request, p Principal) error {
	var in EmitInput
	if err := decode(r, &in); err != nil {
		return err
	}
	res, err := e.Emit(r.Context(), p, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func queryLimit(r *http.Request) (int, error) {
	s := r.URL.Query().Get("limit")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1000 {
		return 0, errorf(fault.Invalid, "limit: %q is not a number from 1 to 1000", s)
	}
	return n, nil
}

func (e *Emulator) handleActivity(w http.ResponseWriter, r *http.Request, p Principal) error {
	limit, err := queryLimit(r)
	if err != nil {
		return err
	}
	a, err := e.Activity(r.Context(), p.User.ID, r.PathValue("id"), limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (e *Emulator) handleDelivery(w http.ResponseWriter, r *http.Request, p Principal) error {
	d, err := e.Delivery(r.Context(), p.User.ID, r.PathValue("id"), r.PathValue("delivery"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

func (e *Emulator) handleReplay(w http.ResponseWriter, r *http.Request, p Principal) error {
	ref, err := e.Replay(r.Context(), p.User.ID, r.PathValue("id"), r.PathValue("delivery"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ref)
	return nil
}

func (e *Emulator) handleJobRuns(w http.ResponseWriter, r *http.Request, p Principal) error {
	limit, err := queryLimit(r)
	if err != nil {
		return err
	}
	runs, err := e.JobRuns(r.Context(), p.User.ID, r.PathValue("id"), limit)
	if err != nil {
		return err
	}
	if runs == nil {
		runs = []JobRun{}
	}
	writeJSON(w, http.StatusOK, runs)
	return nil
}

func (e *Emulator) handleJobRun(w http.ResponseWriter, r *http.Request, p Principal) error {
	run, err := e.JobRun(r.Context(), p.User.ID, r.PathValue("run"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, run)
	return nil
}

// SourceJobRecord is a source job in the emulator's JSON: the names of its secrets, not their values.
type SourceJobRecord struct {
	ID          string            `json:"id"`
	Command     []string          `json:"command"`
	Environment map[string]string `json:"environment"`
	Secrets     []string          `json:"secrets"`
	CreatedAt   time.Time         `json:"createdAt"`
}

func jobRecordOf(j *SourceJob) SourceJobRecord {
	rec := SourceJobRecord{ID: j.ID, Command: j.Command, Environment: j.Environment, Secrets: j.SecretNames, CreatedAt: j.CreatedAt}
	if rec.Secrets == nil {
		rec.Secrets = []string{}
	}
	return rec
}

func (e *Emulator) handleCreateJob(w http.ResponseWriter, r *http.Request, p Principal) error {
	var in JobInput
	if err := decode(r, &in); err != nil {
		return err
	}
	j, err := e.CreateSourceJob(r.Context(), p.User.ID, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, jobRecordOf(j))
	return nil
}

func (e *Emulator) handleListJobs(w http.ResponseWriter, r *http.Request, p Principal) error {
	jobs, err := e.SourceJobs(r.Context(), p.User.ID)
	if err != nil {
		return err
	}
	out := make([]SourceJobRecord, len(jobs))
	for i, j := range jobs {
		out[i] = jobRecordOf(j)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (e *Emulator) handleGetJob(w http.ResponseWriter, r *http.Request, p Principal) error {
	j, err := e.SourceJob(r.Context(), p.User.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, jobRecordOf(j))
	return nil
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
