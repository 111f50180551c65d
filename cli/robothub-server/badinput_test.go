package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/testkit/badinput"
)

// TestBadInputHubAPI sends the local hub (robothub hub serve, its real HTTP server) malformed,
// oversized, wrongly typed and hostile requests on every kind of route: each gets the status
// docs/hub-emulator.md documents (or net/http's own 400 or 431 for a request that is not HTTP),
// never a 500, and the hub still serves afterwards. The rows go into docs/RELIABILITY.md.
func TestBadInputHubAPI(t *testing.T) {
	p := start(t, nil, "hub", "serve", "--addr", "127.0.0.1:0", "--db", ":memory:", "--log-level", "error", "--allow-jobs")
	endpoint := p.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)
	token := p.waitFor(t, `(?m)^export HF_TOKEN=(hf_[A-Za-z]{34})$`)
	addr := strings.TrimPrefix(endpoint, "http://")
	auth := [2]string{"Authorization", "Bearer " + token}
	jsonType := [2]string{"Content-Type", "application/json"}
	req := func(method, target, body string, header ...[2]string) badinput.Request {
		return badinput.Request{Method: method, Target: target, Header: append([][2]string{auth, jsonType}, header...), Body: []byte(body)}
	}
	create := func(body string) badinput.Request { return req("POST", "/api/settings/webhooks", body) }
	webhookWith := func(field string) string {
		return `{"url":"https://example.com/hook","watched":[{"type":"user","name":"alice"}],` + field + `}`
	}
	emit := func(body string) badinput.Request { return req("POST", "/api/emulator/events", body) }
	// A webhook of the user, so that its routes get past the lookup.
	made, err := badinput.Send(addr, create(webhookWith(`"secret":"s"`)))
	if err != nil || made.Status != 200 {
		t.Fatalf("creating a webhook: %v %d %s", err, made.Status, made.Body)
	}
	var env struct{ Webhook struct{ ID string } }
	if err := json.Unmarshal(made.Body, &env); err != nil || env.Webhook.ID == "" {
		t.Fatalf("creating a webhook: %v %s", err, made.Body)
	}
	id := env.Webhook.ID
	// A space of the user, for the git routes.
	if made, err := badinput.Send(addr, req("POST", "/api/repos/create", `{"name":"demo","type":"space"}`)); err != nil || made.Status != 200 {
		t.Fatalf("creating a space: %v %d %s", err, made.Status, made.Body)
	}
	repo := func(body string) badinput.Request { return req("POST", "/api/repos/create", body) }
	git := func(target string) badinput.Request { return req("GET", target, "") }
	overCap := `{"url":"https://example.com/` + strings.Repeat("x", 1<<20) + `","watched":[{"type":"user","name":"alice"}]}`

	cases := []struct {
		input  string
		req    badinput.Request
		status int
	}{
		// Tokens.
		{"no token", badinput.Request{Method: "GET", Target: "/api/settings/webhooks"}, 401},
		{"a Basic authorization", badinput.Request{Method: "GET", Target: "/api/settings/webhooks", Header: [][2]string{{"Authorization", "Basic YWxpY2U6cHc="}}}, 401},
		{"an unknown token of the right shape", badinput.Request{Method: "GET", Target: "/api/settings/webhooks",
			Header: [][2]string{{"Authorization", "Bearer hf_" + strings.Repeat("A", 34)}}}, 401},
		{"a token with shell metacharacters", badinput.Request{Method: "GET", Target: "/api/settings/webhooks",
			Header: [][2]string{{"Authorization", "Bearer $(touch /tmp/robothub-pwned);`id`"}}}, 401},
		{"a 1.5 MiB token", badinput.Request{Method: "GET", Target: "/api/settings/webhooks",
			Header: [][2]string{{"Authorization", "Bearer " + strings.Repeat("t", 3*badinput.MiB/2)}}}, 431},
		{"a 1.5 MiB header beside a good token", req("GET", "/api/settings/webhooks", "", badinput.Padding(3*badinput.MiB/2)), 431},
		{"150,000 header lines", req("GET", "/api/settings/webhooks", "", badinput.ManyHeaders(150000)...), 431},

		// Create bodies: malformed, wrongly typed, oversized.
		{"empty body", create(""), 400},
		{"truncated JSON", create(`{"url":`), 400},
		{"a JSON array", create(`[1,2]`), 400},
		{"data after the object", create(webhookWith(`"domains":["repo"]`) + `{}`), 400},
		{"JSON nested 100,000 levels deep", create(`{"url":` + string(badinput.Nested(100000)) + `}`), 400},
		{"url is a number", create(`{"url":1,"watched":[{"type":"user","name":"alice"}]}`), 400},
		{"watched is an object", create(`{"url":"https://example.com/hook","watched":{"type":"user","name":"alice"}}`), 400},
		{"an unknown field", create(webhookWith(`"admin":true`)), 400},
		{"a body of 1 MiB + 80 bytes", create(overCap), 400},
		{"invalid UTF-8 in the secret", create(webhookWith("\"secret\":\"a\xffb\"")), 400},
		{"a secret with a newline", create(webhookWith(`"secret":"a\nX-Injected: 1"`)), 400},
		{"domains with a shell command", create(webhookWith(`"domains":["repo; touch /tmp/robothub-pwned"]`)), 400},

		// Hostile target URLs and watched names.
		{"a javascript: URL", create(`{"url":"javascript:alert(1)","watched":[{"type":"user","name":"alice"}]}`), 400},
		{"a file:// URL", create(`{"url":"file:///etc/passwd","watched":[{"type":"user","name":"alice"}]}`), 400},
		{"a URL with CR LF", create(`{"url":"https://example.com/\r\nX-Injected: 1","watched":[{"type":"user","name":"alice"}]}`), 400},
		{"a URL with shell metacharacters (stored, only ever POSTed to)", create(`{"url":"https://example.com/$(touch%20/tmp/robothub-pwned);id","watched":[{"type":"user","name":"alice"}]}`), 200},
		{"a watched repo name with path traversal", create(`{"url":"https://example.com/hook","watched":[{"type":"model","name":"../../etc/passwd"}]}`), 400},
		{"a watched user name with a slash", create(`{"url":"https://example.com/hook","watched":[{"type":"user","name":"../x"}]}`), 400},
		{"a watched type that does not exist", create(`{"url":"https://example.com/hook","watched":[{"type":"team;id","name":"x"}]}`), 400},
		{"job secrets with a bad name", create(`{"jobSourceId":"0123456789abcdef01234567","watched":[{"type":"user","name":"alice"}],"secrets":{"A=B":"x"}}`), 400},

		// IDs in paths.
		{"webhook ID with path traversal (escaped)", req("GET", "/api/settings/webhooks/..%2f..%2fetc%2fpasswd", ""), 404},
		{"webhook ID with an escaped NUL", req("GET", "/api/settings/webhooks/a%00b", ""), 404},
		{"webhook ID with shell metacharacters", req("DELETE", "/api/settings/webhooks/"+url.PathEscape("$(touch /tmp/robothub-pwned)"), ""), 404},
		{"webhook ID of 60 KiB", req("GET", "/api/settings/webhooks/"+strings.Repeat("a", 60<<10), ""), 404},
		{"webhook ID in unicode lookalikes", req("POST", "/api/settings/webhooks/"+url.PathEscape("６571a3f0c9d2e4b1a8f0def0")+"/enable", ""), 404},
		{"delivery ID with path traversal", req("POST", "/api/emulator/webhooks/x/deliveries/..%2f..%2fy/replay", ""), 404},
		{"run ID with a right-to-left override", req("GET", "/api/emulator/runs/"+url.PathEscape("run\u202e"), ""), 404},
		{"delivery ID with path traversal under a real webhook", req("GET", "/api/emulator/webhooks/"+id+"/deliveries/..%2f..%2f"+id, ""), 404},
		{"dot segments in the path", req("GET", "/api/settings/webhooks/../../healthz", ""), 404},
		{"limit that is not a number", req("GET", "/api/emulator/webhooks/"+id+"/activity?limit=ten", ""), 400},
		{"limit far too large", req("GET", "/api/emulator/webhooks/"+id+"/activity?limit=99999999999999999999", ""), 400},
		{"limit with a semicolon (the query is dropped)", req("GET", "/api/emulator/webhooks/"+id+"/activity?limit=1;id", ""), 200},
		{"update: watched emptied (kept: the public client sends it)", req("POST", "/api/settings/webhooks/"+id, `{"watched":[]}`), 200},
		{"update: url of the wrong type", req("POST", "/api/settings/webhooks/"+id, `{"url":["https://example.com"]}`), 400},
		{"update: a 1 MiB secret", req("POST", "/api/settings/webhooks/"+id, `{"secret":"`+strings.Repeat("s", 1<<20)+`"}`), 400},

		// Events.
		{"emit: repo with path traversal", emit(`{"repo":"model:../../etc/passwd","scope":"repo","action":"update"}`), 400},
		{"emit: repo type with a shell command", emit(`{"repo":"$(id):a/b","scope":"repo","action":"update"}`), 400},
		{"emit: scope with a semicolon", emit(`{"repo":"model:alice/bert","scope":"repo;rm","action":"update"}`), 400},
		{"emit: action that does not exist", emit(`{"repo":"model:alice/bert","scope":"repo","action":"explode"}`), 400},
		{"emit: headSha that is not hex (taken as given; never run)", emit(`{"repo":"model:local/bert","scope":"repo.content","action":"update","headSha":"$(id)"}`), 200},
		{"emit: a push to another user's repo", emit(`{"repo":"model:alice/bert","scope":"repo.content","action":"update"}`), 403},
		{"emit: another user's repo made private", emit(`{"repo":"model:alice/bert","scope":"repo.config","action":"update","private":true}`), 403},
		{"emit: visibility changed by a push event", emit(`{"repo":"model:local/bert","scope":"repo.content","action":"update","private":true}`), 400},
		{"emit: a move of one's repo into another user's namespace", emit(`{"repo":"model:local/bert","scope":"repo","action":"move","movedTo":"alice/bert"}`), 403},
		{"emit: discussion number as a string", emit(`{"repo":"model:alice/bert","scope":"discussion","action":"create","discussion":{"num":"1"}}`), 400},
		{"emit: updatedConfig that is not an object", emit(`{"repo":"model:alice/bert","scope":"repo.config","action":"update","updatedConfig":[1]}`), 400},

		// Jobs: a job's command is run on purpose, by a job webhook, never through a shell.
		{"job: command as a string", req("POST", "/api/emulator/jobs", `{"command":"sh -c 'touch /tmp/robothub-pwned'"}`), 400},
		{"job: empty command", req("POST", "/api/emulator/jobs", `{"command":[]}`), 400},
		{"job: environment name with '='", req("POST", "/api/emulator/jobs", `{"command":["true"],"environment":{"A=B":"x"}}`), 400},

		// Spaces: names become directories of git repositories.
		{"space name with path traversal", repo(`{"name":"../../etc","type":"space"}`), 400},
		{"space name with a slash (an organization)", repo(`{"name":"a/b","type":"space"}`), 403},
		{"space name with shell metacharacters", repo(`{"name":"$(touch /tmp/robothub-pwned)","type":"space"}`), 400},
		{"space name with a NUL", repo(`{"name":"a\u0000b","type":"space"}`), 400},
		{"space name ending in .git", repo(`{"name":"x.git","type":"space"}`), 400},
		{"space name starting with '-' (a git option)", repo(`{"name":"--upload-pack=x","type":"space"}`), 400},
		{"space name of 1,000 characters", repo(`{"name":"` + strings.Repeat("n", 1000) + `","type":"space"}`), 400},
		{"space name in unicode", repo(`{"name":"démo","type":"space"}`), 400},
		{"organization with path traversal", repo(`{"name":"x","organization":"../evil","type":"space"}`), 403},
		{"private as a string", repo(`{"name":"x","type":"space","private":"yes"}`), 400},
		{"a repo type other than space", repo(`{"name":"x","type":"model"}`), 400},
		{"delete: name with path traversal", req("DELETE", "/api/repos/delete", `{"name":"../../etc","type":"space"}`), 400},
		{"spaces: limit below 1", req("GET", "/api/spaces?limit=-1", ""), 400},
		{"spaces: author with path traversal", req("GET", "/api/spaces?author=../../etc", ""), 200},
		{"space info with escaped path traversal", req("GET", "/api/spaces/local/..%2f..%2fetc", ""), 404},
		{"git: info/refs of a space (the normal case)", git("/spaces/local/demo/info/refs?service=git-upload-pack"), 200},
		{"git: a service that does not exist", git("/spaces/local/demo/info/refs?service=$(touch%20/tmp/robothub-pwned)"), 403},
		{"git: escaped path traversal in the space name", git("/spaces/local/..%2f..%2fetc/info/refs"), 404},
		{"git: escaped path traversal inside the repository", git("/spaces/local/demo/objects/..%2f..%2f..%2f..%2f..%2fetc%2fpasswd"), 404},
		{"git: path traversal inside the repository", git("/spaces/local/demo/objects/../../../../../etc/passwd"), 404},
		{"git: an escaped NUL in the path", git("/spaces/local/demo/HEAD%00"), 404},
		{"git: no token, a space that does not exist", badinput.Request{Method: "GET", Target: "/spaces/local/nope/info/refs?service=git-upload-pack"}, 401},
		{"git: push without a token", badinput.Request{Method: "POST", Target: "/spaces/local/demo/git-receive-pack", Body: []byte("0000")}, 401},
		{"git: a repeated service parameter (checked as upload-pack, run as receive-pack)", git("/spaces/local/demo/info/refs?service=git-upload-pack&service=git-receive-pack"), 400},
		{"git: an empty path segment", git("/spaces/local/demo//info/refs?service=git-upload-pack"), 404},
		{"git: an empty owner segment", git("/spaces//local/demo/info/refs?service=git-upload-pack"), 404},
		{"git: an encoded slash joining two segments", git("/spaces/local/demo%2Finfo/refs?service=git-upload-pack"), 404},
		{"git: an upload-pack body declared over its 16 MiB cap", badinput.Request{Method: "POST", Target: "/spaces/local/demo/git-upload-pack",
			Header: [][2]string{{"Content-Type", "application/x-git-upload-pack-request"}, {"Content-Length", strconv.Itoa(16<<20 + 1)}}, Body: []byte("0000")}, 413},
		{"git: a chunked upload-pack body over its 16 MiB cap", badinput.Request{Method: "POST", Target: "/spaces/local/demo/git-upload-pack",
			Header: [][2]string{{"Content-Type", "application/x-git-upload-pack-request"}, {"Transfer-Encoding", "chunked"}}, Body: chunked(16<<20 + 1)}, 413},
		{"git: a push body declared over its 1 GiB cap", badinput.Request{Method: "POST", Target: "/spaces/local/demo/git-receive-pack",
			Header: [][2]string{auth, {"Content-Type", "application/x-git-receive-pack-request"}, {"Content-Length", strconv.Itoa(1<<30 + 1)}}, Body: []byte("0000")}, 413},
		{"git: a malformed upload-pack request", badinput.Request{Method: "POST", Target: "/spaces/local/demo/git-upload-pack",
			Header: [][2]string{auth, {"Content-Type", "application/x-git-upload-pack-request"}}, Body: []byte("garbage")}, 200},

		// Methods and routes.
		{"PUT on the webhook list", req("PUT", "/api/settings/webhooks", `{}`), 405},
		{"an unknown route", req("GET", "/api/settings/webhooks/x/y/z", ""), 404},
		{"a raw NUL in the request line", req("GET", "/api/settings/webhooks/a\x00b", ""), 400},
	}
	table := badinput.NewTable("hub-api", "go test -run TestBadInputHubAPI ./cli/robothub-server")
	table.Scrub(addr, "127.0.0.1:PORT")
	table.Scrub(id, "WEBHOOK_ID")
	table.ScrubPattern(`\b[0-9a-f]{24}\b`, "ID")
	_ = os.Remove(badinput.PwnedFile)
	ran := 0
	for _, c := range cases {
		t.Run(c.input, func(t *testing.T) {
			ran++
			a, err := badinput.Send(addr, c.req)
			if err != nil {
				t.Fatal(err)
			}
			table.Add(badinput.Row{Input: c.input, Request: c.req.Method + " " + c.req.Target + " " + string(c.req.Body), Expected: c.status, Observed: a.Status, Answer: a.Message()})
			if a.Status != c.status {
				t.Errorf("%s %.100q: %d %.300s, want %d", c.req.Method, c.req.Target, a.Status, a.Body, c.status)
			}
			if a.Status >= 400 && a.Status != 431 && strings.HasPrefix(c.req.Target, "/api/") && a.Message() == "" {
				t.Errorf("%d without an error message: %s", a.Status, a.Body)
			}
			if err := badinput.Serves(addr, "/api/whoami-v2", auth); err != nil {
				t.Fatalf("the hub no longer serves: %v", err)
			}
		})
	}
	if _, err := os.Stat(badinput.PwnedFile); err == nil {
		t.Errorf("%s exists: something ran a shell on a hostile input", badinput.PwnedFile)
	}
	if strings.Contains(p.stderr.String(), "request failed") {
		t.Errorf("the hub logged a failed request (a 500):\n%s", p.stderr)
	}
	table.Finish(t, ran == len(cases))
}

// chunked is a chunked request body of n zero bytes (in 1 MiB chunks), with its last chunk.
func chunked(n int) []byte {
	var b bytes.Buffer
	for n > 0 {
		size := min(n, 1<<20)
		fmt.Fprintf(&b, "%x\r\n", size)
		b.Write(make([]byte, size))
		b.WriteString("\r\n")
		n -= size
	}
	b.WriteString("0\r\n\r\n")
	return b.Bytes()
}
