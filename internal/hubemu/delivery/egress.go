package delivery

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"

	"github.com/robothub/robothub/internal/egress"
)

// A delivery goes where a hub user says, so it must never carry this machine's own trust: every
// connection a delivery opens goes through internal/egress's guard (loopback, link-local, "this
// host" and multicast refused), unless the operator allows the target (hub serve
// --allow-delivery-to). Deliveries follow no redirects and use no proxy, so nothing connects for
// them past the check.

// RefusedTargetError is a connection a delivery did not open: its address is this machine's own
// or link-local, and not allowed.
type RefusedTargetError struct {
	Addr   netip.AddrPort
	Reason string // "a loopback address", ...
}

func (e *RefusedTargetError) Error() string {
	return fmt.Sprintf("refused: %s is %s; the hub delivers on its users' behalf and never to this machine's own or link-local services (allow a receiver with hub serve --allow-delivery-to %s)",
		e.Addr, e.Reason, e.Addr)
}

// guard is the check of every connection deliveries open: allow lets the operator's targets through.
func guard(allow *egress.Allowlist) egress.Guard {
	return egress.Guard{Allow: allow, Refuse: func(addr netip.AddrPort, reason string) error {
		return &RefusedTargetError{Addr: addr, Reason: reason}
	}}
}

// guardedClient returns the client deliveries are sent with: it dials only what allow permits,
// follows no redirects, and uses no proxy from the environment (a proxy would connect for it,
// past the check).
func guardedClient(allow *egress.Allowlist, workers int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = guard(allow).Dialer().DialContext
	tr.MaxIdleConnsPerHost = workers
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// refusedTarget returns the refusal in a failed request's error, if that is what it is.
func refusedTarget(err error) *RefusedTargetError {
	var re *RefusedTargetError
	if errors.As(err, &re) {
		return re
	}
	return nil
}
