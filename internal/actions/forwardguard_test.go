package actions

import (
	"net/http"
	"net/netip"
	"testing"
)

// TestForwardGuardRule: which addresses a forward route may reach, by how its URL names the host.
func TestForwardGuardRule(t *testing.T) {
	for addr, kind := range map[string]string{
		"127.0.0.1": "loopback", "127.3.4.5": "loopback", "::1": "loopback", "::ffff:127.0.0.1": "loopback",
		"169.254.169.254": "link-local", "fe80::1": "link-local", "0.0.0.0": "unspecified", "0.1.2.3": "unspecified",
		"::": "unspecified", "224.0.0.1": "multicast", "ff02::1": "multicast",
		"10.1.2.3": "", "192.168.1.20": "", "172.16.0.1": "", "fd00::1": "", "93.184.216.34": "", "2606:4700::1111": "",
	} {
		if got := localKind(netip.MustParseAddr(addr)); got != kind {
			t.Errorf("localKind(%s) = %q, want %q", addr, got, kind)
		}
	}
	for host, named := range map[string]bool{"127.0.0.1": true, "::1": true, "169.254.169.254": true, "localhost": true,
		"LOCALHOST.": true, "robot.localhost": true, "ci.example.com": false, "vm": false, "localhost.example.com": false} {
		if got := operatorNamedAddress(host); got != named {
			t.Errorf("operatorNamedAddress(%q) = %v, want %v", host, got, named)
		}
	}
	// A named host is dialed through the guard; the operator's address is not.
	base := &http.Client{}
	if c, err := guardedClient(base, "127.0.0.1"); err != nil || c != base {
		t.Errorf("an IP literal got a guarded client: %v", err)
	}
	if c, err := guardedClient(base, "localhost.example.com"); err != nil || c == base || c.Transport == nil {
		t.Errorf("a named host got no guard: %v", err)
	}
	// A transport the guard cannot wrap is refused when the route is built, not trusted.
	if _, err := guardedClient(&http.Client{Transport: roundTripperFunc(nil)}, "ci.example.com"); err == nil {
		t.Error("a transport the guard cannot wrap was accepted")
	}
	// (TestForwardByNameDoesNotCarryTheDaemonsLocalTrust in cli/robothub dials through the guard.)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
