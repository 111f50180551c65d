package access

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/robothub/robothub/robotd/httpapi"
)

// maxStreamsPerClient caps the open state streams, job-log streams and job websockets of one
// client: each holds a goroutine and a connection for as long as the client keeps it.
const maxStreamsPerClient = 16

// ClientKey names who a request comes from, for per-client caps: who its credential proved it is
// (the owner, an app) and the address it came from; without a credential (a login), the address.
func (s *Guard) ClientKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if c, ok := r.Context().Value(connKey{}).(*connInfo); ok && c.socketUID >= 0 {
		return "owner socket (uid " + strconv.Itoa(c.socketUID) + ")"
	}
	if p, ok := PrincipalOf(r); ok {
		return p.Name + " from " + host
	}
	return host
}

// streamSlots counts the open streams of each client.
type streamSlots struct {
	mu   sync.Mutex
	open map[string]int
}

// acquire takes a stream slot for r's client, or answers 429 and returns false.
func (s *Guard) AcquireStream(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	key := s.ClientKey(r)
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	if s.streams.open == nil {
		s.streams.open = map[string]int{}
	}
	if n := s.streams.open[key]; n >= maxStreamsPerClient {
		s.log.Warn("refused a stream: too many from one client", "client", key, "open", n, "path", r.URL.Path)
		httpapi.WriteJSON(w, http.StatusTooManyRequests, httpapi.Detail{Detail: fmt.Sprintf(
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

// Connection caps of the TCP listener, keyed by the client's address (limits, not identity: a
// connection is capped before anything of it is read): each address may hold maxConnsPerClient
// connections, and all of them together maxTCPConns. A connection over a cap is answered 503 and
// closed as soon as it is accepted. The owner's socket (OwnerListener) is not capped: another
// local user's flood of loopback cannot lock the owner out.
const (
	maxConnsPerClient = 64
	maxTCPConns       = 512
)

// Listener wraps ln, the daemon's TCP listener, with the connection caps. Serve the server on it,
// with ConnContext.
func (s *Guard) Listener(ln net.Listener) net.Listener {
	return &capListener{Listener: ln, s: s, open: map[string]int{}}
}

type capListener struct {
	net.Listener
	s       *Guard
	mu      sync.Mutex
	open    map[string]int // open connections of each address
	total   int
	lastLog time.Time
}

// cappedConn is an accepted connection, counted against its address until it closes.
type cappedConn struct {
	net.Conn
	release sync.Once
	l       *capListener
	key     string
}

// CloseWrite ends the sending side, as net/http does to finish an answer before it closes a
// connection whose request it did not read whole.
func (c *cappedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *cappedConn) Close() error {
	c.release.Do(func() { c.l.done(c.key) })
	return c.Conn.Close()
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key, _, err := net.SplitHostPort(c.RemoteAddr().String())
		if err != nil {
			key = c.RemoteAddr().String()
		}
		if why := l.admit(key); why != "" {
			l.refuse(c, key, why)
			continue
		}
		return &cappedConn{Conn: c, l: l, key: key}, nil
	}
}

// admit counts a connection of client key, or says why it is over a cap.
func (l *capListener) admit(key string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.open[key] >= maxConnsPerClient:
		return fmt.Sprintf("this address (%s) has %d connections open, the most one address may hold", key, l.open[key])
	case l.total >= maxTCPConns:
		return fmt.Sprintf("clients hold %d connections, the most the daemon serves over TCP (its owner still gets in through its unix socket)", l.total)
	}
	l.open[key]++
	l.total++
	return ""
}
func (l *capListener) done(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.open[key]--; l.open[key] <= 0 {
		delete(l.open, key)
	}
}

// refuse answers an over-cap connection 503 and closes it. Its send buffer is empty, so the short
// answer is written at once; the deadline only guards against the unexpected.
func (l *capListener) refuse(c net.Conn, key, why string) {
	l.mu.Lock()
	logIt := time.Since(l.lastLog) >= time.Second // a flood must not flood the log too
	if logIt {
		l.lastLog = time.Now()
	}
	l.mu.Unlock()
	if logIt {
		l.s.log.Warn("refused a connection: too many", "client", key, "why", why)
	}
	body := `{"detail":"Too many connections: ` + why + `; close some first"}` + "\n"
	_ = c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	_, _ = fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: %d\r\nRetry-After: 1\r\nConnection: close\r\n\r\n%s", len(body), body)
	// Closing with the request unread would reset the connection and lose the answer: end the
	// sending side, take what the client sent (a little, briefly), then close.
	go func() {
		if tc, ok := c.(interface{ CloseWrite() error }); ok {
			_ = tc.CloseWrite()
			_, _ = io.CopyN(io.Discard, c, 16<<10)
		}
		_ = c.Close()
	}()
}
