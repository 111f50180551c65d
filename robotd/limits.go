package robotd

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// maxStreamsPerClient caps the open state streams, job-log streams and job websockets of one
// client: each holds a goroutine and a connection for as long as the client keeps it.
const maxStreamsPerClient = 16

// DefaultBodyTimeout bounds the reading of a request body (--body-timeout): a client that sends
// its headers and then stalls is answered 408 and dropped. Headers have ReadHeaderTimeout.
const DefaultBodyTimeout = 30 * time.Second

// clientKey names who a request comes from, for per-client caps: its user on this machine when it
// is a loopback client whose user is known, else its address.
func (s *Server) clientKey(r *http.Request) string {
	if uid := s.peerUID(r); uid >= 0 {
		return "uid " + strconv.Itoa(uid)
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// streamSlots counts the open streams of each client.
type streamSlots struct {
	mu   sync.Mutex
	open map[string]int
}

// acquire takes a stream slot for r's client, or answers 429 and returns false.
func (s *Server) acquireStream(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	key := s.clientKey(r)
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	if s.streams.open == nil {
		s.streams.open = map[string]int{}
	}
	if n := s.streams.open[key]; n >= maxStreamsPerClient {
		s.log.Warn("refused a stream: too many from one client", "client", key, "open", n, "path", r.URL.Path)
		writeJSON(w, http.StatusTooManyRequests, detail{Detail: fmt.Sprintf(
			"Too many open streams: this client (%s) has %d, the most one client may hold; close one first", key, n)})
		return nil, false
	}
	s.streams.open[key]++
	return func() {
		s.streams.mu.Lock()
		defer s.streams.mu.Unlock()
		if s.streams.open[key]--; s.streams.open[key] <= 0 {
			delete(s.streams.open, key)
		}
	}, true
}

// limitBody puts a read deadline on r's body, cleared once the body has been read whole: a
// deadline left on the connection would cut the server's background read of a long request.
func (s *Server) limitBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || s.bodyTimeout <= 0 {
		return
	}
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(s.bodyTimeout)); err != nil {
		return // not a real connection (a test's recorder)
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc, timeout: s.bodyTimeout}
}

type deadlineBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
	done    bool
}

func (b *deadlineBody) after() time.Duration { return b.timeout }

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// errBodyTimeout is a body that did not arrive within the body timeout: answered with 408.
type errBodyTimeout struct{ after time.Duration }

func (e *errBodyTimeout) Error() string {
	return fmt.Sprintf("body: not received within %s; send the whole body at once", e.after)
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
