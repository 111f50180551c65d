package receivertest

import (
	"net/url"
	"strings"

	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/testkit/badinput"
)

// HostileCases returns malformed, oversized, wrongly typed and hostile requests that every
// transport must answer as the net/http server does. Unlike Cases, they are requests a transport
// can carry at all: an event of a cloud function holds a whole request, so headers over the
// platform's limits, lying lengths and bytes that are not HTTP never reach the adapter (the net/http
// server's answers to those are in adapters/nethttp's TestBadInputReceiver).
func HostileCases() []Case {
	good := map[string]string{webhook.SecretHeader: Secret, "Content-Type": "application/json"}
	withRepoName := func(name string) []byte {
		return []byte(`{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"model","name":` + name + `}}`)
	}
	post := func(name, path string, body []byte, status int) Case {
		return Case{Name: name, Method: "POST", Path: path, Header: good, Body: body, Status: status}
	}
	cases := []Case{
		post("truncated JSON", "/webhooks/hello", []byte(`{"event":`), 400),
		post("data after the JSON object", "/webhooks/hello", append(append([]byte{}, Payload...), "{}"...), 400),
		post("JSON nested 100,000 levels deep", "/webhooks/hello", []byte(`{"a":`+string(badinput.Nested(100000))+`}`), 400),
		post("invalid UTF-8 in a string", "/webhooks/hello", withRepoName("\"a\xff\xfeb\""), 400),
		post("an unpaired UTF-16 surrogate escape", "/webhooks/hello", withRepoName(`"a\ud800b"`), 400),
		post("event.action is a number", "/webhooks/hello", []byte(`{"event":{"action":1,"scope":"repo"},"repo":{"type":"model","name":"a/b"}}`), 422),
		post("a number too large for any type", "/webhooks/hello", []byte(`{"event":{"action":"update","scope":"repo"},"repo":{"type":"model","name":"a/b","private":1e999}}`), 422),
		post("a body of 1 MiB + 11 bytes", "/webhooks/hello", []byte(`{"pad":"`+strings.Repeat("x", webhook.DefaultMaxBodyBytes+1)+`"}`), 413),
		post("repo name with shell metacharacters", "/webhooks/hello", withRepoName(`"a;touch /tmp/robothub-pwned $(id) `+"`id`"+`"`), 200),
		post("repo name with a NUL and a right-to-left override", "/webhooks/hello", withRepoName(`"a\u0000b\u202ec"`), 200),
		{Name: "secret with an escaped NUL in the query", Method: "POST", Path: "/webhooks/hello?secret=" + Secret + "%00", Body: Payload, Status: 403},
		{Name: "secret with one more character", Method: "POST", Path: "/webhooks/hello", Header: map[string]string{webhook.SecretHeader: Secret + "x"}, Body: Payload, Status: 403},
		{Name: "a 100 KiB secret", Method: "POST", Path: "/webhooks/hello", Header: map[string]string{webhook.SecretHeader: strings.Repeat("s", 100<<10)}, Body: Payload, Status: 403},
		{Name: "an unknown method", Method: "BREW", Path: "/webhooks/hello", Header: good, Status: 405},
		post("path traversal back into the routes", "/webhooks/../webhooks/hello", Payload, 404),
		post("escaped path traversal", "/webhooks/%2e%2e/webhooks/hello", Payload, 404),
		post("escaped NUL byte in the route", "/webhooks/hello%00", Payload, 404),
		post("unicode lookalike route (Cyrillic е)", "/webhooks/h%D0%B5llo", Payload, 404),
		post("route name of 60 KiB", "/webhooks/"+strings.Repeat("a", 60<<10), Payload, 404),
	}
	cases = append(cases, BrowserCases()...)
	for _, s := range append(append(append([]string{}, badinput.Traversal...), badinput.Shell...), badinput.Unicode...) {
		cases = append(cases, post("hostile route name "+s, "/webhooks/"+strings.ReplaceAll(url.PathEscape(s), "%25", "%"), Payload, 404))
	}
	return cases
}
