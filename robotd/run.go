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
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/robothub/robothub/internal/dirlock"

	"github.com/urfave/cli/v2"

	"github.com/robothub/robothub/adapters/hardware/media"
	"github.com/robothub/robothub/adapters/python"
	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/release"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/core/version"
	"github.com/robothub/robothub/robotd/access"
	"github.com/robothub/robothub/robotd/fleetagent"
	"github.com/robothub/robothub/robotd/httpapi"
	"github.com/robothub/robothub/robotd/pysdk"
)

// Wireless robots keep the shared apps venv at a fixed path.
const wirelessAppsVenv = "/venvs/apps_venv"

// Run runs the daemon until ctx is done. args are the command line (args[0] is the program name);
// getenv reads the environment. A daemon run this way (in-process, by tests and robothub dev)
// cannot update itself: Main can.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return run(ctx, args, getenv, stdout, stderr, false, nil)
}

// run is Run; with selfExec (Main) the daemon can exec the next release, with environ, the
// environment it was started with.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, selfExec bool, environ []string) error {
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
			&cli.BoolFlag{Name: "wireless-version", Usage: "run as on the Wireless robot: listen on 0.0.0.0, apps venv at " + wirelessAppsVenv},
			&cli.BoolFlag{Name: "no-wake-up-on-start", Usage: "keep the robot asleep at start"},
			&cli.StringFlag{Name: "host", Usage: "address to listen on (default 127.0.0.1; 0.0.0.0 with --wireless-version)"},
			&cli.IntFlag{Name: "port", Value: 8000, Usage: "port to listen on"},
			&cli.IntFlag{Name: "app-web-port", Usage: "the port of the running app's web page when its custom_app_url names the SDK's default " +
				strconv.Itoa(apps.DefaultAppWebPort) + " (default: --port + 42, so " + strconv.Itoa(apps.DefaultAppWebPort) +
				" beside 8000 and two daemons on one machine do not collide)"},
			&cli.StringFlag{Name: "data-dir", Usage: "where installed-app records and the startup config live (default $XDG_STATE_HOME/robot-daemon or ~/.local/state/robot-daemon; /var/lib/robot-daemon with --wireless-version)"},
			&cli.StringFlag{Name: "apps-venv", Usage: "the apps venv (default <data-dir>/apps_venv; " + wirelessAppsVenv + " with --wireless-version)"},
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
			cfg.selfExec = selfExec
			if selfExec {
				if err := launch(cfg, args, environ, getenv, stderr); err != nil {
					return err
				}
			}
			return serve(ctx, cfg, getenv, stdout, stderr)
		},
	}
	return app.RunContext(ctx, args)
}

// moveLibraries are the move libraries of the daemon's hub (none with --hub-url none), cached in
// <data-dir>/datasets.
func moveLibraries(cfg config, log *slog.Logger) (*HubMoveLibraries, error) {
	cache := filepath.Join(cfg.dataDir, "datasets")
	if cfg.hubURL == "" {
		return NewHubMoveLibraries(nil, cache, log), nil
	}
	c, err := hub.New(cfg.hubURL, hub.WithToken(cfg.hubToken), hub.WithLogger(log), hub.WithUserAgent("robot-daemon/"+version.String()),
		hub.WithDownloadCaps(0, cfg.maxDownload))
	if err != nil {
		return nil, fmt.Errorf("--hub-url: %w", err)
	}
	return NewHubMoveLibraries(c, cache, log), nil
}

// config is the daemon's resolved configuration.
type config struct {
	sim                        simMode
	serialPort, hardwareConfig string
	busTimeout                 time.Duration
	wireless, wakeOnStart      bool
	startupApp                 string
	addr                       string
	dataDir, venvDir           string
	stopTimeout                time.Duration
	logLevel                   slog.Level
	token, hubURL, python      string
	tokenFile                  string // where the token came from, when it came from the data dir
	wheelDirs, allowedHosts    []string
	offline, systemSite        bool
	noAuth                     bool
	bodyTimeout                time.Duration
	indexURL, uv, hubToken     string
	extraIndexURLs             []string
	preloadMoves               []string
	maxDownload                int64 // bytes of one hub snapshot (--max-download-mib)
	noMDNS                     bool
	fleet                      fleetagent.Config
	release                    releaseConfig
	selfExec                   bool // Main: the daemon can exec the next release (launch, hand-over)
	appWebPort                 int  // 0: derived from the port the daemon listens on
	media                      mediaConfig
	face                       faceConfig
}

func configFrom(c *cli.Context, getenv func(string) string) (config, error) {
	cfg := config{
		sim: *c.Generic("sim").(*simMode), serialPort: c.String("serialport"), hardwareConfig: c.String("hardware-config"),
		busTimeout: c.Duration("bus-timeout"),
		wireless:   c.Bool("wireless-version"), wakeOnStart: !c.Bool("no-wake-up-on-start"),
		startupApp: strings.TrimSpace(c.String("startup-app")), stopTimeout: c.Duration("stop-timeout"),
		python: c.String("python"), wheelDirs: c.StringSlice("wheel-dir"), allowedHosts: c.StringSlice("allowed-host"),
	}
	cfg.offline, cfg.systemSite, cfg.noMDNS = c.Bool("offline"), c.Bool("system-site-packages"), c.Bool("no-mdns")
	mib := c.Int("max-download-mib")
	if mib < 1 {
		return cfg, fmt.Errorf("--max-download-mib: must be at least 1, got %d", mib)
	}
	cfg.maxDownload = int64(mib) << 20
	for _, d := range c.StringSlice("preload-moves") {
		if d = strings.TrimSpace(d); d != "" && d != "none" {
			if err := checkDatasetID(d); err != nil {
				return cfg, fmt.Errorf("--preload-moves: %w", err)
			}
			cfg.preloadMoves = append(cfg.preloadMoves, d)
		}
	}
	var err error
	if cfg.media, err = mediaConfigFrom(c, cfg.sim, cfg.hardwareConfig); err != nil {
		return cfg, err
	}
	if cfg.face, err = faceConfigFrom(c); err != nil {
		return cfg, err
	}
	cfg.indexURL, cfg.extraIndexURLs = strings.TrimSpace(c.String("index-url")), c.StringSlice("extra-index-url")
	switch c.String("installer") {
	case "pip":
	case "auto", "uv":
		if uv, err := exec.LookPath("uv"); err == nil {
			cfg.uv = uv
		} else if c.String("installer") == "uv" {
			return cfg, errors.New("--installer uv: uv is not on PATH")
		}
	default:
		return cfg, fmt.Errorf("--installer: %q is not one of auto, pip, uv", c.String("installer"))
	}
	if err := cfg.logLevel.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return cfg, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", c.String("log-level"))
	}
	if cfg.busTimeout < 0 || cfg.busTimeout > time.Second {
		return cfg, fmt.Errorf("--bus-timeout: want a duration from 0 to 1s, got %s", cfg.busTimeout)
	}
	if cfg.stopTimeout <= 0 {
		return cfg, fmt.Errorf("--stop-timeout: must be positive, got %s", cfg.stopTimeout)
	}
	if cfg.startupApp != "" && !apps.AppNamePattern().MatchString(cfg.startupApp) {
		return cfg, fmt.Errorf("--startup-app: %q is not an app name (letters, digits and underscores)", cfg.startupApp)
	}
	host := c.String("host")
	if host == "" {
		host = "127.0.0.1"
		if cfg.wireless {
			host = "0.0.0.0"
		}
	}
	port := c.Int("port")
	if port < 0 || port > 65535 {
		return cfg, fmt.Errorf("--port: %d is not a port number", port)
	}
	cfg.addr = net.JoinHostPort(host, strconv.Itoa(port))
	if cfg.appWebPort = c.Int("app-web-port"); cfg.appWebPort < 0 || cfg.appWebPort > 65535 {
		return cfg, fmt.Errorf("--app-web-port: %d is not a port number", cfg.appWebPort)
	}
	if cfg.bodyTimeout = c.Duration("body-timeout"); cfg.bodyTimeout <= 0 {
		return cfg, fmt.Errorf("--body-timeout: must be positive, got %s", cfg.bodyTimeout)
	}
	cfg.noAuth = c.Bool("no-auth")
	if cfg.noAuth && !loopbackHost(host) {
		return cfg, fmt.Errorf("--no-auth: refusing to listen on %s without authentication: anyone who reaches it could install code and move the robot; listen on 127.0.0.1 (--host) or drop --no-auth", host)
	}

	cfg.dataDir = c.String("data-dir")
	if cfg.dataDir == "" {
		switch {
		case cfg.wireless:
			cfg.dataDir = "/var/lib/robot-daemon"
		case getenv("XDG_STATE_HOME") != "":
			cfg.dataDir = filepath.Join(getenv("XDG_STATE_HOME"), "robot-daemon")
		case getenv("HOME") != "":
			cfg.dataDir = filepath.Join(getenv("HOME"), ".local", "state", "robot-daemon")
		default:
			return cfg, errors.New("--data-dir: no default without $HOME; pass --data-dir")
		}
	}
	cfg.venvDir = c.String("apps-venv")
	if cfg.venvDir == "" {
		cfg.venvDir = filepath.Join(cfg.dataDir, "apps_venv")
		if cfg.wireless {
			cfg.venvDir = wirelessAppsVenv
		}
	}
	cfg.token = strings.TrimSpace(c.String("token"))
	source := "--token"
	if cfg.token == "" {
		cfg.token, source = strings.TrimSpace(getenv("ROBOT_DAEMON_TOKEN")), "ROBOT_DAEMON_TOKEN"
	}
	// Apps, installs and package builds start with the daemon's environment: the owner's token
	// must not reach them (each app run gets a token of its own).
	_ = os.Unsetenv("ROBOT_DAEMON_TOKEN")
	if cfg.noAuth {
		cfg.token = "" // nothing to send: apps are not given one
	}
	if cfg.token != "" {
		if err := access.CheckTokenStrength(cfg.token, source); err != nil {
			return cfg, err
		}
	}
	cfg.hubURL = c.String("hub-url")
	if cfg.hubURL == "" {
		cfg.hubURL = getenv("HF_ENDPOINT")
	}
	if cfg.hubURL == "" {
		cfg.hubURL = "https://huggingface.co"
	}
	if cfg.hubURL == "none" {
		cfg.hubURL = ""
	}
	// The hub token reads private spaces (install-private-space); HF_TOKEN or the hub's token file.
	if hc, err := hub.ConfigFromEnv(getenv, cfg.hubURL, ""); err == nil {
		cfg.hubToken = hc.Token
	}
	if name, err := os.Hostname(); err == nil && name != "" {
		name = strings.ToLower(name)
		cfg.allowedHosts = append(cfg.allowedHosts, name, name+".local")
	}
	for i, h := range cfg.allowedHosts {
		cfg.allowedHosts[i] = strings.ToLower(strings.TrimSuffix(h, "."))
	}
	fleetCfg, err := fleetagent.ConfigFrom(c, getenv)
	if err != nil {
		return cfg, err
	}
	cfg.fleet = fleetCfg
	if cfg.release, err = releaseConfigFrom(c, getenv); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// appWebPort is the port of the running app's page: the flag's, else the daemon's port + 42 (the
// SDK's default 8042 beside the default 8000; 8043 beside a second daemon on 8001), or - 42 where
// + 42 is no port. One app runs at a time, so one port per daemon is enough.
func appWebPort(flag int, addr net.Addr) int {
	if flag != 0 {
		return flag
	}
	port := addr.(*net.TCPAddr).Port
	if port+42 <= 65535 {
		return port + 42
	}
	return port - 42
}

// appEnv is what the daemon puts into its apps' environment: its own URL when ROBOT_DAEMON_URL is
// unset (so an app finds a daemon on any port) and the port of its app's page (apps.AppWebPortEnv).
// The token is each run's own (SetAppCredentials); an app never gets the owner's token file's path
// either.
func appEnv(getenv func(string) string, addr net.Addr, webPort int) []string {
	env := []string{"ROBOT_DAEMON_TOKEN_FILE=", apps.AppWebPortEnv + "=" + strconv.Itoa(webPort)}
	if getenv("ROBOT_DAEMON_URL") == "" {
		host, port, _ := net.SplitHostPort(addr.String())
		if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
			host = "127.0.0.1" // a wildcard listener is reached on loopback from the same machine
		}
		env = append(env, "ROBOT_DAEMON_URL=http://"+net.JoinHostPort(host, port))
	}
	return env
}

// privateDataDir makes the data dir, or takes an existing one back, to mode 0700: it holds the
// owner's token, its socket, the hub token and the apps; nobody else has anything to read there.
func privateDataDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the data dir: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("the data dir: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			log.Warn("the data dir is open to other users and cannot be made private: the owner socket and token files still refuse them", "dir", dir, "mode", perm, "err", err)
		} else {
			log.Info("made the data dir private (0700)", "dir", dir, "was", perm)
		}
	}
	return nil
}

// sameDaemonURL reports whether the SDK's URL (empty: its default) reaches the listener at addr.
func sameDaemonURL(sdkURL string, addr net.Addr) bool {
	if sdkURL == "" {
		sdkURL = "http://127.0.0.1:8000"
	}
	_, port, _ := net.SplitHostPort(addr.String())
	u, err := url.Parse(sdkURL)
	return err == nil && u.Port() == port
}

func serve(ctx context.Context, cfg config, getenv func(string) string, stdout, stderr io.Writer) error {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	if err := notDumpable(); err != nil {
		log.Warn("could not make the daemon non-dumpable: processes of its user may read its environment through /proc", "err", err)
	}
	if err := privateDataDir(cfg.dataDir, log); err != nil {
		return err
	}
	ready := make(chan struct{})
	watchdogCtx, stopWatchdog := context.WithCancel(ctx)
	defer stopWatchdog()
	go watchdog(watchdogCtx, getenv, ready, log)
	// Before anything reads the data dir: a second daemon would take the first one's running app
	// for an orphan and stop it.
	lock, err := dirlock.Acquire(filepath.Join(cfg.dataDir, "robot-daemon.lock"), "robot-daemon")
	if err != nil {
		return err
	}
	defer lock.Release()

	if !cfg.noAuth && cfg.token == "" {
		token, path, created, err := access.LoadOrCreateToken(cfg.dataDir)
		if err != nil {
			return err
		}
		cfg.token, cfg.tokenFile = token, path
		log.Info("API token", "file", path, "created", created) // the path, never the token
	}

	// The port first: a port in use is said at once, not after the apps venv is built (15 s on a
	// first start). Connections wait in the listen queue until the server serves.
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%w: another program listens on %s; pick another port with --port (make run-daemon DAEMON_PORT=...)", err, cfg.addr)
		}
		return err
	}
	defer ln.Close()
	// The owner's socket now too: a client that connects while the apps venv is being built waits
	// in its queue, as on the TCP port.
	socketPath := filepath.Join(cfg.dataDir, access.SocketFileName)
	sock, err := access.ListenOwnerSocket(socketPath)
	if err != nil {
		socketPath = ""
		log.Warn("no owner socket: the daemon's user sends the token over TCP", "err", err)
	} else {
		defer sock.Close()
	}
	loopbackOnly := ln.Addr().(*net.TCPAddr).IP.IsLoopback()
	if cfg.noAuth && !loopbackOnly {
		return fmt.Errorf("--no-auth: refusing to listen on %s without authentication; listen on 127.0.0.1 or drop --no-auth", ln.Addr())
	}

	// The listener serves at once: while the motor bus is set up and the apps venv prepared
	// (seconds on a robot), the status says so rather than keep clients in the listen queue.
	guard := NewGuard(ServerConfig{Log: log.With("component", "http"), Token: cfg.token, NoAuth: cfg.noAuth,
		BodyTimeout: cfg.bodyTimeout, AllowedHosts: cfg.allowedHosts})
	sdkVersion := python.SDKVersion(version.String(), pysdk.Files)
	boot := NewStarting(guard, StartingInfo{Version: version.String(), SDKVersion: sdkVersion, Backend: backendName(cfg),
		AppsVenv: cfg.venvDir, Sim: cfg.sim != "", Wireless: cfg.wireless, LoopbackOnly: loopbackOnly, DataDir: cfg.dataDir})
	srv := &http.Server{
		Handler:           boot,
		ConnContext:       boot.ConnContext,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 2)
	go func() { served <- srv.Serve(boot.Listener(ln)) }()
	if sock != nil {
		go func() { served <- srv.Serve(boot.OwnerListener(sock)) }()
	}
	defer srv.Close() // a start that fails stops serving; after a start, Shutdown below drains first

	boot.Step(backendStep(cfg))
	backend, closeBackend, err := openBackend(cfg, log)
	if err != nil {
		return err
	}
	defer closeBackend()
	devices := openMedia(cfg.media, cfg.wireless, backend, log.With("component", "media"))
	defer devices.media.Close() // after the robot's loop has stopped
	layout := release.Layout{Dir: filepath.Join(cfg.dataDir, "releases")}
	resumed := layout.Resumable(version.String(), time.Now())
	var rb *robot.Robot
	var tookOver time.Time
	h, adopted := handedOver(resumed, log)
	if adopted {
		rb = robot.Adopt(backend, h.Robot, log.With("component", "robot"))
		tookOver = time.Now()
		log.Info("took the robot over from the previous daemon", "update", resumed.ID, "awake", h.Robot.Awake, "mode", h.Robot.Mode,
			"motors_without_daemon", tookOver.Sub(resumed.Released))
	} else {
		rb = robot.New(backend, log.With("component", "robot"))
	}
	rb.UseMedia(devices)
	defer rb.Close()

	wheelDirs := cfg.wheelDirs
	if len(wheelDirs) == 0 {
		wheelDirs = []string{"/usr/share/python-wheels"}
	}
	venv := &python.Venv{Dir: cfg.venvDir, BasePython: cfg.python, SystemSitePackages: cfg.systemSite, StateDir: cfg.dataDir,
		Source: python.Source{Offline: cfg.offline, IndexURL: cfg.indexURL, ExtraIndexURLs: cfg.extraIndexURLs,
			UV: cfg.uv, WheelDirs: wheelDirs}}
	mgr, err := apps.NewManager(apps.Config{
		DataDir: cfg.dataDir, Toolchain: venv,
		StopTimeout: cfg.stopTimeout, SDK: pysdk.Files, SDKVersion: sdkVersion, HubURL: cfg.hubURL,
		HubToken:   cfg.hubToken,
		HTTPClient: &http.Client{Timeout: 30 * time.Second}, Robot: rb, StartupApp: cfg.startupApp,
		Log: log.With("component", "apps"),
	})
	if err != nil {
		return err
	}
	// Before the apps are listed (their pages' port) and before serving: an app started by the
	// first request must already get the daemon's URL.
	mgr.SetAppEnv(appEnv(getenv, ln.Addr(), appWebPort(cfg.appWebPort, ln.Addr()))...)
	boot.Step("preparing the apps venv " + cfg.venvDir)
	prepCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	err = mgr.Prepare(prepCtx)
	cancel()
	if err != nil {
		return fmt.Errorf("preparing the apps venv %s: %w", cfg.venvDir, err)
	}

	boot.Step("starting the API")
	handovers := make(chan *release.Record, 1)
	updater, err := newUpdater(cfg, layout, handovers, log.With("component", "update"))
	if err != nil {
		return err
	}
	leaveFleet := func() {}
	if cfg.fleet.Enabled() {
		leave, err := fleetagent.Start(ctx, cfg.fleet, mgr, fleetReleases(cfg, updater), cfg.hubURL, cfg.hubToken, log)
		if err != nil {
			ln.Close()
			return err
		}
		leaveFleet = sync.OnceFunc(leave)
		defer leaveFleet()
	}

	// Apps on the robot read frames and sound from a unix socket, with no encoding.
	var mediaSocket string
	if sock, err := media.ListenSocket(devices.media, filepath.Join(cfg.dataDir, "media.sock"),
		media.SocketOptions{Allow: mediaSocketPeer, Play: rb.PushAudio}, log.With("component", "media")); err != nil {
		log.Warn("no local media socket: apps get frames and sound over HTTP", "err", err)
	} else {
		defer sock.Close()
		mediaSocket = sock.Path()
	}
	rtc, err := media.NewWebRTC(devices.media, loopbackOnly, log.With("component", "webrtc"))
	if err != nil {
		ln.Close()
		return fmt.Errorf("webrtc: %w", err)
	}
	defer rtc.Close()
	done := make(chan struct{})
	rb.SetDetector(nil, "the face detector is still loading (ONNX Runtime and the face model)")
	faceCtx, stopFace := context.WithCancel(ctx)
	defer stopFace()
	go loadFaceDetector(faceCtx, cfg, getenv, rb, log.With("component", "facedetect"))
	moves, err := moveLibraries(cfg, log.With("component", "moves"))
	if err != nil {
		ln.Close()
		return err
	}
	moves.Preload(ctx, cfg.preloadMoves)
	handler := NewServer(ServerConfig{Updater: updater,
		MoveLibraries: moves, Apps: ManagerApps(mgr), Robot: rb, Log: log.With("component", "http"), Token: cfg.token, NoAuth: cfg.noAuth, BodyTimeout: cfg.bodyTimeout,
		AllowedHosts: cfg.allowedHosts, Version: version.String(), Wireless: cfg.wireless, Done: done,
		LoopbackOnly: loopbackOnly, DataDir: cfg.dataDir, HubURL: cfg.hubURL, Sim: cfg.sim != "",
		Media: devices.media, SoundsDir: filepath.Join(cfg.dataDir, "sounds"), MediaSocket: mediaSocket, WebRTC: rtc,
		Access: guard,
	})
	// Before the first request reaches the API: an app it starts gets a token of its own (robot
	// and media only: access.AppScopes), never the owner's.
	if !cfg.noAuth {
		mgr.SetAppCredentials(func(app string) ([]string, func()) {
			token, revoke := handler.MintAppToken(app)
			return []string{"ROBOT_DAEMON_TOKEN=" + token}, revoke
		})
	}
	boot.Ready(handler)
	listenURL := "http://" + ln.Addr().String()
	log.Info("robot daemon listening", "url", listenURL, "socket", socketPath, "version", version.String(), "sdk", mgr.SDKVersion(),
		"backend", rb.BackendName(), "apps_venv", cfg.venvDir, "data_dir", cfg.dataDir, "auth", !cfg.noAuth)
	fmt.Fprintf(stdout, "robot-daemon listening on %s\n", listenURL)
	if socketPath != "" {
		fmt.Fprintf(stdout, "owner socket (this user and root, no token): curl --unix-socket %s http://localhost/api/daemon/status\n", socketPath)
	}
	printLogin(stdout, getenv, cfg, ln.Addr())
	if appURL := getenv("ROBOT_DAEMON_URL"); appURL != "" && !sameDaemonURL(appURL, ln.Addr()) {
		log.Warn("apps will not reach this daemon: ROBOT_DAEMON_URL, which they inherit, names another port",
			"ROBOT_DAEMON_URL", appURL, "listening", listenURL)
	}
	if !loopbackOnly && !cfg.noMDNS {
		adv, host, err := advertise(handler.daemonAPI.RobotName(), ln.Addr().(*net.TCPAddr), log.With("component", "mdns"))
		if err != nil {
			log.Warn("not announced on the local network (mDNS): scripts elsewhere need ROBOT_DAEMON_URL", "err", err)
		} else {
			defer adv.Close()
			log.Info("announced on the local network (mDNS)", "host", host, "service", MDNSService)
		}
	}
	if err := sdNotify(getenv, "READY=1"); err != nil {
		log.Warn("notifying systemd", "err", err)
	}
	close(ready)

	startupCtx, stopStartup := context.WithCancel(ctx)
	defer stopStartup()
	if resumed != nil {
		go resume(startupCtx, layout, resumed, adopted, tookOver, mgr, log.With("component", "update"))
	}
	if !adopted {
		go mgr.RunStartup(startupCtx, cfg.wakeOnStart)
	}

	var handover *release.Record
	select {
	case <-ctx.Done():
	case err := <-served:
		return err
	case handover = <-handovers:
		log.Info("handing over to the new release", "version", handover.To)
		handover.App = runningApp(mgr)
	}
	log.Info("shutting down")
	hurry, stopHurry := nextSignal() // a second Ctrl-C skips the robot's sleep move
	defer stopHurry()
	_ = sdNotify(getenv, "STOPPING=1")
	stopStartup()
	mgr.Close() // the API stays up while the app stops, so its SDK calls still work
	close(done)
	shutdownCtx, cancelShutdown := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelShutdown()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Warn("closing connections", "err", err)
	}
	if handover != nil {
		// What takes time goes before the robot stops: the motors are without a daemon from then
		// until the next one takes them over.
		leaveFleet()
		return handOver(layout, handover, rb, log)
	}
	// Nothing moves the robot now: lay it down before its motors let go, as the public daemon does.
	if _, err := rb.Shutdown(hurry); err != nil {
		log.Warn("closing the robot", "err", err)
	}
	return nil
}

// backendName is the name the robot's backend will have (robot.Backend's Name), for the status of
// a daemon that is still opening it.
func backendName(cfg config) string {
	switch cfg.sim {
	case "sim":
		return "sim"
	case "bus":
		return "emulated-bus"
	}
	return "hardware"
}

// backendStep says what opening cfg's backend does, for the status of a starting daemon.
func backendStep(cfg config) string {
	switch {
	case cfg.sim == "sim":
		return "starting the simulated robot"
	case cfg.sim == "bus":
		return "setting up the motor bus (the emulator on a pty)"
	case cfg.serialPort != "":
		return "setting up the motor bus on " + cfg.serialPort
	}
	return "setting up the motor bus"
}

// loopbackHost reports whether a --host names loopback only.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// printLogin tells the daemon's user how to open the dashboard from another machine or user: a
// login link, on stdout only (the terminal of whoever started the daemon, never the log). Under
// systemd stdout is the journal, which other users may read: the link is not printed there, only
// where the token is.
func printLogin(stdout io.Writer, getenv func(string) string, cfg config, addr net.Addr) {
	if cfg.noAuth {
		fmt.Fprintln(stdout, "authentication is off (--no-auth): every local user can use the API")
		return
	}
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if name, err := os.Hostname(); err == nil && name != "" {
			host = strings.ToLower(name) + ".local"
		}
	}
	base := "http://" + net.JoinHostPort(host, port) + "/login"
	if getenv("JOURNAL_STREAM") != "" {
		where := "the token given to the daemon (--token or ROBOT_DAEMON_TOKEN)"
		if cfg.tokenFile != "" {
			where = "the token in " + cfg.tokenFile
		}
		fmt.Fprintf(stdout, "dashboard login: open %s and paste %s\n", base, where)
		return
	}
	fmt.Fprintf(stdout, "dashboard login (keep this link private: it holds the API token): %s?token=%s\n", base, url.QueryEscape(cfg.token))
}
