package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawRequest opens a TCP connection to addr and writes head (a request's headers, without its body,
// or with part of it); the caller then waits for what the server does.
func rawRequest(t *testing.T, addr, head string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	// A bound for the test itself, far beyond the hub's: the test fails rather than hangs.
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	return conn
}

// TestHubDropsAClientThatNeverFinishesItsBody: a raw TCP client sends a request's headers and part
// of its body, then nothing. The hub (serve --read-timeout 1s) closes the connection: the client
// reads EOF (or a reset), not its own 30 s deadline.
func TestHubDropsAClientThatNeverFinishesItsBody(t *testing.T) {
	p := start(t, nil, "hub", "serve", "--addr", "127.0.0.1:0", "--db", ":memory:", "--read-timeout", "1s")
	endpoint := p.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)
	token := p.waitFor(t, `(?m)^export HF_TOKEN=(hf_[A-Za-z]{34})$`)
	addr := strings.TrimPrefix(endpoint, "http://")

	conn := rawRequest(t, addr, "POST /api/settings/webhooks HTTP/1.1\r\nHost: "+addr+"\r\nAuthorization: Bearer "+token+
		"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"url\":")
	start := time.Now()
	_, err := io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the hub kept the connection of a stalled body open for %s", time.Since(start).Round(time.Second))
	}
	// And it still serves.
	if status, body := hubAPI(t, endpoint, token, "GET", "/api/whoami-v2", ""); status != 200 {
		t.Fatalf("after: %d %s", status, body)
	}
}

// TestHubRefusesWithoutReadingTheBody: a request without a token (or with a bad one) that announces
// a body and never sends it gets its 401 at once, with the default read timeout of 2 minutes.
func TestHubRefusesWithoutReadingTheBody(t *testing.T) {
	p := start(t, nil, "hub", "serve", "--addr", "127.0.0.1:0", "--db", ":memory:")
	endpoint := p.waitFor(t, `(?m)^export HF_ENDPOINT=(http://127\.0\.0\.1:\d+)$`)
	addr := strings.TrimPrefix(endpoint, "http://")
	for _, c := range []struct{ name, auth string }{
		{"no token", ""},
		{"an unknown token", "Authorization: Bearer hf_" + strings.Repeat("x", 34) + "\r\n"},
	} {
		for _, path := range []string{"/api/settings/webhooks", "/spaces/local/demo/git-receive-pack"} {
			conn := rawRequest(t, addr, "POST "+path+" HTTP/1.1\r\nHost: "+addr+"\r\n"+c.auth+"Content-Length: 1000\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("%s, %s: no answer before the body: %v", c.name, path, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s, %s: %d, want 401", c.name, path, resp.StatusCode)
			}
		}
	}
}
