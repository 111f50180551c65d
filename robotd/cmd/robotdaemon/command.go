// Package robotdaemon is the robot-daemon command: its flags and variables, their defaults, checks
// and help, resolved into a robotd.Config that robotd serves. robotd/cmd/robot-daemon's main runs
// Main; robothub dev and the tests run Run, in process.
package robotdaemon

import (
	"context"
	"io"
	"os"
	"slices"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/version"
	"github.com/robothub/robothub/robotd"
	"github.com/robothub/robothub/robotd/access"
	"github.com/robothub/robothub/robotd/httpapi"
)

// Run runs the daemon robot-daemon's command line describes until ctx is done (robotd.Serve).
// args are the command line (args[0] is the program name); getenv reads the environment. A daemon
// run this way (in process, by tests and robothub dev) cannot update itself: Main can.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return run(ctx, args, getenv, stdout, stderr, func(cfg robotd.Config) error {
		return robotd.Serve(ctx, cfg, getenv, stdout, stderr)
	})
}

// Main runs the daemon as its program does (robot-daemon's main): as Run, and it also updates
// itself (robotd.ServeUpdating). It returns only on error or at the end of a normal shutdown.
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	// The environment as the service manager gave it: the daemon takes secrets out of its own
	// (the broker password, which apps would inherit), and the next release needs them again.
	environ := os.Environ()
	return run(ctx, args, getenv, stdout, stderr, func(cfg robotd.Config) error {
		return robotd.ServeUpdating(ctx, cfg, args, environ, getenv, stdout, stderr)
	})
}

// run parses args and, unless they ask for help or the version, serves the Config they resolve to.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, serve func(robotd.Config) error) error {
	app := &cli.App{
		Name:            "robot-daemon",
		Usage:           "serve the robot and run its apps",
		Version:         version.String(),
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		Flags: append([]cli.Flag{
			&cli.GenericFlag{Name: "sim", Value: new(simMode), Usage: "run the simulated robot; --sim=bus runs the hardware backend on a motor bus emulator"},
			&cli.StringFlag{Name: "serialport", Usage: "the motor bus's serial port (default: the Lite's USB adapter " + robotd.LiteAdapter + ", or " + robotd.WirelessUART + " with --wireless-version)"},
			&cli.DurationFlag{Name: "bus-timeout", Usage: "the slack a motor's answer gets on top of its wire time (default 5ms; 15ms with --sim=bus); raise it for a USB-serial adapter with a latency timer (the vendor's SDK waits 34ms)"},
			&cli.StringFlag{Name: "hardware-config", Usage: "a hardware config YAML file (motor ids, offsets, limits) instead of the built-in one"},
			&cli.StringFlag{Name: "startup-app", Usage: "app to start after the robot wakes up (installed from the catalog if missing)", Value: ""},
			&cli.BoolFlag{Name: "wireless-version", Usage: "run as on the Wireless robot: listen on 0.0.0.0, apps venv at " + robotd.WirelessAppsVenv},
			&cli.BoolFlag{Name: "no-wake-up-on-start", Usage: "keep the robot asleep at start"},
			&cli.StringFlag{Name: "host", Usage: "address to listen on (default 127.0.0.1; 0.0.0.0 with --wireless-version)"},
			&cli.IntFlag{Name: "port", Value: 8000, Usage: "port to listen on"},
			&cli.IntFlag{Name: "app-web-port", Usage: "the port of the running app's web page when its custom_app_url names the SDK's default " +
				strconv.Itoa(apps.DefaultAppWebPort) + " (default: --port + 42, so " + strconv.Itoa(apps.DefaultAppWebPort) +
				" beside 8000 and two daemons on one machine do not collide)"},
			&cli.StringFlag{Name: "data-dir", Usage: "where installed-app records and the startup config live (default $XDG_STATE_HOME/robot-daemon or ~/.local/state/robot-daemon; /var/lib/robot-daemon with --wireless-version)"},
			&cli.StringFlag{Name: "apps-venv", Usage: "the apps venv (default <data-dir>/apps_venv; " + robotd.WirelessAppsVenv + " with --wireless-version)"},
			&cli.DurationFlag{Name: "stop-timeout", Value: apps.DefaultStopTimeout, Usage: "how long a stopping app gets after SIGINT before SIGKILL"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error"},
			&cli.StringFlag{Name: "token", Aliases: []string{"api-token"}, Usage: "the owner's API token, which clients send over TCP (default $ROBOT_DAEMON_TOKEN, else the one made on first start in <data-dir>/" + access.TokenFileName + "; the daemon's own user may use <data-dir>/" + access.SocketFileName + " instead)"},
			&cli.DurationFlag{Name: "body-timeout", Value: httpapi.DefaultBodyTimeout, Usage: "how long a client has to send a request's body; a stalled one gets 408 and is dropped"},
			&cli.BoolFlag{Name: "no-auth", Usage: "let every client use the API without the token; refused unless the daemon listens on loopback only"},
			&cli.StringFlag{Name: "hub-url", Usage: "the hub whose robot_python_app spaces form the app catalog and whose datasets are the move libraries (default $HF_ENDPOINT or https://huggingface.co; \"none\": neither, move libraries from the cache only)"},
			&cli.BoolFlag{Name: "no-mdns", Usage: "do not announce the daemon on the local network (mDNS: <robot-name>.local and " + robotd.MDNSService + "), which it does when it listens beyond loopback"},
			&cli.StringSliceFlag{Name: "preload-moves", Value: cli.NewStringSlice(robotd.DefaultMoveLibraries...), Usage: "move libraries (datasets on the hub) downloaded at start, in the background; \"none\" for none"},
			&cli.IntFlag{Name: "max-download-mib", Value: hub.DefaultMaxSnapshotBytes >> 20, Usage: "the most one download from the hub (a move library, the face model) may hold, in MiB; a file over 64 MiB, or a download over this, is an error, never a file cut short"},
			&cli.StringFlag{Name: "python", Value: "python3", Usage: "the interpreter that creates the apps venv"},
			&cli.StringSliceFlag{Name: "wheel-dir", Usage: "wheels for pip --find-links, the only source with --offline (default /usr/share/python-wheels)"},
			&cli.StringFlag{Name: "index-url", Usage: "the package index app dependencies come from (default: pip's own configuration: PIP_INDEX_URL, pip.conf)"},
			&cli.StringSliceFlag{Name: "extra-index-url", Usage: "another package index, searched as well"},
			&cli.BoolFlag{Name: "offline", Usage: "install apps and their dependencies from the --wheel-dir directories only, never from an index"},
			&cli.StringFlag{Name: "installer", Value: "auto", Usage: "auto (uv when on PATH, else pip), pip or uv"},
			&cli.BoolFlag{Name: "system-site-packages", Usage: "let apps use the system's Python packages (numpy, OpenCV from apt on Raspberry Pi OS)"},
			&cli.StringSliceFlag{Name: "allowed-host", Usage: "a host name the API answers to, besides IP addresses, localhost and this machine's name"},
		}, slices.Concat(releaseFlags(), fleetFlags(), mediaFlags, faceFlags)...),
		Action: func(c *cli.Context) error {
			cfg, err := configFrom(c, getenv)
			if err != nil {
				return err
			}
			return serve(cfg)
		},
	}
	return app.RunContext(ctx, args)
}
