package delivery

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A delivery goes where a hub user says, so it must never carry this machine's own trust: the
// robot daemon trusts loopback clients of its own user, and cloud metadata services answer on
// link-local addresses. Every connection a delivery opens is checked when it is made, on the
// address the name resolved to (a net.Dialer Control hook), so that neither DNS rebinding nor a
// redirect gets round it (deliveries follow no redirects either). Refused: loopback (127.0.0.0/8,
// ::1), link-local (169.254.0.0/16 with the metadata services, fe80::/10), "this host" (0.0.0.0/8,
// ::) and multicast, unless the operator allows the target (hub serve --allow-delivery-to).
// Addresses of the local network (10/8, 192.168/16, ...) are not refused: a receiver on the robot's
// own network is a normal target, and the daemon asks other hosts for its token.

// Allowlist is the targets deliveries may reach although they are refused by default: exact
// addresses with a port, and networks (any port).
type Allowlist struct {
	addrs    map[netip.AddrPort]bool
	prefixes []netip.Prefix
	specs    []string
}

// ParseAllowlist reads targets, each host:port (an IP address, or localhost for both of its
// addresses) or a CIDR network such as 127.0.0.0/8.
func ParseAllowlist(specs []string) (*Allowlist, error) {
	a := &Allowlist{addrs: map[netip.AddrPort]bool{}}
	for _, spec := range specs {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			continue
		}
		if p, err := netip.ParsePrefix(spec); err == nil {
			a.prefixes = append(a.prefixes, p.Masked())
			a.specs = append(a.specs, spec)
			continue
		}
		host, portText, err := net.SplitHostPort(spec)
		if err != nil {
			return nil, fmt.Errorf("%q is not host:port or a CIDR network (such as 127.0.0.1:7860, [::1]:7860, localhost:7860 or 127.0.0.0/8)", spec)
		}
		port, err := strconv.ParseUint(portText, 10, 16)
		if err != nil || port == 0 {
			return nil, fmt.Errorf("%q: %q is not a port number", spec, portText)
		}
		var ips []netip.Addr
		if strings.EqualFold(host, "localhost") {
			ips = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
		} else {
			ip, err := netip.ParseAddr(host)
			if err != nil {
				return nil, fmt.Errorf("%q: the host must be an IP address or localhost, not %q (the check is made on the address a name resolves to)", spec, host)
			}
			ips = []netip.Addr{ip.Unmap()}
		}
		for _, ip := range ips {
			a.addrs[netip.AddrPortFrom(ip, uint16(port))] = true
		}
		a.specs = append(a.specs, spec)
	}
	return a, nil
}

// String lists the targets as given.
func (a *Allowlist) String() string {
	if a == nil || len(a.specs) == 0 {
		return "none"
	}
	return strings.Join(a.specs, ", ")
}

func (a *Allowlist) allows(ap netip.AddrPort) bool {
	if a == nil {
		return false
	}
	if a.addrs[ap] {
		return true
	}
	for _, p := range a.prefixes {
		if p.Contains(ap.Addr()) {
			return true
		}
	}
	return false
}

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

// RefusedReason says why ip is not a target of deliveries unless allowed ("a loopback address"),
// or "" when it is one: the CLI warns about a webhook URL the hub will refuse.
func RefusedReason(ip netip.Addr) string { return refusedReason(ip) }

// refusedReason says why ip is not a target of deliveries by default, or "".
func refusedReason(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address (such as a cloud metadata service)"
	case ip.IsUnspecified(), ip.Is4() && ip.As4()[0] == 0:
		return `a "this host" address`
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	return ""
}

// check refuses a connection to address ("ip:port", as the dialer gives it) unless allowed.
func (a *Allowlist) check(address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refused: %q is not an address a delivery can check", address)
	}
	ap = netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port())
	reason := refusedReason(ap.Addr())
	if reason == "" || a.allows(ap) {
		return nil
	}
	return &RefusedTargetError{Addr: ap, Reason: reason}
}

// guardedClient returns the client deliveries are sent with: it dials only what allow permits,
// follows no redirects, and uses no proxy from the environment (a proxy would connect for it,
// past the check).
func guardedClient(allow *Allowlist, workers int) *http.Client {
	dialer := &net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			return allow.check(address)
		},
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = dialer.DialContext
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
