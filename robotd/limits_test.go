package robotd_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawRequest writes head (and the start of a body) on a new connection and returns the answer;
// the connection is returned to read on. waitLimit only keeps a broken daemon from hanging the
// test: the daemon must answer long before it.
func rawRequest(t *testing.T, d *daemon, head string) (*http.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(d.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	const waitLimit = 60 * time.Second
	_ = conn.SetDeadline(time.Now().Add(waitLimit))
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a request whose body never came: %v", err)
	}
	return resp, conn, br
}

// expectClosed reads the connection until the daemon closes it.
func expectClosed(t *testing.T, br *bufio.Reader) {
	t.Helper()
	_, err := io.Copy(io.Discard, br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the daemon kept the connection open, waiting for the rest of the body")
	}
}

func TestStalledBodyIsDropped(t *testing.T) {
	d := startServer(t, serverOptions{bodyTimeout: time.Second})
	// Headers, then a body that stops after 11 of its 100 bytes.
	resp, _, br := rawRequest(t, d, "POST /api/move/goto HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
		"Authorization: Bearer "+d.token+"\r\nContent-Length: 100\r\n\r\n{\"duration\"")
	var got detail
	data, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(data, &got)
	if resp.StatusCode != 408 || got.Detail != "body: not received within 1s; send the whole body at once" {
		t.Fatalf("stalled body: %d %s", resp.StatusCode, data)
	}
	expectClosed(t, br)
	// The daemon serves on.
	if code := d.call("POST", "/api/move/goto", map[string]any{"duration": 0.2, "antennas": []float64{0.1, 0.1}}, nil); code != 200 {
		t.Fatalf("goto after a stalled client: %d", code)
	}
}

func TestRefusedRequestIsAnsweredBeforeItsBody(t *testing.T) {
	d := startServer(t, serverOptions{token: "body-token-0123456789abcdef"})
	for _, length := range []int{100, 50 << 20} {
		resp, _, br := rawRequest(t, d, fmt.Sprintf("POST /api/apps/install HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wrong\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", length))
		resp.Body.Close()
		if resp.StatusCode != 401 || !resp.Close {
			t.Fatalf("Content-Length %d, no body sent, wrong token: %d, close %v; want 401 and the connection closed", length, resp.StatusCode, resp.Close)
		}
		expectClosed(t, br)
	}
}

func TestStreamsArePerClientCapped(t *testing.T) {
	d := startServer(t, serverOptions{})
	var open []*http.Response
	defer func() {
		for _, r := range open {
			r.Body.Close()
		}
	}()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for i := 0; ; i++ {
		resp, err := client.Get(d.url + "/api/state/stream?frequency=1&token=" + d.token)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == 200 {
			open = append(open, resp)
			if i > 100 {
				t.Fatal("more than 100 state streams open from one client")
			}
			continue
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 429 || !strings.Contains(string(data), "Too many open streams: this client (owner from 127.0.0.1) has 16") {
			t.Fatalf("stream %d: %d %s, want 429", i+1, resp.StatusCode, data)
		}
		break
	}
	if len(open) != 16 {
		t.Fatalf("%d streams open before the refusal, want 16", len(open))
	}
	// A job-log stream counts too; closing one frees a slot.
	d.expectError("GET", "/api/apps/job-log/nope", nil, 404, "Job nope not found") // checked before the cap
	open[0].Body.Close()
	open = open[1:]
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := client.Get(d.url + "/api/state/stream?frequency=1&token=" + d.token)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == 200 {
			open = append(open, resp)
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatalf("a closed stream did not free its slot: %d", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSDKSessionsArePerClientCapped(t *testing.T) {
	parallel(t)
	d := startDaemon(t, daemonOptions{})
	d.install("coop_app")
	// Sessions of the running app's process group are not limited by the slot: the cap is what
	// holds an app that opens them in a loop. The test opens them as the app's SDK would, with its PID.
	code := d.call("POST", "/api/apps/start-app/coop_app", nil, nil)
	if code != 200 {
		t.Fatalf("start: %d", code)
	}
	d.waitState(20*time.Second, "running")
	// The app's own SDK session is its client's (its token: "app coop_app from 127.0.0.1"); these
	// are the owner's, who may hold 8.
	pid := d.runningPID()
	for i := 0; i < 8; i++ {
		var s struct{ Kind string }
		if code := d.call("POST", "/api/sessions", map[string]any{"pid": pid, "client": "loop"}, &s); code != 200 || s.Kind != "app" {
			t.Fatalf("session %d: %d %+v", i+1, code, s)
		}
	}
	d.expectError("POST", "/api/sessions", map[string]any{"pid": pid, "client": "loop"}, 429, "too many SDK sessions: this client (owner from 127.0.0.1) has 8 open")
}
