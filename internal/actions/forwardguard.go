package actions

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/robothub/robothub/internal/egress"
)

// A forward route sends what a hub user's event carries to the route's target. The receiver often
// runs beside services that trust their own machine (the robot daemon trusts loopback clients of
// its user; a cloud's metadata service answers on a link-local address), so the payload must reach
// such a service only when the operator chose it. The rule:
//
//   - A target URL that names an IP address (http://127.0.0.1:9000/hook) or localhost is the
//     operator's choice of that address, and is dialed whatever its range.
//   - A target URL that names a host is checked on every connection by internal/egress's guard,
//     the local hub's deliveries' too: on the address the name resolved to at that moment,
//     loopback, link-local (cloud metadata), "this host" and multicast addresses are refused;
//     private networks (10/8, 192.168/16, fc00::/7) are other machines and are allowed.
//   - Redirects are never followed (Config.defaults), so the target cannot pick another address.
//
// A connection through a proxy (HTTPS_PROXY) is to the operator's proxy, which resolves the name
// itself; it is not checked.

// LocalTargetError is a forward refused because its target's name resolved to an address of this
// machine or its link.
type LocalTargetError struct {
	Host   string     // the name in the route's URL
	Addr   netip.Addr // what it resolved to
	Reason string     // "a loopback address", ... (egress.Reason)
}

func (e *LocalTargetError) Error() string {
	return fmt.Sprintf("%s resolved to %s, %s: a forward route whose URL names a host reaches other machines only, so that a name cannot lead deliveries to this machine's own services; to forward to a local service, write its address in the URL (such as http://127.0.0.1:PORT/...)", e.Host, e.Addr, e.Reason)
}

// operatorNamedAddress reports whether host, from a route's URL, is an address the operator wrote
// down (an IP literal, or localhost, which names loopback by definition: RFC 6761).
func operatorNamedAddress(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	_, err := netip.ParseAddr(host)
	return err == nil || host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// guardedClient returns a copy of base for a forward route to host: when host is a name, its
// connections to host are refused on the addresses a named target may not reach. base's transport
// must be nil (http.DefaultTransport's settings) or an *http.Transport.
func guardedClient(base *http.Client, host string) (*http.Client, error) {
	if operatorNamedAddress(host) {
		return base, nil
	}
	var t *http.Transport
	switch rt := base.Transport.(type) {
	case nil:
		t = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		t = rt.Clone()
	default:
		return nil, fmt.Errorf("forward: the HTTP client's transport is a %T; the forward guard needs an *http.Transport", rt)
	}
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	guard := egress.Guard{Refuse: func(addr netip.AddrPort, reason string) error {
		return &LocalTargetError{Host: host, Addr: addr.Addr(), Reason: reason}
	}}.Dialer()
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if h, _, err := net.SplitHostPort(addr); err == nil && strings.EqualFold(h, host) {
			return guard.DialContext(ctx, network, addr)
		}
		return dial(ctx, network, addr) // a proxy's address: the operator's
	}
	c := *base
	c.Transport = t
	return &c, nil
}
