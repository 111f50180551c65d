package delivery

import (
	"net/netip"
	"strings"
	"testing"
)

// A delivery to this machine's own address is refused with a message that says how to allow it.
// (internal/egress's tests hold the rule; internal/hubemu's
// TestDeliveriesNeverReachThisMachineUnlessAllowed sends deliveries through it.)
func TestRefusalSaysHowToAllow(t *testing.T) {
	err := guard(nil).Check("127.0.0.1:8000")
	re, ok := err.(*RefusedTargetError)
	if !ok || re.Addr != netip.MustParseAddrPort("127.0.0.1:8000") || re.Reason != "a loopback address" ||
		!strings.Contains(err.Error(), "--allow-delivery-to 127.0.0.1:8000") {
		t.Fatalf("%v", err)
	}
}
