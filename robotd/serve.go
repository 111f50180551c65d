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
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/robothub/robothub/adapters/hardware/media"
	"github.com/robothub/robothub/adapters/python"
	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/release"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/core/version"
	"github.com/robothub/robothub/internal/dirlock"
	"github.com/robothub/robothub/robotd/access"
	"github.com/robothub/robothub/robotd/fleetagent"
	"github.com/robothub/robothub/robotd/pysdk"
)

// moveLibraries are the move libraries of the daemon's hub (none with --hub-url none), cached in
// <data-dir>/datasets.
func moveLibraries(cfg Config, log *slog.Logger) (*HubMoveLibraries, error) {
	cache := filepath.Join(cfg.DataDir, "datasets")
	if cfg.HubURL == "" {
		return NewHubMoveLibraries(nil, cache, log), nil
	}
	c, err := hub.New(cfg.HubURL, hub.WithToken(cfg.HubToken), hub.WithLogger(log), hub.WithUserAgent("robot-daemon/"+version.String()),
		hub.WithDownloadCaps(0, cfg.MaxDownloadBytes))
	if err != nil {
		return nil, fmt.Errorf("--hub-url: %w", err)
	}
	return NewHubMoveLibraries(c, cache, log), nil
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

// Serve runs the daemon cfg describes until ctx is done, and returns once the robot is laid down
// and its motors let go. getenv reads the environment (nil: os.Getenv: systemd's NOTIFY_SOCKET and
// watchdog, ROBOT_DAEMON_URL, JOURNAL_STREAM, ORT_DYLIB_PATH); the daemon prints how to reach it to
// stdout and logs to stderr. A daemon served this way (in process, by robothub dev and tests)
// cannot update itself: ServeUpdating can.
func Serve(ctx context.Context, cfg Config, getenv func(string) string, stdout, stderr io.Writer) error {
	return serve(ctx, cfg, false, getenv, stdout, stderr)
}

// serve is Serve; with selfExec (ServeUpdating) the daemon can hand over to the next release.
func serve(ctx context.Context, cfg Config, selfExec bool, getenv func(string) string, stdout, stderr io.Writer) error {
	// Apps, installs and package builds start with the daemon's environment: the owner's token
	// must not reach them (each app run gets a token of its own).
	_ = os.Unsetenv("ROBOT_DAEMON_TOKEN")
	if getenv == nil {
		getenv = os.Getenv
	}
	cfg, err := cfg.resolved()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	if err := notDumpable(); err != nil {
		log.Warn("could not make the daemon non-dumpable: processes of its user may read its environment through /proc", "err", err)
	}
	if err := privateDataDir(cfg.DataDir, log); err != nil {
		return err
	}
	ready := make(chan struct{})
	watchdogCtx, stopWatchdog := context.WithCancel(ctx)
	defer stopWatchdog()
	go watchdog(watchdogCtx, getenv, ready, log)
	// Before anything reads the data dir: a second daemon would take the first one's running app
	// for an orphan and stop it.
	lock, err := dirlock.Acquire(filepath.Join(cfg.DataDir, "robot-daemon.lock"), "robot-daemon")
	if err != nil {
		return err
	}
	defer lock.Release()

	tokenFile := "" // where the token came from, when it came from the data dir
	if !cfg.NoAuth && cfg.Token == "" {
		token, path, created, err := access.LoadOrCreateToken(cfg.DataDir)
		if err != nil {
			return err
		}
		cfg.Token, tokenFile = token, path
		log.Info("API token", "file", path, "created", created) // the path, never the token
	}

	// The port first: a port in use is said at once, not after the apps venv is built (15 s on a
	// first start). Connections wait in the listen queue until the server serves.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%w: another program listens on %s; pick another port with --port (make run-daemon DAEMON_PORT=...)", err, cfg.Addr)
		}
		return err
	}
	defer ln.Close()
	// The owner's socket now too: a client that connects while the apps venv is being built waits
	// in its queue, as on the TCP port.
	socketPath := filepath.Join(cfg.DataDir, access.SocketFileName)
	sock, err := access.ListenOwnerSocket(socketPath)
	if err != nil {
		socketPath = ""
		log.Warn("no owner socket: the daemon's user sends the token over TCP", "err", err)
	} else {
		defer sock.Close()
	}
	loopbackOnly := ln.Addr().(*net.TCPAddr).IP.IsLoopback()
	if cfg.NoAuth && !loopbackOnly {
		return fmt.Errorf("--no-auth: refusing to listen on %s without authentication; listen on 127.0.0.1 or drop --no-auth", ln.Addr())
	}

	// The listener serves at once: while the motor bus is set up and the apps venv prepared
	// (seconds on a robot), the status says so rather than keep clients in the listen queue.
	guard := NewGuard(ServerConfig{Log: log.With("component", "http"), Token: cfg.Token, NoAuth: cfg.NoAuth,
		BodyTimeout: cfg.BodyTimeout, AllowedHosts: cfg.AllowedHosts})
	sdkVersion := python.SDKVersion(version.String(), pysdk.Files)
	boot := NewStarting(guard, StartingInfo{Version: version.String(), SDKVersion: sdkVersion, Backend: backendName(cfg),
		AppsVenv: cfg.AppsVenv, Sim: cfg.Sim != SimNone, Wireless: cfg.Wireless, LoopbackOnly: loopbackOnly, DataDir: cfg.DataDir})
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
	devices := openMedia(cfg.Media, cfg.Wireless, backend, log.With("component", "media"))
	defer devices.media.Close() // after the robot's loop has stopped
	layout := release.Layout{Dir: filepath.Join(cfg.DataDir, "releases")}
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

	venv := &python.Venv{Dir: cfg.AppsVenv, BasePython: cfg.Python, SystemSitePackages: cfg.SystemSitePackages, StateDir: cfg.DataDir,
		Source: python.Source{Offline: cfg.Offline, IndexURL: cfg.IndexURL, ExtraIndexURLs: cfg.ExtraIndexURLs,
			UV: cfg.UV, WheelDirs: cfg.WheelDirs}}
	mgr, err := apps.NewManager(apps.Config{
		DataDir: cfg.DataDir, Toolchain: venv,
		StopTimeout: cfg.StopTimeout, SDK: pysdk.Files, SDKVersion: sdkVersion, HubURL: cfg.HubURL,
		HubToken:   cfg.HubToken,
		HTTPClient: &http.Client{Timeout: 30 * time.Second}, Robot: rb, StartupApp: cfg.StartupApp,
		Log: log.With("component", "apps"),
	})
	if err != nil {
		return err
	}
	// Before the apps are listed (their pages' port) and before serving: an app started by the
	// first request must already get the daemon's URL.
	mgr.SetAppEnv(appEnv(getenv, ln.Addr(), appWebPort(cfg.AppWebPort, ln.Addr()))...)
	boot.Step("preparing the apps venv " + cfg.AppsVenv)
	prepCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	err = mgr.Prepare(prepCtx)
	cancel()
	if err != nil {
		return fmt.Errorf("preparing the apps venv %s: %w", cfg.AppsVenv, err)
	}

	boot.Step("starting the API")
	handovers := make(chan *release.Record, 1)
	updater, err := newUpdater(cfg, selfExec, layout, handovers, log.With("component", "update"))
	if err != nil {
		return err
	}
	leaveFleet := func() {}
	if cfg.Fleet.Enabled() {
		leave, err := fleetagent.Start(ctx, cfg.Fleet, mgr, fleetReleases(cfg, selfExec, updater), cfg.HubURL, cfg.HubToken, log)
		if err != nil {
			ln.Close()
			return err
		}
		leaveFleet = sync.OnceFunc(leave)
		defer leaveFleet()
	}

	// Apps on the robot read frames and sound from a unix socket, with no encoding.
	var mediaSocket string
	if sock, err := media.ListenSocket(devices.media, filepath.Join(cfg.DataDir, "media.sock"),
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
	moves.Preload(ctx, cfg.PreloadMoves)
	handler := NewServer(ServerConfig{Updater: updater,
		MoveLibraries: moves, Apps: ManagerApps(mgr), Robot: rb, Log: log.With("component", "http"), Token: cfg.Token, NoAuth: cfg.NoAuth, BodyTimeout: cfg.BodyTimeout,
		AllowedHosts: cfg.AllowedHosts, Version: version.String(), Wireless: cfg.Wireless, Done: done,
		LoopbackOnly: loopbackOnly, DataDir: cfg.DataDir, HubURL: cfg.HubURL, Sim: cfg.Sim != SimNone,
		Media: devices.media, SoundsDir: filepath.Join(cfg.DataDir, "sounds"), MediaSocket: mediaSocket, WebRTC: rtc,
		Access: guard,
	})
	// Before the first request reaches the API: an app it starts gets a token of its own (robot
	// and media only: access.AppScopes), never the owner's.
	if !cfg.NoAuth {
		mgr.SetAppCredentials(func(app string) ([]string, func()) {
			token, revoke := handler.MintAppToken(app)
			return []string{"ROBOT_DAEMON_TOKEN=" + token}, revoke
		})
	}
	boot.Ready(handler)
	listenURL := "http://" + ln.Addr().String()
	log.Info("robot daemon listening", "url", listenURL, "socket", socketPath, "version", version.String(), "sdk", mgr.SDKVersion(),
		"backend", rb.BackendName(), "apps_venv", cfg.AppsVenv, "data_dir", cfg.DataDir, "auth", !cfg.NoAuth)
	fmt.Fprintf(stdout, "robot-daemon listening on %s\n", listenURL)
	if socketPath != "" {
		fmt.Fprintf(stdout, "owner socket (this user and root, no token): curl --unix-socket %s http://localhost/api/daemon/status\n", socketPath)
	}
	printLogin(stdout, getenv, cfg, tokenFile, ln.Addr())
	if appURL := getenv("ROBOT_DAEMON_URL"); appURL != "" && !sameDaemonURL(appURL, ln.Addr()) {
		log.Warn("apps will not reach this daemon: ROBOT_DAEMON_URL, which they inherit, names another port",
			"ROBOT_DAEMON_URL", appURL, "listening", listenURL)
	}
	if !loopbackOnly && !cfg.NoMDNS {
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
		go mgr.RunStartup(startupCtx, !cfg.NoWakeUpOnStart)
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
func backendName(cfg Config) string {
	switch cfg.Sim {
	case SimRobot:
		return "sim"
	case SimBus:
		return "emulated-bus"
	}
	return "hardware"
}

// backendStep says what opening cfg's backend does, for the status of a starting daemon.
func backendStep(cfg Config) string {
	switch {
	case cfg.Sim == SimRobot:
		return "starting the simulated robot"
	case cfg.Sim == SimBus:
		return "setting up the motor bus (the emulator on a pty)"
	case cfg.SerialPort != "":
		return "setting up the motor bus on " + cfg.SerialPort
	}
	return "setting up the motor bus"
}

// printLogin tells the daemon's user how to open the dashboard from another machine or user: a
// login link, on stdout only (the terminal of whoever started the daemon, never the log). Under
// systemd stdout is the journal, which other users may read: the link is not printed there, only
// where the token is.
func printLogin(stdout io.Writer, getenv func(string) string, cfg Config, tokenFile string, addr net.Addr) {
	if cfg.NoAuth {
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
		if tokenFile != "" {
			where = "the token in " + tokenFile
		}
		fmt.Fprintf(stdout, "dashboard login: open %s and paste %s\n", base, where)
		return
	}
	fmt.Fprintf(stdout, "dashboard login (keep this link private: it holds the API token): %s?token=%s\n", base, url.QueryEscape(cfg.Token))
}
