// Package egress guards the connections made on someone else's behalf, the local hub's deliveries
// to its users' webhooks and the receiver's forward routes, so that they never carry this
// machine's own trust: the robot daemon trusts loopback clients of its own user, and cloud metadata
// services answer on link-local addresses.
//
// The check is made on every connection, on the address a name resolved to at that moment (a
// net.Dialer Control hook), so that DNS rebinding gains nothing. Refused by default: loopback
// (127.0.0.0/8, ::1), link-local (169.254.0.0/16 with the metadata services, fe80::/10), "this
// host" (0.0.0.0/8, ::) and multicast. Addresses of the local network (10/8, 192.168/16, fc00::/7)
// are other machines, a normal target, and the daemon asks them for its token. Each user of the
// guard says what the operator allowed and what a refusal tells the reader.
package egress

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Reason says why ip is not a target by default ("a loopback address", ...), or "" when it is one.
func Reason(ip netip.Addr) string {
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

// Guard checks the connections of one client.
type Guard struct {
	// Allow is the targets the operator allowed although Reason refuses them; nil allows none.
	Allow *Allowlist
	// Refuse builds the error of a refused connection, from its address and Reason's reason.
	Refuse func(addr netip.AddrPort, reason string) error
}

// Check refuses a connection to address ("ip:port", as a dialer gives it) unless it is a target.
func (g Guard) Check(address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refused: %q is not an address the guard can check", address)
	}
	ap = netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port())
	reason := Reason(ap.Addr())
	if reason == "" || g.Allow.Allows(ap) {
		return nil
	}
	return g.Refuse(ap, reason)
}

// Dialer returns a dialer (30 s to connect, 30 s keep-alive, as net/http's default) that checks
// every connection it makes with g.Check, after any name was resolved.
func (g Guard) Dialer() *net.Dialer {
	return &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error { return g.Check(address) }}
}

// Allowlist is the targets connections may reach although Reason refuses them: exact addresses
// with a port, and networks (any port).
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

// Allows reports whether ap is one of the targets; a nil Allowlist allows none.
func (a *Allowlist) Allows(ap netip.AddrPort) bool {
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
