package fleetagent

import (
	"os"
	"testing"

	"github.com/robothub/robothub/internal/machineid"
)

// The broker password from the systemd unit's environment file is the daemon's alone: apps and
// their installs start with the daemon's environment (os.Environ), so it must be gone from it.
func TestFleetPasswordIsNotPassedToApps(t *testing.T) {
	t.Setenv("ROBOT_FLEET_PASSWORD", "fleet-s3cret")
	f, err := Resolve(Settings{URL: "mqtt://127.0.0.1:1883", ID: "robot-1"}, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if f.password != "fleet-s3cret" || f.username != "robot-1" {
		t.Fatalf("the daemon's fleet credentials: user %q, password %q", f.username, f.password)
	}
	for _, kv := range os.Environ() {
		if kv == "ROBOT_FLEET_PASSWORD=fleet-s3cret" {
			t.Fatal("ROBOT_FLEET_PASSWORD is still in the environment that apps and installs inherit")
		}
	}
}

// Robots flashed from one image share a host name: the default fleet id is the machine's id
// (robot-<hardware id>, a hash of /etc/machine-id or the board's serial number), not the host
// name, which is the default human name instead.
func TestDefaultFleetIDIsTheMachinesNotTheHostName(t *testing.T) {
	hw, src := machineid.ID()
	if hw == "" {
		t.Skipf("this machine has none of %v", machineid.Sources)
	}
	t.Setenv("ROBOT_FLEET_ID", "")
	f, err := Resolve(Settings{URL: "mqtt://127.0.0.1:1883"}, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if f.id != "robot-"+hw || f.idWarning != "" {
		t.Fatalf("default fleet id %q (warning %q), want robot-%s from %s", f.id, f.idWarning, hw, src)
	}
	if f.name != host {
		t.Fatalf("default fleet name %q, want the host name %q", f.name, host)
	}
}
