// Package badinput is what the bad-input tests share: hostile strings (path traversal, shell
// metacharacters, unicode oddities), a raw HTTP client that sends requests no well-behaved client
// would (huge headers, NUL bytes, lying Content-Length), and the table of what each server answered,
// which the tests write into docs/RELIABILITY.md so that the document shows exactly what is tried.
// It is imported by tests only.
package badinput

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Hostile strings, for names, IDs, paths and URLs. Each is tried where a server takes a name.
var (
	// Traversal reaches outside a directory or a route: as is, URL-escaped, and with a NUL byte.
	Traversal = []string{"../../etc/passwd", "..", "%2e%2e%2f%2e%2e%2fetc", "a%00b"}
	// Shell holds shell metacharacters: harmless unless something runs a shell on them.
	Shell = []string{"a;touch /tmp/robothub-pwned", "$(touch /tmp/robothub-pwned)", "`touch /tmp/robothub-pwned`", "a|id", "a&&id"}
	// Unicode holds lookalikes and invisible or direction-changing characters.
	Unicode = []string{"соор_app", "app\u202etxt.exe", "\ufeffapp", "ap\u200bp"}
)

// PwnedFile is the file the Shell strings would create if a shell ever ran them.
const PwnedFile = "/tmp/robothub-pwned"

// MiB is a mebibyte: Go's servers refuse request headers over 1 MiB by default (431).
const MiB = 1 << 20

// Request is a request as it goes on the wire. Header lines are sent in order and unchecked;
// Host is added unless the header has it; Content-Length unless the header has it or
// Transfer-Encoding.
type Request struct {
	Method string
	Target string // the request target, as sent: /webhooks/hello?secret=x (not escaped for you)
	Header [][2]string
	Body   []byte
	// ShortBody: send only this many bytes of Body, then close the writing side, so that the
	// body is shorter than its Content-Length.
	ShortBody int
}

// Answer is what came back.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Message is the answer's error message: the "error" or "detail" field of a JSON body, or the first
// line of a text body.
func (a Answer) Message() string {
	var fields struct {
		Error  string `json:"error"`
		Detail string `json:"detail"`
	}
	if json.Unmarshal(a.Body, &fields) == nil {
		if fields.Error != "" {
			return fields.Error
		}
		if fields.Detail != "" {
			return fields.Detail
		}
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(a.Body)), "\n")
	return line
}

// Send sends r to the server at addr (host:port) over a new connection and reads the answer. It
// writes while it reads, so that a server that answers before reading everything (a 431 to a huge
// header, a 413 to a huge body) is heard.
func Send(addr string, r Request) (Answer, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return Answer{}, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))

	var head bytes.Buffer
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nConnection: close\r\n", r.Method, r.Target)
	hasLength, hasHost := false, false
	for _, h := range r.Header {
		k := strings.ToLower(h[0])
		hasLength = hasLength || k == "content-length" || k == "transfer-encoding"
		hasHost = hasHost || k == "host"
		head.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	if !hasHost {
		head.WriteString("Host: " + addr + "\r\n")
	}
	if !hasLength && (len(r.Body) > 0 || r.Method == "POST" || r.Method == "PUT") {
		head.WriteString("Content-Length: " + strconv.Itoa(len(r.Body)) + "\r\n")
	}
	head.WriteString("\r\n")
	body := r.Body
	if r.ShortBody > 0 && r.ShortBody < len(body) {
		body = body[:r.ShortBody]
	}

	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		// A server that has answered may close before everything is written: not an error here.
		if _, err := conn.Write(append(head.Bytes(), body...)); err == nil && r.ShortBody > 0 {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: r.Method})
	if err != nil {
		conn.Close()
		<-wrote
		return Answer{}, fmt.Errorf("reading the answer to %s %.80s: %w", r.Method, r.Target, err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	conn.Close()
	<-wrote
	return Answer{Status: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// Serves reports whether the server at addr still answers 200 on path (its health probe).
func Serves(addr, path string, header ...[2]string) error {
	a, err := Send(addr, Request{Method: "GET", Target: path, Header: header})
	if err != nil {
		return err
	}
	if a.Status != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, a.Status, a.Body)
	}
	return nil
}

// Nested returns a JSON document nested depth levels deep: [[[...]]].
func Nested(depth int) []byte {
	return []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
}

// Padding is a header line of n bytes of value.
func Padding(n int) [2]string { return [2]string{"X-Padding", strings.Repeat("p", n)} }

// ManyHeaders is n distinct small header lines.
func ManyHeaders(n int) [][2]string {
	out := make([][2]string, n)
	for i := range out {
		out[i] = [2]string{"X-H" + strconv.Itoa(i), "v"}
	}
	return out
}

// Chunked encodes body as one chunk of chunked transfer encoding.
func Chunked(body []byte) []byte {
	return append(append([]byte(strconv.FormatInt(int64(len(body)), 16)+"\r\n"), body...), "\r\n0\r\n\r\n"...)
}
