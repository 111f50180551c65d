package webhook

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/robothub/robothub/core/fault"
)

// RoutePrefix is the path under which every handler is served: /webhooks/<name>.
const RoutePrefix = "/webhooks/"

// DefaultMaxBodyBytes is a Server's cap on the size of a delivery unless WithMaxBodyBytes says otherwise.
const DefaultMaxBodyBytes = 1 << 20

// HandlerFunc handles one delivery. It gets the request's context (cancelled when the handler
// timeout passes or the client goes away), the parsed payload and the request headers.
//
// It may return nil (the hub sees 200 {"message":"ok"}), a string (200 {"message": s}), a Response
// (its status and body), or any value that encodes to JSON (200 with that JSON). A returned error is
// answered {"error": err.Error()} with the status of its core/fault kind (statusOf), or 500.
type HandlerFunc func(ctx context.Context, p *Payload, h http.Header) (any, error)

// Response is a handler result with a status other than 200, such as 202 Accepted.
type Response struct {
	Status int
	Body   any
}

// Route is one registered handler.
type Route struct {
	Name string // as registered, slashes trimmed: "say-hello"
	Path string // "/webhooks/say-hello"
}

type route struct {
	Route
	fn HandlerFunc
}

// Server is the webhook receiver: an http.Handler serving one POST route per registered handler
// under /webhooks/, a landing page at / and a readiness probe at /healthz. It does not listen on
// anything itself: an adapter (net/http, Lambda, Cloud Functions) hands it requests.
//
// Handlers may be added while the server is serving.
type Server struct {
	secret     Secret
	maxBody    int64
	timeout    time.Duration
	log        *slog.Logger
	ui         http.Handler
	getenv     func(string) string
	secretSet  bool // an option chose the secret; do not read the environment
	mu         sync.Mutex
	routes     atomic.Pointer[map[string]*route] // copy on write: requests never take a lock
	publicBase atomic.Pointer[string]
	deadlines  handlerDeadlines // the running handlers' timeouts (deliveryctx.go)
}

// Option configures a Server.
type Option func(*Server)

// WithSecret sets the secret that requests must carry. Without this option the server reads
// WEBHOOK_SECRET; an empty secret, from either, leaves every route open.
func WithSecret(secret string) Option {
	return func(s *Server) { s.secret, s.secretSet = NewSecret(secret), true }
}

// WithMaxBodyBytes caps the size of a delivery; bigger bodies get 413. Default 1 MiB.
func WithMaxBodyBytes(n int64) Option { return func(s *Server) { s.maxBody = n } }

// WithHandlerTimeout bounds the time a handler may take before the caller gets 503. Default 30s.
func WithHandlerTimeout(d time.Duration) Option { return func(s *Server) { s.timeout = d } }

// WithLogger sets the structured logger. Default slog.Default().
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithUI replaces the landing page: ui serves every path that is neither a webhook route nor /healthz.
func WithUI(ui http.Handler) Option { return func(s *Server) { s.ui = ui } }

// WithGetenv sets how the server reads its environment (WEBHOOK_SECRET). Default os.Getenv.
func WithGetenv(getenv func(string) string) Option { return func(s *Server) { s.getenv = getenv } }

// NewServer returns a Server with no routes. With no secret configured it logs, once, a warning that
// every route is open to everyone.
func NewServer(opts ...Option) *Server {
	s := &Server{getenv: os.Getenv}
	for _, o := range opts {
		o(s)
	}
	s.log = cmp.Or(s.log, slog.Default())
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.timeout <= 0 {
		s.timeout = 30 * time.Second
	}
	if !s.secretSet {
		s.secret = NewSecret(s.getenv(SecretEnv))
	}
	empty, base := map[string]*route{}, ""
	s.routes.Store(&empty)
	s.publicBase.Store(&base)
	if !s.secret.IsSet() {
		s.log.Warn("no webhook secret is set: every " + RoutePrefix + " route accepts requests from anyone; set " + SecretEnv + " and the same secret on the hub webhook")
	}
	return s
}

// HandlerTimeout is the longest a handler may run; a transport's own timeouts should exceed it.
func (s *Server) HandlerTimeout() time.Duration { return s.timeout }

// SecretIsSet reports whether requests must carry a secret.
func (s *Server) SecretIsSet() bool { return s.secret.IsSet() }

// SetPublicURL records the address at which the hub reaches this server (a tunnel, a Space, a
// function URL), so that the landing page shows routes at that address. Empty clears it.
func (s *Server) SetPublicURL(base string) {
	base = strings.TrimRight(base, "/")
	s.publicBase.Store(&base)
}

// PublicURL returns the address set by SetPublicURL, or "".
func (s *Server) PublicURL() string { return *s.publicBase.Load() }

// Add registers fn at /webhooks/<name>. Leading and trailing slashes of name are ignored. It is an
// error to use an invalid name or one that is already registered.
func (s *Server) Add(name string, fn HandlerFunc) error {
	if fn == nil {
		return errors.New("webhook handler is nil")
	}
	name = strings.Trim(name, "/")
	if err := checkName(name); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.routes.Load()
	path := RoutePrefix + name
	if _, dup := old[path]; dup {
		return fmt.Errorf("webhook route %s is already registered", path)
	}
	next := maps.Clone(old)
	next[path] = &route{Route: Route{Name: name, Path: path}, fn: fn}
	s.routes.Store(&next)
	return nil
}

// AddFunc registers fn under its own Go name: func sayHello is served at /webhooks/sayHello.
// Anonymous functions have no usable name and are refused.
func (s *Server) AddFunc(fn HandlerFunc) error {
	name, err := funcName(fn)
	if err != nil {
		return err
	}
	return s.Add(name, fn)
}

// Routes returns the registered routes sorted by path.
func (s *Server) Routes() []Route {
	m := *s.routes.Load()
	out := make([]Route, 0, len(m))
	for _, path := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[path].Route)
	}
	return out
}

// ServeHTTP routes a request: /webhooks/<name> to its handler, /healthz to the readiness probe,
// everything else to the landing page (or the UI given with WithUI).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case strings.HasPrefix(path, RoutePrefix):
		s.serveWebhook(w, r, path)
	case path == "/healthz":
		buf, _ := json.Marshal(map[string]any{"status": "ok", "routes": len(*s.routes.Load())})
		writeRaw(w, http.StatusOK, buf)
	case s.ui != nil:
		s.ui.ServeHTTP(w, r)
	case path == "/" || path == "":
		s.serveLanding(w, r)
	default:
		writeError(w, http.StatusNotFound, "not found: "+path)
	}
}

// answerTimeout answers 503 for a handler that did not finish in time, or whose client left (why
// is the error its context ended with).
func (s *Server) answerTimeout(w http.ResponseWriter, r *http.Request, rt *route, why error) {
	status, msg := http.StatusServiceUnavailable, "handler "+rt.Name+" did not finish within "+s.timeout.String()
	if why != context.DeadlineExceeded || r.Context().Err() != nil {
		msg = "client went away before handler " + rt.Name + " finished"
	}
	s.log.Error("webhook handler timed out", "route", rt.Path, "status", status, "reason", msg)
	buf := field{"error", msg}.appendJSON(nil)
	// Flushed before the handler returns: say the length, or net/http would chunk it; and close the
	// connection, which the handler still holds, so that the client does not send its next request
	// on it and wait for the handler.
	w.Header()["Content-Length"] = []string{strconv.Itoa(len(buf))}
	w.Header()["Connection"] = []string{"close"}
	writeRaw(w, status, buf)
}

// call runs a handler and returns its value and error, or what it panicked with and where.
func call(ctx context.Context, fn HandlerFunc, p *Payload, h http.Header) (v, panicked any, stack []byte, err error) {
	defer func() {
		if panicked = recover(); panicked != nil {
			stack = debug.Stack()
		}
	}()
	v, err = fn(ctx, p, h)
	return v, nil, nil, err
}

// browserGuard refuses unsafe requests that a browser sends on behalf of another site
// (Sec-Fetch-Site cross-site or same-site, or an Origin that is not the request's host). Hubs
// deliver from servers, which send neither header, so no delivery is refused; but a page that a
// user of the receiver opens cannot make the browser trigger a route (which may run a command).
var browserGuard = http.NewCrossOriginProtection()

// browserRefused is the answer to a request the browser guard refuses.
const browserRefused = "cross-origin browser requests are refused: webhooks are delivered by the hub's servers, not by a browser"

func (s *Server) serveWebhook(w http.ResponseWriter, r *http.Request, path string) {
	start := time.Now()
	if err := browserGuard.Check(r); err != nil {
		s.refuse(w, r, path, http.StatusForbidden, err, browserRefused)
		return
	}
	rt := (*s.routes.Load())[strings.TrimSuffix(path, "/")]
	if rt == nil {
		writeError(w, http.StatusNotFound, "no webhook handler at "+path)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on "+rt.Path+": webhooks are delivered with POST")
		return
	}
	err := s.secret.Check(r.Header, r.URL.RawQuery) // 401 or 403
	var d *delivery
	if err == nil {
		d = new(delivery)                                     // the payload, its parts and the handler's context: one allocation
		err = readPayload(r, s.maxBody, &d.payload, &d.parts) // 413, 400 or 422
	}
	if err != nil {
		s.refuse(w, r, rt.Path, statusOf(err), err, err.Error())
		return
	}
	p := &d.payload

	// The handler runs on the request's goroutine. When its context ends (the timeout passed or the
	// client went away), 503 is answered at once, while the handler finishes in the background.
	ctx := d.start(s, w, r, rt)
	v, panicked, stack, herr := call(ctx, rt.fn, p, r.Header)
	if ctx.release() {
		return // the context ended first and answered
	}

	var status int
	var out any
	switch {
	case panicked != nil:
		status = http.StatusInternalServerError
		s.log.Error("webhook handler panicked", "route", rt.Path, "panic", fmt.Sprint(panicked), "stack", string(stack))
		out = field{"error", "handler " + rt.Name + " panicked"}
	case herr != nil:
		status = statusOf(herr)
		s.log.Error("webhook handler failed", "route", rt.Path, "status", status, "err", herr.Error())
		out = field{"error", herr.Error()}
	default:
		status, out = resultBody(v)
	}
	switch out := out.(type) {
	case nil:
		writeRaw(w, status, okBody) // the common case, without encoding
	case field:
		writeField(w, status, out)
	default:
		buf, err := json.Marshal(out)
		if err != nil {
			s.log.Error("webhook handler result is not JSON", "route", rt.Path, "err", err.Error())
			status, buf = http.StatusInternalServerError, []byte(`{"error":"handler `+rt.Name+` returned a value that is not JSON"}`)
		}
		writeRaw(w, status, buf)
	}
	s.logDelivery(rt, p, status, start)
}

var okBody = []byte(`{"message":"ok"}` + "\n")

// logDelivery logs an answered delivery at debug level: a receiver is quiet about success, as
// net/http is (refusals and handler failures are logged at warn and error level).
func (s *Server) logDelivery(rt *route, p *Payload, status int, start time.Time) {
	if !s.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	s.log.LogAttrs(context.Background(), slog.LevelDebug, "webhook delivered",
		slog.String("route", rt.Path), slog.Int("status", status),
		slog.String("scope", p.Event.Scope), slog.String("action", p.Event.Action),
		slog.String("repo", p.Repo.Type+":"+p.Repo.Name), slog.Duration("duration", time.Since(start)))
}

// resultBody is the status and body of a handler's value; a nil body is {"message":"ok"}.
func resultBody(v any) (int, any) {
	switch v := v.(type) {
	case nil:
		return http.StatusOK, nil
	case string:
		return http.StatusOK, field{"message", v}
	case Response:
		if v.Status < 100 || v.Status > 599 {
			v.Status = http.StatusOK
		}
		if v.Body == nil {
			return v.Status, field{"message", http.StatusText(v.Status)}
		}
		return v.Status, v.Body
	case *Response:
		if v == nil {
			return resultBody(nil)
		}
		return resultBody(*v)
	default:
		return http.StatusOK, v
	}
}

// readPayload reads the whole body once, refusing more than max bytes, and parses it into p and parts.
func readPayload(r *http.Request, max int64, p *Payload, parts *payloadParts) error {
	var body []byte
	var err error
	switch {
	case r.Body == nil || r.ContentLength > max:
	case r.ContentLength > 0: // one allocation of the announced size (net/http holds the body to it)
		body = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, body)
	default:
		body, err = io.ReadAll(io.LimitReader(r.Body, max+1))
	}
	switch {
	case r.ContentLength > max || int64(len(body)) > max:
		return fault.New(fault.TooLarge, "payload is larger than the limit of %d bytes", max)
	case err != nil:
		return fault.New(fault.Invalid, "reading the body: %v", err)
	case len(body) == 0:
		return fmt.Errorf("%w: the body is empty", ErrNotJSON)
	}
	return parseInto(p, parts, body)
}

// refuse answers a request refused before its handler ran, and logs why.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, route string, status int, reason error, msg string) {
	s.log.Warn("webhook refused", "route", route, "status", status, "reason", reason.Error(), "remote", r.RemoteAddr)
	writeError(w, status, msg)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeField(w, status, field{"error", msg})
}

// answerBuffers hold the receiver's own answers while they are written: the writer copies them (into
// net/http's buffered writer, or a gateway's response), so one buffer serves delivery after delivery.
var answerBuffers = sync.Pool{New: func() any { return new([]byte) }}

// writeField writes the answer {"name": text}.
func writeField(w http.ResponseWriter, status int, f field) {
	bp := answerBuffers.Get().(*[]byte)
	*bp = f.appendJSON((*bp)[:0])
	writeRaw(w, status, *bp)
	if cap(*bp) <= 4<<10 { // a buffer that held a long error is let go
		answerBuffers.Put(bp)
	}
}

// field is an answer of one text member, {"message": text} or {"error": text}: the receiver's own
// answers, written with json/v2's quoting rather than encoding/json's reflection over a map
// (about 1 µs and 5 allocations less per delivery of the log route).
type field struct{ name, text string }

// appendJSON appends the field as a JSON object and a newline. Invalid UTF-8 in text becomes
// U+FFFD, as encoding/json writes it.
func (f field) appendJSON(buf []byte) []byte {
	buf = append(append(append(buf, `{"`...), f.name...), `":`...)
	buf, _ = jsontext.AppendQuote(buf, f.text)
	return append(buf, "}\n"...)
}

// writeRaw writes a JSON body; it ends it with a newline unless it has one. net/http sets the
// Content-Length of a body the handler wrote whole (and Lambda's and Cloud Functions' gateways do
// theirs), so it is not formatted here for every delivery.
func writeRaw(w http.ResponseWriter, status int, buf []byte) {
	if len(buf) == 0 || buf[len(buf)-1] != '\n' {
		buf = append(buf, '\n')
	}
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	_, _ = w.Write(buf)
}

var jsonContentType = []string{"application/json"}
