package fleetagent

import (
	"os"
	"testing"

	"github.com/urfave/cli/v2"
)

// The broker password from the systemd unit's environment file is the daemon's alone: apps and
// their installs start with the daemon's environment (os.Environ), so it must be gone from it.
func TestFleetPasswordIsNotPassedToApps(t *testing.T) {
	t.Setenv("ROBOT_FLEET_PASSWORD", "fleet-s3cret")
	var f Config
	app := &cli.App{Flags: Flags(), Action: func(c *cli.Context) (err error) {
		f, err = ConfigFrom(c, os.Getenv)
		return err
	}}
	if err := app.Run([]string{"robot-daemon", "--fleet", "mqtt://127.0.0.1:1883", "--fleet-id", "robot-1"}); err != nil {
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
