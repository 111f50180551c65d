package delivery

import (
	"net/netip"
	"strings"
	"testing"
)

func TestDeliveriesRefuseThisMachinesOwnAddresses(t *testing.T) {
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
		"93.184.216.34:443":       "",
		"[2001:db8::1]:443":       "",
	} {
		err := (*Allowlist)(nil).check(addr)
		switch {
		case reason == "" && err != nil:
			t.Errorf("%s refused: %v", addr, err)
		case reason != "" && (err == nil || !strings.Contains(err.Error(), reason)):
			t.Errorf("%s: %v, want a refusal saying %q", addr, err, reason)
		}
	}
}

func TestAllowlistLetsTheOperatorsTargetsThrough(t *testing.T) {
	a, err := ParseAllowlist([]string{"127.0.0.1:7860", "localhost:9000", "169.254.0.0/16", " "})
	if err != nil {
		t.Fatal(err)
	}
	for addr, allowed := range map[string]bool{
		"127.0.0.1:7860":     true,
		"127.0.0.1:8000":     false, // the daemon beside the receiver stays refused
		"[::1]:7860":         false,
		"127.0.0.1:9000":     true,
		"[::1]:9000":         true,
		"169.254.169.254:80": true,
	} {
		if err := a.check(addr); (err == nil) != allowed {
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

func TestRefusalSaysHowToAllow(t *testing.T) {
	err := (*Allowlist)(nil).check("127.0.0.1:8000")
	re, ok := err.(*RefusedTargetError)
	if !ok || re.Addr != netip.MustParseAddrPort("127.0.0.1:8000") ||
		!strings.Contains(err.Error(), "--allow-delivery-to 127.0.0.1:8000") {
		t.Fatalf("%v", err)
	}
}
