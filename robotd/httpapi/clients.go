package httpapi

import (
	"context"
	"net"
	"net/http"
)

// Clients is what route handlers need of the daemon's access control (robotd/access): who a
// request comes from, and a slot for a long-lived stream, capped per client.
type Clients interface {
	// ClientKey names r's client: who its credential proved it is, and from where.
	ClientKey(r *http.Request) string
	// AcquireStream takes a stream slot for r's client, or answers 429 and returns false.
	AcquireStream(w http.ResponseWriter, r *http.Request) (release func(), ok bool)
}

type localClientKey struct{}

// WithLocalClient marks a connection's context as one from this machine that is no TCP loopback
// connection: the owner's unix socket.
func WithLocalClient(ctx context.Context) context.Context {
	return context.WithValue(ctx, localClientKey{}, true)
}

// FromThisMachine reports whether r comes from a process on this machine: over loopback, or
// through the owner's unix socket. (Where it comes from, not who sent it: that is the credential's.)
func FromThisMachine(r *http.Request) bool {
	if local, _ := r.Context().Value(localClientKey{}).(bool); local {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
