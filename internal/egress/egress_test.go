package egress

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

var refused = Guard{Refuse: func(ap netip.AddrPort, reason string) error {
	return errors.New("refused: " + ap.String() + " is " + reason)
}}

func TestGuardRefusesThisMachinesOwnAddresses(t *testing.T) {
	for addr, reason := range map[string]string{
		"127.0.0.1:8000":          "loopback",
		"127.3.4.5:80":            "loopback",
		"[::1]:8000":              "loopback",
		"[::ffff:127.0.0.1]:8000": "loopback", // an IPv4 address in IPv6 clothes
		"169.254.169.254:80":      "link-local",
		"[fe80::1%eth0]:80":       "link-local",
		"0.0.0.0:8000":            "this host",
		"0.1.2.3:8000":            "this host",
		"[::]:8000":               "this host",
		"224.0.0.1:80":            "multicast",
		"[ff02::1]:80":            "multicast",
		"10.1.2.3:8000":           "",
		"192.168.1.20:7860":       "",
		"172.16.0.1:80":           "",
		"[fd00::1]:80":            "",
		"93.184.216.34:443":       "",
		"[2001:db8::1]:443":       "",
	} {
		err := refused.Check(addr)
		switch {
		case reason == "" && err != nil:
			t.Errorf("%s refused: %v", addr, err)
		case reason != "" && (err == nil || !strings.Contains(err.Error(), reason)):
			t.Errorf("%s: %v, want a refusal saying %q", addr, err, reason)
		}
	}
	if err := refused.Check("not an address"); err == nil {
		t.Error("an address the guard cannot read was let through")
	}
}

func TestAllowlistLetsTheOperatorsTargetsThrough(t *testing.T) {
	a, err := ParseAllowlist([]string{"127.0.0.1:7860", "localhost:9000", "169.254.0.0/16", " "})
	if err != nil {
		t.Fatal(err)
	}
	g := Guard{Allow: a, Refuse: refused.Refuse}
	for addr, allowed := range map[string]bool{
		"127.0.0.1:7860":     true,
		"127.0.0.1:8000":     false, // the daemon beside the receiver stays refused
		"[::1]:7860":         false,
		"127.0.0.1:9000":     true,
		"[::1]:9000":         true,
		"169.254.169.254:80": true,
	} {
		if err := g.Check(addr); (err == nil) != allowed {
			t.Errorf("%s: %v, allowed %v", addr, err, allowed)
		}
	}
	if got := a.String(); got != "127.0.0.1:7860, localhost:9000, 169.254.0.0/16" {
		t.Errorf("String %q", got)
	}
	for _, bad := range []string{"example.com:80", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:http", "10.0.0.0/33"} {
		if _, err := ParseAllowlist([]string{bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseAllowlist(%q): %v, want an error naming it", bad, err)
		}
	}
}

// The dialer checks the address it connects to: a listener on loopback is refused, unless allowed.
func TestDialerChecksTheAddressItConnectsTo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if conn, err := refused.Dialer().Dial("tcp", ln.Addr().String()); err == nil || !strings.Contains(err.Error(), "is a loopback address") {
		if conn != nil {
			conn.Close()
		}
		t.Fatalf("dialing %s: %v, want a refusal", ln.Addr(), err)
	}
	allow, err := ParseAllowlist([]string{ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := Guard{Allow: allow, Refuse: refused.Refuse}.Dialer().Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dialing an allowed %s: %v", ln.Addr(), err)
	}
	conn.Close()
}
