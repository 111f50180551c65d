// Package receivertest is the one table of requests that every transport of the webhook receiver
// (net/http, each Lambda event shape, Cloud Functions) must answer exactly as the net/http server
// answers them, with the receiver the table runs against and the helpers to compare results. It
// is imported by tests only.
package receivertest

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/webhook"
)

// Secret is the receiver's secret in every table run.
const Secret = "table-secret-7f3a9c"

// Routes is the ROBOTHUB_ROUTES of the table's receiver: what a user deploys without writing Go.
const Routes = "hello=log; team/retrain=log; fails=exec:false"

// HandlerTimeout is the table receiver's handler timeout: short, so that the "slow" case is quick,
// yet long enough for the log route to write a 900 KiB payload under -race on a loaded 2-core
// machine (300 ms was not: TestBadInputReceiver timed out there once).
const HandlerTimeout = time.Second

// Env is the environment of the table's receiver, for transports started as a process.
func Env() map[string]string {
	return map[string]string{"ROBOTHUB_ROUTES": Routes, webhook.SecretEnv: Secret}
}

// Case is one request and what the client must see.
type Case struct {
	Name   string
	Method string
	Path   string            // path and query as the client sent them: /webhooks/hello?secret=...
	Header map[string]string // header names spelled as the client sent them
	Body   []byte

	// GoRoute: the route is registered by Go code (AddGoRoutes), so transports that run the
	// env-configured receiver as a separate process (the bootstrap binary) skip the case.
	GoRoute bool

	Status int            // the status code, pinned here and required to equal net/http's
	Want   map[string]any // fields of the JSON body
	HTML   string         // for the landing page: text the HTML must contain
}

// Payload is a real hub delivery, the body of the cases that succeed.
var Payload = mustRead("core/webhook/testdata/payloads/repo-content-push.json")

const minimal = `{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"model","name":"alice/bert"}}`

// Cases returns the table. Bodies are fresh copies: a transport may keep them.
func Cases() []Case {
	good := map[string]string{webhook.SecretHeader: Secret, "Content-Type": "application/json"}
	lower := map[string]string{"x-webhook-secret": Secret, "content-type": "application/json"}
	jsonOnly := map[string]string{"Content-Type": "application/json"}
	tooBig := `{"pad":"` + strings.Repeat("x", webhook.DefaultMaxBodyBytes) + `"}`
	logged := map[string]any{"message": "logged repo.content update on alice/dance-app"}
	missing := map[string]any{"error": "x-webhook-secret header not set."}
	invalid := map[string]any{"error": "Invalid webhook secret."}
	return append([]Case{
		{Name: "log route", Method: "POST", Path: "/webhooks/hello", Header: good, Body: Payload, Status: 200, Want: logged},
		{Name: "trailing slash", Method: "POST", Path: "/webhooks/hello/", Header: good, Body: Payload, Status: 200, Want: logged},
		{Name: "nested route", Method: "POST", Path: "/webhooks/team/retrain", Header: good, Body: []byte(minimal), Status: 200,
			Want: map[string]any{"message": "logged repo.content update on alice/bert"}},
		{Name: "lower-case secret header", Method: "POST", Path: "/webhooks/hello", Header: lower, Body: Payload, Status: 200, Want: logged},
		{Name: "secret in query", Method: "POST", Path: "/webhooks/hello?secret=" + Secret, Header: jsonOnly, Body: Payload, Status: 200, Want: logged},
		{Name: "no secret", Method: "POST", Path: "/webhooks/hello", Header: jsonOnly, Body: Payload, Status: 401, Want: missing},
		{Name: "query without secret", Method: "POST", Path: "/webhooks/hello?other=1", Header: jsonOnly, Body: Payload, Status: 401, Want: missing},
		{Name: "wrong secret", Method: "POST", Path: "/webhooks/hello", Header: map[string]string{webhook.SecretHeader: "guess"}, Body: Payload, Status: 403, Want: invalid},
		{Name: "wrong lower-case secret", Method: "POST", Path: "/webhooks/hello", Header: map[string]string{"x-webhook-secret": "guess"}, Body: Payload, Status: 403, Want: invalid},
		{Name: "empty secret", Method: "POST", Path: "/webhooks/hello", Header: map[string]string{webhook.SecretHeader: ""}, Body: Payload, Status: 403, Want: invalid},
		{Name: "wrong secret in query", Method: "POST", Path: "/webhooks/hello?secret=guess", Body: Payload, Status: 403, Want: invalid},
		{Name: "unknown route", Method: "POST", Path: "/webhooks/nope", Header: good, Body: Payload, Status: 404,
			Want: map[string]any{"error": "no webhook handler at /webhooks/nope"}},
		{Name: "unknown page", Method: "GET", Path: "/favicon.ico", Status: 404, Want: map[string]any{"error": "not found: /favicon.ico"}},
		{Name: "GET on a route", Method: "GET", Path: "/webhooks/hello", Header: good, Status: 405},
		{Name: "PUT on a route", Method: "PUT", Path: "/webhooks/hello", Header: good, Body: Payload, Status: 405},
		{Name: "too big", Method: "POST", Path: "/webhooks/hello", Header: good, Body: []byte(tooBig), Status: 413,
			Want: map[string]any{"error": "payload is larger than the limit of 1048576 bytes"}},
		{Name: "not JSON", Method: "POST", Path: "/webhooks/hello", Header: good, Body: []byte("event=update"), Status: 400},
		{Name: "empty body", Method: "POST", Path: "/webhooks/hello", Header: good, Status: 400},
		{Name: "JSON but not a payload", Method: "POST", Path: "/webhooks/hello", Header: good,
			Body: []byte(`{"event":{"scope":"repo"},"repo":{"type":"model","name":"a/b"}}`), Status: 422,
			Want: map[string]any{"error": "payload field event.action is missing"}},
		{Name: "no repo", Method: "POST", Path: "/webhooks/hello", Header: good, Body: []byte(`{"event":{"action":"update","scope":"repo"}}`), Status: 422,
			Want: map[string]any{"error": "payload field repo is missing"}},
		{Name: "command fails", Method: "POST", Path: "/webhooks/fails", Header: good, Body: Payload, Status: 500,
			Want: map[string]any{"error": "command false exited with status 1"}},
		{Name: "health", Method: "GET", Path: "/healthz", Status: 200, Want: map[string]any{"status": "ok"}},
		{Name: "landing page", Method: "GET", Path: "/", Status: 200, HTML: "/webhooks/team/retrain"},

		{Name: "handler returns a string", GoRoute: true, Method: "POST", Path: "/webhooks/text", Header: good, Body: Payload, Status: 200,
			Want: map[string]any{"message": "hello"}},
		{Name: "handler chooses status", GoRoute: true, Method: "POST", Path: "/webhooks/accepted", Header: good, Body: Payload, Status: 202,
			Want: map[string]any{"queued": 1.0}},
		{Name: "handler status error", GoRoute: true, Method: "POST", Path: "/webhooks/refuses", Header: good, Body: Payload, Status: 409,
			Want: map[string]any{"error": "already processed"}},
		{Name: "handler panic", GoRoute: true, Method: "POST", Path: "/webhooks/panics", Header: good, Body: Payload, Status: 500,
			Want: map[string]any{"error": "handler panics panicked"}},
		{Name: "handler timeout", GoRoute: true, Method: "POST", Path: "/webhooks/slow", Header: good, Body: Payload, Status: 503,
			Want: map[string]any{"error": "handler slow did not finish within 1s"}},
	}, BrowserCases()...)
}

// AddGoRoutes registers the routes of the GoRoute cases on srv.
func AddGoRoutes(srv *webhook.Server) error {
	return errors.Join(
		srv.Add("text", func(context.Context, *webhook.Payload, http.Header) (any, error) { return "hello", nil }),
		srv.Add("accepted", func(context.Context, *webhook.Payload, http.Header) (any, error) {
			return webhook.Response{Status: http.StatusAccepted, Body: map[string]int{"queued": 1}}, nil
		}),
		srv.Add("refuses", func(context.Context, *webhook.Payload, http.Header) (any, error) {
			return nil, fault.Refusedf("already processed")
		}),
		srv.Add("panics", func(context.Context, *webhook.Payload, http.Header) (any, error) { panic("boom") }),
		srv.Add("slow", func(ctx context.Context, _ *webhook.Payload, _ http.Header) (any, error) {
			<-ctx.Done()
			return "too late", nil
		}),
	)
}

// mustRead reads a file of the repository by its path from the module root, which it finds by
// walking up from the test's working directory (the package directory) to go.mod.
func mustRead(rel string) []byte {
	dir, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
			if err != nil {
				panic("receivertest: " + err.Error())
			}
			return b
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("receivertest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// chromium is the headers headless Chromium sends with a no-cors fetch POST from a page at origin.
func chromium(site, origin string) map[string]string {
	return map[string]string{
		"User-Agent":     "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36",
		"Content-Type":   "text/plain;charset=UTF-8",
		"Accept":         "*/*",
		"Origin":         origin,
		"Referer":        origin + "/",
		"Sec-Fetch-Site": site,
		"Sec-Fetch-Mode": "no-cors",
		"Sec-Fetch-Dest": "empty",
	}
}

// BrowserCases are requests a browser sends on behalf of a page of another site: every transport
// refuses them with 403. The first two carry exactly what headless Chromium 156 sent for
// fetch(url, {method: "POST", mode: "no-cors", body}) from a page on http://localhost:18765
// (captured by a logging server); the right secret in the URL does not get them through.
func BrowserCases() []Case {
	browser := map[string]any{"error": "cross-origin browser requests are refused: webhooks are delivered by the hub's servers, not by a browser"}
	return []Case{
		{Name: "browser POST from another site", Method: "POST", Path: "/webhooks/hello?secret=" + Secret, Header: chromium("cross-site", "http://localhost:18765"),
			Body: Payload, Status: 403, Want: browser},
		{Name: "browser POST from the same site", Method: "POST", Path: "/webhooks/hello?secret=" + Secret, Header: chromium("same-site", "http://127.0.0.1:1"),
			Body: Payload, Status: 403, Want: browser},
		{Name: "foreign Origin without Sec-Fetch-Site", Method: "POST", Path: "/webhooks/hello", Header: map[string]string{webhook.SecretHeader: Secret, "Origin": "https://attacker.example"},
			Body: Payload, Status: 403, Want: browser},
	}
}
