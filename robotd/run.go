// Package robotd is the robot daemon (`robot-daemon`): it serves the robot and runs its apps, one at
// a time, behind a REST API, a state stream for the SDK, and a dashboard.
//
// This package is the wiring: the flags and Run (run.go), the robot's backend and media devices,
// NewServer, and routes.go, the one table of every route. It keeps the dashboard and mDNS. The
// routes live in rooms of their own:
//
//	httpapi/     the HTTP plumbing every route package shares (JSON, fault kind -> status, SSE)
//	access/      the tokens and their scopes, the owner socket, the login, host checks, caps
//	appsapi/     the app routes and SDK sessions, over appsapi.Apps
//	daemonapi/   the daemon's status, control, name, hardware id, app lock and hub login
//	robotapi/    the robot's state, motion, motor, recorded-move and kinematics routes
//	mediaapi/    the media, audio, camera, volume and WebRTC routes
//	updateapi/   the daemon's self-update routes
//	fleetagent/  the fleet flags and agent
//	pysdk/       the Python SDK the daemon installs into its apps venv
package robotd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/version"
	"github.com/robothub/robothub/robotd/access"
	"github.com/robothub/robothub/robotd/fleetagent"
	"github.com/robothub/robothub/robotd/httpapi"
)

// Run runs the daemon until ctx is done. args are the command line (args[0] is the program name);
// getenv reads the environment. A daemon run this way (in-process, by tests and robothub dev)
// cannot update itself: Main can.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return run(ctx, args, getenv, stdout, stderr, false)
}

// Main runs the daemon as its program does (robot-daemon's main): as Run, and it also updates
// itself (ServeUpdating). It returns only on error or at the end of a normal shutdown.
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return run(ctx, args, getenv, stdout, stderr, true)
}

// run is Run; with selfExec (Main) the daemon can exec the next release.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, selfExec bool) error {
	// The environment as the service manager gave it: the daemon takes secrets out of its own
	// (the broker password, which apps would inherit), and the next release needs them again.
	environ := os.Environ()
	app := &cli.App{
		Name:            "robot-daemon",
		Usage:           "serve the robot and run its apps",
		Version:         version.String(),
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		Flags: append([]cli.Flag{
			&cli.GenericFlag{Name: "sim", Value: new(simMode), Usage: "run the simulated robot; --sim=bus runs the hardware backend on a motor bus emulator"},
			&cli.StringFlag{Name: "serialport", Usage: "the motor bus's serial port (default: the Lite's USB adapter " + liteAdapterVID + ":" + liteAdapterPID + ", or " + wirelessUART + " with --wireless-version)"},
			&cli.DurationFlag{Name: "bus-timeout", Usage: "the slack a motor's answer gets on top of its wire time (default 5ms; 15ms with --sim=bus); raise it for a USB-serial adapter with a latency timer (the vendor's SDK waits 34ms)"},
			&cli.StringFlag{Name: "hardware-config", Usage: "a hardware config YAML file (motor ids, offsets, limits) instead of the built-in one"},
			&cli.StringFlag{Name: "startup-app", Usage: "app to start after the robot wakes up (installed from the catalog if missing)", Value: ""},
			&cli.BoolFlag{Name: "wireless-version", Usage: "run as on the Wireless robot: listen on 0.0.0.0, apps venv at " + WirelessAppsVenv},
			&cli.BoolFlag{Name: "no-wake-up-on-start", Usage: "keep the robot asleep at start"},
			&cli.StringFlag{Name: "host", Usage: "address to listen on (default 127.0.0.1; 0.0.0.0 with --wireless-version)"},
			&cli.IntFlag{Name: "port", Value: 8000, Usage: "port to listen on"},
			&cli.IntFlag{Name: "app-web-port", Usage: "the port of the running app's web page when its custom_app_url names the SDK's default " +
				strconv.Itoa(apps.DefaultAppWebPort) + " (default: --port + 42, so " + strconv.Itoa(apps.DefaultAppWebPort) +
				" beside 8000 and two daemons on one machine do not collide)"},
			&cli.StringFlag{Name: "data-dir", Usage: "where installed-app records and the startup config live (default $XDG_STATE_HOME/robot-daemon or ~/.local/state/robot-daemon; /var/lib/robot-daemon with --wireless-version)"},
			&cli.StringFlag{Name: "apps-venv", Usage: "the apps venv (default <data-dir>/apps_venv; " + WirelessAppsVenv + " with --wireless-version)"},
			&cli.DurationFlag{Name: "stop-timeout", Value: apps.DefaultStopTimeout, Usage: "how long a stopping app gets after SIGINT before SIGKILL"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error"},
			&cli.StringFlag{Name: "token", Aliases: []string{"api-token"}, Usage: "the owner's API token, which clients send over TCP (default $ROBOT_DAEMON_TOKEN, else the one made on first start in <data-dir>/" + access.TokenFileName + "; the daemon's own user may use <data-dir>/" + access.SocketFileName + " instead)"},
			&cli.DurationFlag{Name: "body-timeout", Value: httpapi.DefaultBodyTimeout, Usage: "how long a client has to send a request's body; a stalled one gets 408 and is dropped"},
			&cli.BoolFlag{Name: "no-auth", Usage: "let every client use the API without the token; refused unless the daemon listens on loopback only"},
			&cli.StringFlag{Name: "hub-url", Usage: "the hub whose robot_python_app spaces form the app catalog and whose datasets are the move libraries (default $HF_ENDPOINT or https://huggingface.co; \"none\": neither, move libraries from the cache only)"},
			&cli.BoolFlag{Name: "no-mdns", Usage: "do not announce the daemon on the local network (mDNS: <robot-name>.local and " + MDNSService + "), which it does when it listens beyond loopback"},
			&cli.StringSliceFlag{Name: "preload-moves", Value: cli.NewStringSlice(DefaultMoveLibraries...), Usage: "move libraries (datasets on the hub) downloaded at start, in the background; \"none\" for none"},
			&cli.IntFlag{Name: "max-download-mib", Value: hub.DefaultMaxSnapshotBytes >> 20, Usage: "the most one download from the hub (a move library, the face model) may hold, in MiB; a file over 64 MiB, or a download over this, is an error, never a file cut short"},
			&cli.StringFlag{Name: "python", Value: "python3", Usage: "the interpreter that creates the apps venv"},
			&cli.StringSliceFlag{Name: "wheel-dir", Usage: "wheels for pip --find-links, the only source with --offline (default /usr/share/python-wheels)"},
			&cli.StringFlag{Name: "index-url", Usage: "the package index app dependencies come from (default: pip's own configuration: PIP_INDEX_URL, pip.conf)"},
			&cli.StringSliceFlag{Name: "extra-index-url", Usage: "another package index, searched as well"},
			&cli.BoolFlag{Name: "offline", Usage: "install apps and their dependencies from the --wheel-dir directories only, never from an index"},
			&cli.StringFlag{Name: "installer", Value: "auto", Usage: "auto (uv when on PATH, else pip), pip or uv"},
			&cli.BoolFlag{Name: "system-site-packages", Usage: "let apps use the system's Python packages (numpy, OpenCV from apt on Raspberry Pi OS)"},
			&cli.StringSliceFlag{Name: "allowed-host", Usage: "a host name the API answers to, besides IP addresses, localhost and this machine's name"},
		}, slices.Concat(releaseFlags(), fleetagent.Flags(), mediaFlags, faceFlags)...),
		Action: func(c *cli.Context) error {
			cfg, err := configFrom(c, getenv)
			if err != nil {
				return err
			}
			if selfExec {
				return ServeUpdating(ctx, cfg, args, environ, getenv, stdout, stderr)
			}
			return Serve(ctx, cfg, getenv, stdout, stderr)
		},
	}
	return app.RunContext(ctx, args)
}

// configFrom resolves the flags of c over the variables getenv reads into the daemon's Config:
// every default the help names is filled in here, and every flag checked, so that a mistake is
// said with the flag's name before anything starts.
func configFrom(c *cli.Context, getenv func(string) string) (Config, error) {
	cfg := Config{
		Sim: Sim(*c.Generic("sim").(*simMode)), SerialPort: c.String("serialport"), HardwareConfig: c.String("hardware-config"),
		BusTimeout: c.Duration("bus-timeout"),
		Wireless:   c.Bool("wireless-version"), NoWakeUpOnStart: c.Bool("no-wake-up-on-start"),
		StartupApp: strings.TrimSpace(c.String("startup-app")), StopTimeout: c.Duration("stop-timeout"),
		Python: c.String("python"), WheelDirs: c.StringSlice("wheel-dir"), AllowedHosts: c.StringSlice("allowed-host"),
	}
	cfg.Offline, cfg.SystemSitePackages, cfg.NoMDNS = c.Bool("offline"), c.Bool("system-site-packages"), c.Bool("no-mdns")
	mib := c.Int("max-download-mib")
	if mib < 1 {
		return cfg, fmt.Errorf("--max-download-mib: must be at least 1, got %d", mib)
	}
	cfg.MaxDownloadBytes = int64(mib) << 20
	for _, d := range c.StringSlice("preload-moves") {
		if d = strings.TrimSpace(d); d != "" && d != "none" {
			if err := CheckDatasetID(d); err != nil {
				return cfg, fmt.Errorf("--preload-moves: %w", err)
			}
			cfg.PreloadMoves = append(cfg.PreloadMoves, d)
		}
	}
	var err error
	if cfg.Media, err = mediaConfigFrom(c, cfg.Sim, cfg.HardwareConfig); err != nil {
		return cfg, err
	}
	if cfg.Face, err = faceConfigFrom(c); err != nil {
		return cfg, err
	}
	cfg.IndexURL, cfg.ExtraIndexURLs = strings.TrimSpace(c.String("index-url")), c.StringSlice("extra-index-url")
	switch c.String("installer") {
	case "pip":
	case "auto", "uv":
		if uv, err := exec.LookPath("uv"); err == nil {
			cfg.UV = uv
		} else if c.String("installer") == "uv" {
			return cfg, errors.New("--installer uv: uv is not on PATH")
		}
	default:
		return cfg, fmt.Errorf("--installer: %q is not one of auto, pip, uv", c.String("installer"))
	}
	if err := cfg.LogLevel.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return cfg, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", c.String("log-level"))
	}
	if cfg.BusTimeout < 0 || cfg.BusTimeout > time.Second {
		return cfg, fmt.Errorf("--bus-timeout: want a duration from 0 to 1s, got %s", cfg.BusTimeout)
	}
	if cfg.StopTimeout <= 0 {
		return cfg, fmt.Errorf("--stop-timeout: must be positive, got %s", cfg.StopTimeout)
	}
	if cfg.StartupApp != "" && !apps.AppNamePattern().MatchString(cfg.StartupApp) {
		return cfg, fmt.Errorf("--startup-app: %q is not an app name (letters, digits and underscores)", cfg.StartupApp)
	}
	host := c.String("host")
	if host == "" {
		host = "127.0.0.1"
		if cfg.Wireless {
			host = "0.0.0.0"
		}
	}
	port := c.Int("port")
	if port < 0 || port > 65535 {
		return cfg, fmt.Errorf("--port: %d is not a port number", port)
	}
	cfg.Addr = net.JoinHostPort(host, strconv.Itoa(port))
	if cfg.AppWebPort = c.Int("app-web-port"); cfg.AppWebPort < 0 || cfg.AppWebPort > 65535 {
		return cfg, fmt.Errorf("--app-web-port: %d is not a port number", cfg.AppWebPort)
	}
	if cfg.BodyTimeout = c.Duration("body-timeout"); cfg.BodyTimeout <= 0 {
		return cfg, fmt.Errorf("--body-timeout: must be positive, got %s", cfg.BodyTimeout)
	}
	cfg.NoAuth = c.Bool("no-auth")
	if cfg.NoAuth && !LoopbackHost(host) {
		return cfg, fmt.Errorf("--no-auth: refusing to listen on %s without authentication: anyone who reaches it could install code and move the robot; listen on 127.0.0.1 (--host) or drop --no-auth", host)
	}

	cfg.DataDir = c.String("data-dir")
	if cfg.DataDir == "" {
		switch {
		case cfg.Wireless:
			cfg.DataDir = "/var/lib/robot-daemon"
		case getenv("XDG_STATE_HOME") != "":
			cfg.DataDir = filepath.Join(getenv("XDG_STATE_HOME"), "robot-daemon")
		case getenv("HOME") != "":
			cfg.DataDir = filepath.Join(getenv("HOME"), ".local", "state", "robot-daemon")
		default:
			return cfg, errors.New("--data-dir: no default without $HOME; pass --data-dir")
		}
	}
	cfg.AppsVenv = c.String("apps-venv")
	if cfg.AppsVenv == "" {
		cfg.AppsVenv = filepath.Join(cfg.DataDir, "apps_venv")
		if cfg.Wireless {
			cfg.AppsVenv = WirelessAppsVenv
		}
	}
	cfg.Token = strings.TrimSpace(c.String("token"))
	source := "--token"
	if cfg.Token == "" {
		cfg.Token, source = strings.TrimSpace(getenv("ROBOT_DAEMON_TOKEN")), "ROBOT_DAEMON_TOKEN"
	}
	if cfg.NoAuth {
		cfg.Token = "" // nothing to send: apps are not given one
	}
	if cfg.Token != "" {
		if err := access.CheckTokenStrength(cfg.Token, source); err != nil {
			return cfg, err
		}
	}
	cfg.HubURL = c.String("hub-url")
	if cfg.HubURL == "" {
		cfg.HubURL = getenv("HF_ENDPOINT")
	}
	if cfg.HubURL == "" {
		cfg.HubURL = "https://huggingface.co"
	}
	if cfg.HubURL == "none" {
		cfg.HubURL = ""
	}
	// The hub token reads private spaces (install-private-space); HF_TOKEN or the hub's token file.
	if hc, err := hub.ConfigFromEnv(getenv, cfg.HubURL, ""); err == nil {
		cfg.HubToken = hc.Token
	}
	if cfg.Fleet, err = fleetagent.ConfigFrom(c, getenv); err != nil {
		return cfg, err
	}
	if cfg.Release, err = releaseConfigFrom(c, getenv); err != nil {
		return cfg, err
	}
	return cfg, nil
}
