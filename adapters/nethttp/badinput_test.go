package nethttp

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/testkit/syncbuf"

	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/testkit/badinput"
	"github.com/robothub/robothub/internal/testkit/receivertest"
)

// badInputCase is one hostile request to the receiver and the status the README documents for it.
type badInputCase struct {
	input  string
	req    badinput.Request
	status int
}

// receiverBadInput lists what the receiver is tried with. secretOK is the header of a right secret.
func receiverBadInput() []badInputCase {
	secretOK := [2]string{webhook.SecretHeader, receivertest.Secret}
	jsonType := [2]string{"Content-Type", "application/json"}
	post := func(target string, body string, header ...[2]string) badinput.Request {
		return badinput.Request{Method: "POST", Target: target, Header: append([][2]string{secretOK, jsonType}, header...), Body: []byte(body)}
	}
	payload := string(receivertest.Payload)
	withRepoName := func(name string) string {
		return `{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"model","name":` + name + `}}`
	}
	overCap := strings.Repeat("x", webhook.DefaultMaxBodyBytes+1)
	cases := []badInputCase{
		// Malformed and wrongly typed JSON.
		{"truncated JSON", post("/webhooks/hello", `{"event":`), 400},
		{"a JSON array, not an object", post("/webhooks/hello", `[1,2]`), 400},
		{"data after the JSON object", post("/webhooks/hello", payload+`{}`), 400},
		{"JSON nested 100,000 levels deep", post("/webhooks/hello", `{"a":`+string(badinput.Nested(100000))+`}`), 400},
		{"invalid UTF-8 in a string", post("/webhooks/hello", withRepoName("\"a\xff\xfeb\"")), 400},
		{"an unpaired UTF-16 surrogate escape", post("/webhooks/hello", withRepoName(`"a\ud800b"`)), 400},
		{"event.action is a number", post("/webhooks/hello", `{"event":{"action":1,"scope":"repo"},"repo":{"type":"model","name":"a/b"}}`), 422},
		{"repo is a string", post("/webhooks/hello", `{"event":{"action":"update","scope":"repo"},"repo":"model:a/b"}`), 422},
		{"updatedRefs is an object", post("/webhooks/hello", `{"event":{"action":"update","scope":"repo"},"repo":{"type":"model","name":"a/b"},"updatedRefs":{}}`), 422},
		{"a number too large for any type", post("/webhooks/hello", `{"event":{"action":"update","scope":"repo"},"repo":{"type":"model","name":"a/b","private":1e999}}`), 422},
		{"text/plain content type, valid payload", badinput.Request{Method: "POST", Target: "/webhooks/hello", Header: [][2]string{secretOK, {"Content-Type", "text/plain"}}, Body: []byte(payload)}, 200},

		// Oversized bodies and headers, and a body that lies about its length.
		{"body of 1 MiB + 1 byte", post("/webhooks/hello", `{"pad":"`+overCap+`"}`), 413},
		{"body over 1 MiB, chunked (no length)", badinput.Request{Method: "POST", Target: "/webhooks/hello",
			Header: [][2]string{secretOK, {"Transfer-Encoding", "chunked"}}, Body: badinput.Chunked([]byte(`{"pad":"` + overCap + `"}`))}, 413},
		{"Content-Length of 5 GB", post("/webhooks/hello", payload, [2]string{"Content-Length", "5000000000"}), 413},
		{"body shorter than its Content-Length", func() badinput.Request {
			r := post("/webhooks/hello", payload)
			r.ShortBody = 10
			return r
		}(), 400},
		{"negative Content-Length", post("/webhooks/hello", payload, [2]string{"Content-Length", "-1"}), 400},
		{"a 1.5 MiB header", post("/webhooks/hello", payload, badinput.Padding(3*badinput.MiB/2)), 431},
		{"a 1.5 MiB secret header", badinput.Request{Method: "POST", Target: "/webhooks/hello",
			Header: [][2]string{{webhook.SecretHeader, strings.Repeat("s", 3*badinput.MiB/2)}}, Body: []byte(payload)}, 431},
		{"20,000 header lines", post("/webhooks/hello", payload, badinput.ManyHeaders(20000)...), 431},
		{"a 100 KiB query string", post("/webhooks/hello?q="+strings.Repeat("q", 100<<10), payload), 431},

		// Secrets that are wrong in odd ways.
		{"secret with a NUL byte (escaped in the query)", badinput.Request{Method: "POST", Target: "/webhooks/hello?secret=" + receivertest.Secret + "%00", Body: []byte(payload)}, 403},
		{"secret with a trailing space", badinput.Request{Method: "POST", Target: "/webhooks/hello", Header: [][2]string{{webhook.SecretHeader, receivertest.Secret + "x"}}, Body: []byte(payload)}, 403},
		{"the secret twice, first one wrong", badinput.Request{Method: "POST", Target: "/webhooks/hello",
			Header: [][2]string{{webhook.SecretHeader, "guess"}, secretOK}, Body: []byte(payload)}, 403},
		{"a raw NUL byte in a header value", post("/webhooks/hello", payload, [2]string{"X-Note", "a\x00b"}), 400},

		// Methods.
		{"DELETE on a route", badinput.Request{Method: "DELETE", Target: "/webhooks/hello", Header: [][2]string{secretOK}}, 405},
		{"an unknown method", badinput.Request{Method: "BREW", Target: "/webhooks/hello", Header: [][2]string{secretOK}}, 405},

		// Path traversal, shell metacharacters and unicode in the route.
		{"path traversal back into the routes", post("/webhooks/../webhooks/hello", payload), 404},
		{"escaped path traversal", post("/webhooks/%2e%2e/webhooks/hello", payload), 404},
		{"escaped slash and dots", post("/webhooks/hello%2f..%2f..%2fetc", payload), 404},
		{"escaped NUL byte in the route", post("/webhooks/hello%00", payload), 404},
		{"raw NUL byte in the request line", post("/webhooks/hello\x00", payload), 400},
		{"no leading slash in the request line", post("webhooks/hello", payload), 400},
		{"absolute-form target on another host", post("http://evil.example/webhooks/hello", payload), 200},
		{"escaped newline and a forged header", post("/webhooks/hello%0d%0aX-Webhook-Secret:%20x", payload), 404},
		{"unicode lookalike route (Cyrillic е)", post("/webhooks/h%D0%B5llo", payload), 404},
		{"zero-width space in the route", post("/webhooks/hel%E2%80%8Blo", payload), 404},
		{"right-to-left override in the route", post("/webhooks/hello%E2%80%AE", payload), 404},
		{"escaped trailing slash (same route)", post("/webhooks/hello%2f", payload), 200},
		{"very long route name (100 KiB)", post("/webhooks/"+strings.Repeat("a", 100<<10), payload), 431},
		{"route name of 60 KiB", post("/webhooks/"+strings.Repeat("a", 60<<10), payload), 404},

		// Hostile values inside a valid payload: data, never interpreted.
		{"repo name with path traversal", post("/webhooks/hello", withRepoName(`"../../etc/passwd"`)), 200},
		{"repo name with shell metacharacters", post("/webhooks/hello", withRepoName(`"a;touch /tmp/robothub-pwned $(id) `+"`id`"+`"`)), 200},
		{"repo name with a NUL and a right-to-left override", post("/webhooks/hello", withRepoName(`"a\u0000b\u202ec"`)), 200},
		{"a 900 KiB repo name (under the cap)", post("/webhooks/hello", withRepoName(`"`+strings.Repeat("n", 900<<10)+`"`)), 200},
	}
	for _, s := range append(append(append([]string{}, badinput.Traversal...), badinput.Shell...), badinput.Unicode...) {
		escaped := (&strings.Builder{})
		for _, b := range []byte(s) {
			if b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("-_.~/%", b) >= 0 {
				escaped.WriteByte(b)
			} else {
				escaped.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[b>>4])+string("0123456789abcdef"[b&15])))
			}
		}
		cases = append(cases, badInputCase{"hostile route name " + s, post("/webhooks/"+escaped.String(), payload), 404})
	}
	return cases
}

// TestBadInputReceiver sends the receiver (the table receiver of internal/testkit/receivertest, served as
// robothub serve serves it) malformed, oversized, wrongly typed and hostile requests: each gets the
// status the README documents (or net/http's own 400 or 431 for a request that is not HTTP), and
// the receiver still serves afterwards. The rows go into docs/RELIABILITY.md.
func TestBadInputReceiver(t *testing.T) {
	srv := receivertest.NewReceiver(t, true, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, srv, Options{Getenv: noenv, Logger: quiet, Out: &syncbuf.Buffer{}}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	table := badinput.NewTable("receiver", "go test -run TestBadInputReceiver ./adapters/nethttp")
	table.Scrub(addr, "127.0.0.1:PORT")
	_ = os.Remove(badinput.PwnedFile)
	cases := receiverBadInput()
	ran := 0
	for _, c := range cases {
		t.Run(c.input, func(t *testing.T) {
			ran++
			a, err := badinput.Send(addr, c.req)
			if err != nil {
				t.Fatal(err)
			}
			table.Add(badinput.Row{Input: c.input, Request: c.req.Method + " " + c.req.Target, Expected: c.status, Observed: a.Status, Answer: a.Message()})
			if a.Status != c.status {
				t.Errorf("%s %.100q: %d %.300s, want %d", c.req.Method, c.req.Target, a.Status, a.Body, c.status)
			}
			if err := badinput.Serves(addr, "/healthz"); err != nil {
				t.Fatalf("the receiver no longer serves: %v", err)
			}
		})
	}
	if _, err := os.Stat(badinput.PwnedFile); err == nil {
		t.Errorf("%s exists: something ran a shell on a hostile input", badinput.PwnedFile)
	}
	table.Finish(t, ran == len(cases))
}
