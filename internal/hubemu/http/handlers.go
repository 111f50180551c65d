package http

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
	"github.com/robothub/robothub/internal/hubemu"
)

// maxRequestBytes caps a request body.
const maxRequestBytes = 1 << 20

// apiFunc is a handler that returns an error instead of writing it.
type apiFunc func(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error

// authed checks the bearer token and its role, then calls fn; an error from either is written as
// {"error": message} with the status statusOf gives.
func (s *Server) authed(role string, fn apiFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.hub.Authenticate(r.Context(), bearerToken(r))
		if err == nil && role == hubemu.RoleWrite && !p.CanWrite() {
			err = errorf(fault.Forbidden, "this token has the read role: %s %s needs a token with the write role", r.Method, r.URL.Path)
		}
		if err == nil {
			err = fn(w, r, p)
		}
		if err != nil {
			s.writeError(w, r, err)
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
func (s *Server) middleware(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var idb [8]byte
		_, _ = rand.Read(idb[:])
		id := hex.EncodeToString(idb[:])
		w.Header().Set("X-Request-Id", id)
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("handler panicked", "method", r.Method, "path", r.URL.Path, "request_id", id,
					"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if !sw.wrote {
					writeJSON(sw, http.StatusInternalServerError, map[string]string{"error": "internal error"})
				}
			}
			if s.log.Enabled(r.Context(), slog.LevelDebug) {
				s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", sw.status, "duration", time.Since(start), "request_id", id)
			}
		}()
		if err := emptyGitSegment(r); err != nil {
			s.writeGitError(sw, r, err)
			return
		}
		h, pattern := mux.Handler(r)
		if _, model := s.modelFiles.Handler(r); pattern == "" && model != "" {
			s.modelFiles.ServeHTTP(sw, r)
			return
		}
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

func (s *Server) handleWhoami(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	writeJSON(w, http.StatusOK, map[string]any{
		"type": "user", "id": p.User.ID, "name": p.User.Name,
		"orgs": []any{}, // the emulator has no organizations
		"auth": map[string]any{"type": "access_token", "accessToken": map[string]string{"displayName": p.TokenName, "role": p.Role}},
	})
	return nil
}

func (s *Server) handleListWebhooks(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	body, err := s.hub.WebhookListJSON(r.Context(), p.User.ID)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}

func writeWebhook(w http.ResponseWriter, status int, wh *hubemu.Webhook) {
	writeJSON(w, status, map[string]hubemu.WebhookRecord{"webhook": wh.Record()})
}

func (s *Server) handleGetWebhook(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	wh, err := s.hub.Webhook(r.Context(), p.User.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeWebhook(w, http.StatusOK, wh)
	return nil
}

func (s *Server) handleCreateWebhook(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	var in hubemu.WebhookInput
	if err := decode(r, &in); err != nil {
		return err
	}
	wh, err := s.hub.CreateWebhook(r.Context(), p.User.ID, in)
	if err != nil {
		return err
	}
	writeWebhook(w, http.StatusOK, wh)
	return nil
}

func (s *Server) handleUpdateWebhook(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	var in hubemu.WebhookInput
	if err := decode(r, &in); err != nil {
		return err
	}
	wh, err := s.hub.UpdateWebhook(r.Context(), p.User.ID, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeWebhook(w, http.StatusOK, wh)
	return nil
}

func (s *Server) handleSetDisabled(disabled bool) apiFunc {
	return func(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
		wh, err := s.hub.SetWebhookDisabled(r.Context(), p.User.ID, r.PathValue("id"), disabled)
		if err != nil {
			return err
		}
		writeWebhook(w, http.StatusOK, wh)
		return nil
	}
}

func (s *Server) handleDeleteWebhook(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	if err := s.hub.DeleteWebhook(r.Context(), p.User.ID, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) handleEmit(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	var in hubemu.EmitInput
	if err := decode(r, &in); err != nil {
		return err
	}
	res, err := s.hub.Emit(r.Context(), p, in)
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

func (s *Server) handleActivity(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	limit, err := queryLimit(r)
	if err != nil {
		return err
	}
	a, err := s.hub.Activity(r.Context(), p.User.ID, r.PathValue("id"), limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (s *Server) handleDelivery(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	d, err := s.hub.Delivery(r.Context(), p.User.ID, r.PathValue("id"), r.PathValue("delivery"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

func (s *Server) handleReplay(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	ref, err := s.hub.Replay(r.Context(), p, r.PathValue("id"), r.PathValue("delivery"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ref)
	return nil
}

func (s *Server) handleJobRuns(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	limit, err := queryLimit(r)
	if err != nil {
		return err
	}
	runs, err := s.hub.JobRuns(r.Context(), p.User.ID, r.PathValue("id"), limit)
	if err != nil {
		return err
	}
	if runs == nil {
		runs = []hubemu.JobRun{}
	}
	writeJSON(w, http.StatusOK, runs)
	return nil
}

func (s *Server) handleJobRun(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	run, err := s.hub.JobRun(r.Context(), p.User.ID, r.PathValue("run"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, run)
	return nil
}

func (s *Server) handleCreateJob(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	var in hubemu.JobInput
	if err := decode(r, &in); err != nil {
		return err
	}
	j, err := s.hub.CreateSourceJob(r.Context(), p.User.ID, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, j.Record())
	return nil
}

func (s *Server) handleListJobs(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	jobs, err := s.hub.SourceJobs(r.Context(), p.User.ID)
	if err != nil {
		return err
	}
	out := make([]hubemu.SourceJobRecord, len(jobs))
	for i, j := range jobs {
		out[i] = j.Record()
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) handleGetJob(w http.ResponseWriter, r *http.Request, p hubemu.Principal) error {
	j, err := s.hub.SourceJob(r.Context(), p.User.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, j.Record())
	return nil
}
