package httpapi

import "net/http"

// Clients is what route handlers need of the daemon's access control (robotd/access): who a
// request comes from, and a slot for a long-lived stream, capped per client.
type Clients interface {
	// ClientKey names r's client: its user on this machine when known, else its address.
	ClientKey(r *http.Request) string
	// AcquireStream takes a stream slot for r's client, or answers 429 and returns false.
	AcquireStream(w http.ResponseWriter, r *http.Request) (release func(), ok bool)
}
