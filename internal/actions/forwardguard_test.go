package actions

import (
	"net/http"
	"testing"
)

// TestForwardGuardRule: which addresses a forward route may reach, by how its URL names the host.
func TestForwardGuardRule(t *testing.T) {
	// (Which addresses the guard refuses is internal/egress's rule, tested there.)
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
	// (TestForwardByNameDoesNotCarryTheDaemonsLocalTrust in cli/robothub-server dials through the guard.)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
