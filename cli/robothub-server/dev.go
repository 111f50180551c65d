package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/robothub/robothub/adapters/mqtt"
	"github.com/robothub/robothub/adapters/mqtt/broker"
	"github.com/robothub/robothub/adapters/nethttp"
	"github.com/robothub/robothub/cli/cliapp"
	"github.com/robothub/robothub/cli/robothub-server/hubcmd"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/actions"
	"github.com/robothub/robothub/internal/daemonclient"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/delivery"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// The routes robothub dev serves on its receiver.
const (
	devUpdateRoute = "robot-update"
	devFleetRoute  = "fleet"
	devLogRoute    = "log"
	devUser        = "local"
	devRobotID     = "robot-1"
	// DefaultBrokerAddr is where robothub dev's embedded MQTT broker listens.
	DefaultBrokerAddr = "127.0.0.1:1883"
)

func devCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "dev",
		Usage: cliapp.RobothubUsageOf("dev"),
		UsageText: `robothub dev [--data-dir DIR] [--hub-addr 127.0.0.1:7861] [--receiver-addr 127.0.0.1:7860] [--daemon-port 8000] [--broker-addr 127.0.0.1:1883]

Starts, in one process:
  the local hub       the webhook management API, event delivery, and spaces as git repositories
  an MQTT broker      the fleet's (mochi-mqtt, in memory, loopback only, a generated password)
  a webhook receiver  with a fleet route (and robot-update and log routes)
  robot-daemon --sim  the simulated robot robot-1, in the fleet, its apps, its dashboard
and wires them: a webhook on the hub watches the user's repositories (domain repo) and delivers to the
receiver, whose fleet route announces a push to a space on the broker; every robot of the fleet with
an app of that space (robot-1, and any robot-daemon --fleet mqtt://127.0.0.1:1883 you start) reinstalls
and restarts it. So robot-app-assistant publish (or git push to the space) updates the app on the robots.

State (the hub's database and spaces, the robot's apps venv and installed apps, the webhook secret,
the hub token and the broker's password, DIR/broker-password) is kept in DIR and survives restarts.
The robot daemon's owner socket is DIR/robot/daemon.sock (curl --unix-socket; no token), its token
DIR/robot/api-token. Ctrl-C stops everything.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "data-dir", Usage: "keep all state in `DIR` (default $XDG_DATA_HOME/robothub/dev or ~/.local/share/robothub/dev)"},
			&cli.StringFlag{Name: "hub-addr", Value: hubcmd.DefaultAddr, Usage: "the local hub listens on `ADDRESS`"},
			&cli.StringFlag{Name: "receiver-addr", Value: nethttp.DefaultAddr, Usage: "the receiver listens on `ADDRESS`"},
			&cli.StringFlag{Name: "broker-addr", Value: DefaultBrokerAddr, Usage: "the embedded MQTT broker listens on `ADDRESS` (loopback only)"},
			&cli.IntFlag{Name: "daemon-port", Value: 8000, Usage: "the robot daemon listens on 127.0.0.1:`PORT` (apps reach it through $ROBOT_DAEMON_URL)"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "log level: debug, info, warn, error"},
			&cli.StringFlag{Name: "python", Value: "python3", Usage: "the interpreter that creates the robot's apps venv"},
			&cli.BoolFlag{Name: "system-site-packages", Usage: "let apps use the system's Python packages (the SDK's numpy, scipy, FastAPI from apt)"},
			&cli.IntFlag{Name: "app-web-port", Usage: "the port of the running app's web page, in place of the SDK's default 8042 (default: --daemon-port + 42)"},
		},
		OnUsageError: onUsageError,
		Action:       func(c *cli.Context) error { return runDev(c, e) },
	}
}

func runDev(c *cli.Context, e *env) error {
	if c.NArg() > 0 {
		return usagef("dev takes no arguments, got %q", c.Args().Slice())
	}
	if err := devSupported(); err != nil {
		return err
	}
	logger, err := cliapp.NewLogger(e.stderr, "text", c.String("log-level"))
	if err != nil {
		return err
	}
	dir := c.String("data-dir")
	if dir == "" {
		dir = filepath.Join(filepath.Dir(hubcmd.DefaultDataDir(e.getenv)), "dev")
	}
	// Absolute: the banner's export lines must work from any directory (HF_TOKEN_PATH was relative).
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	for _, d := range []string{dir, filepath.Join(dir, "hub"), filepath.Join(dir, "robot")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return cli.Exit(fmt.Sprintf("dev: creating the data directory: %v", err), exitError)
		}
	}
	hubDB := filepath.Join(dir, "hub", "hub.db")
	lock, err := hubcmd.LockDatabase(hubDB)
	if err != nil {
		return cli.Exit("dev: "+err.Error(), exitError)
	}
	defer lock.Release()
	secret, err := devSecret(e.getenv, filepath.Join(dir, "webhook-secret"))
	if err != nil {
		return cli.Exit(fmt.Sprintf("dev: %v", err), exitError)
	}
	// The broker takes only clients with this password: another local user could otherwise publish
	// a robot's status (and fleet wait would believe it) or announce revisions to the robots.
	passwordFile := filepath.Join(dir, DevBrokerPasswordFile)
	brokerPassword, err := privateSecret(passwordFile)
	if err != nil {
		return cli.Exit(fmt.Sprintf("dev: the broker's password: %v", err), exitError)
	}
	robotDir := filepath.Join(dir, "robot")
	// The daemon's owner token, made now (the daemon reads the same file) so that the receiver's
	// robot-update route can send it: over TCP every request needs it.
	daemonToken, err := devDaemonToken(robotDir)
	if err != nil {
		return cli.Exit(fmt.Sprintf("dev: the robot daemon's token: %v", err), exitError)
	}

	// Listen first, so that a port in use is reported before anything starts.
	viaMake := e.getenv(devMakeEnv) == "1"
	hubLn, err := net.Listen("tcp", c.String("hub-addr"))
	if err != nil {
		return cli.Exit("dev: "+devListenError(viaMake, "the local hub", c.String("hub-addr"), "--hub-addr", err), exitError)
	}
	defer hubLn.Close()
	recvLn, err := net.Listen("tcp", c.String("receiver-addr"))
	if err != nil {
		return cli.Exit("dev: "+devListenError(viaMake, "the receiver", c.String("receiver-addr"), "--receiver-addr", err), exitError)
	}
	defer recvLn.Close()
	brk, err := broker.Start(c.String("broker-addr"), brokerPassword, logger.With("component", "broker"))
	if err != nil {
		return cli.Exit("dev: "+devListenError(viaMake, "the MQTT broker", c.String("broker-addr"), "--broker-addr", err), exitError)
	}
	defer brk.Close()
	port := c.Int("daemon-port")
	daemonURL := "http://127.0.0.1:" + strconv.Itoa(port)
	if probe, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err != nil {
		return cli.Exit("dev: "+devListenError(viaMake, "the robot daemon", "127.0.0.1:"+strconv.Itoa(port), "--daemon-port", err), exitError)
	} else {
		probe.Close()
	}
	// Apps inherit the daemon's environment and find it through ROBOT_DAEMON_URL.
	if os.Getenv("ROBOT_DAEMON_URL") != daemonURL {
		os.Setenv("ROBOT_DAEMON_URL", daemonURL)
	}

	hubURL := "http://" + hubLn.Addr().String()
	recvURL := "http://" + recvLn.Addr().String()
	hookURL := recvURL + webhook.RoutePrefix + devFleetRoute

	// dev is one user's development loop: job webhooks are on (hub serve needs --allow-jobs), and
	// the process is non-dumpable so that a job cannot read its environment through /proc.
	if err := delivery.Harden(); err != nil {
		logger.Warn("could not make the process non-dumpable: a job may read its environment through /proc", "err", err)
	}
	emu, err := localhub.Open(c.Context, localhub.Config{
		DSN: hubDB, PublicURL: hubURL, Logger: logger.With("component", "hub"), AllowJobs: true,
		// Deliveries reach this machine's receiver and nothing else of it (not the daemon).
		AllowDeliveryTo: []string{recvLn.Addr().String()},
		Delivery:        delivery.Policy{Timeout: 30 * time.Second, MaxAttempts: 8, BaseDelay: time.Second, MaxDelay: time.Minute},
	})
	if err != nil {
		return cli.Exit(fmt.Sprintf("dev: opening the local hub: %v", err), exitError)
	}
	defer emu.Close()
	boot, err := emu.Bootstrap(c.Context, hubemu.BootstrapConfig{
		User: devUser, WebhookURL: hookURL, WebhookSecret: secret,
		Watched: []hub.WatchedItem{{Type: "user", Name: devUser}}, Domains: []string{"repo"},
		// The webhook of an earlier run on other ports, or of a robothub before fleets, whose
		// webhook went to the robot-update route.
		Replaces: hubcmd.SameLocalRoute(hookURL, recvURL+webhook.RoutePrefix+devUpdateRoute),
	})
	if err != nil {
		return cli.Exit(fmt.Sprintf("dev: setting up the local hub: %v", err), exitError)
	}
	if boot.MovedFrom != "" || boot.Removed > 0 {
		logger.Info("the webhook of an earlier run now delivers to this receiver", "webhook", boot.Webhook.ID, "was", boot.MovedFrom,
			"now", hookURL, "duplicates removed", boot.Removed)
	}
	tokenFile := filepath.Join(dir, "hub", "token")
	if boot.Token != "" {
		if err := hubcmd.WriteTokenFile(tokenFile, boot.Token); err != nil {
			return cli.Exit(fmt.Sprintf("dev: saving the hub token: %v", err), exitError)
		}
	}

	recv := webhook.NewServer(webhook.WithSecret(secret), webhook.WithLogger(logger.With("component", "receiver")))
	builder := actions.NewBuilder(actions.Config{Logger: logger.With("component", "receiver"), Output: e.stdout,
		FleetDialers: mqtt.FleetDialers(), RobotUpdate: actions.RobotUpdate, DaemonToken: daemonToken, Getenv: func(k string) string {
			if k == actions.FleetPasswordEnv {
				return brokerPassword
			}
			return e.getenv(k)
		}})
	defer builder.Close(context.Background())
	if err := builder.Register(recv, []actions.Route{
		{Name: devFleetRoute, Action: "fleet:" + brk.URL()},
		{Name: devUpdateRoute, Action: "robot-update:" + daemonURL},
		{Name: devLogRoute, Action: "log"},
	}); err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	type result struct {
		part string
		err  error
	}
	results := make(chan result, 4)
	running := 0
	goPart := func(part string, run func() error) {
		running++
		go func() { results <- result{part, run()} }()
	}

	hubSrv := &http.Server{Handler: emu.Handler(), ReadHeaderTimeout: hubemu.DefaultReadHeaderTimeout,
		ReadTimeout: hubemu.DefaultReadTimeout, IdleTimeout: hubemu.DefaultIdleTimeout}
	goPart("local hub", func() error {
		if err := hubSrv.Serve(hubLn); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	goPart("hub deliveries", func() error { return emu.Run(ctx) })
	goPart("receiver", func() error {
		return nethttp.Serve(ctx, recvLn, recv, nethttp.Options{Getenv: e.getenv, Logger: logger.With("component", "receiver"), Out: io.Discard})
	})
	goPart("robot daemon", func() error {
		// dev starts the daemon through robot-daemon's own command line (robotdaemon.Run), not a
		// robotd.Config of its own: the daemon dev runs is then exactly the one `robot-daemon --sim
		// --fleet ...` starts, with the command's defaults, checks and variables (the fleet's
		// password file, HF_TOKEN), and the command line dev prints for more robots stays true.
		args := []string{"robot-daemon", "--sim", "--port", strconv.Itoa(port),
			"--data-dir", robotDir, "--hub-url", hubURL, "--log-level", c.String("log-level"), "--python", c.String("python"),
			"--fleet", brk.URL(), "--fleet-id", devRobotID, "--fleet-password-file", passwordFile}
		if c.Bool("system-site-packages") {
			args = append(args, "--system-site-packages")
		}
		if c.IsSet("app-web-port") {
			args = append(args, "--app-web-port", strconv.Itoa(c.Int("app-web-port")))
		}
		return runRobotDaemon(ctx, args, e.getenv, e.stdout, e.stderr)
	})

	ready := make(chan error, 1)
	go func() {
		if err := waitHealthy(ctx, hubURL+"/healthz", recvURL+"/healthz"); err != nil {
			ready <- err
			return
		}
		ready <- waitDaemon(ctx, daemonclient.New(daemonURL, daemonclient.Options{Token: daemonToken, HTTPClient: &http.Client{Timeout: 2 * time.Second}}))
	}()
	var failure error
	select {
	case err := <-ready:
		if err == nil {
			// The same interpreter for robot-app-assistant's checks as for the robot's apps: without a
			// package index, the system's (the flags dev was given).
			var pyFlags string
			if c.Bool("system-site-packages") {
				pyFlags = " --python " + c.String("python") + " --system-site-packages"
			}
			printDevSummary(e.stdout, dir, hubURL, recvURL, daemonURL, hookURL, brk.URL(), tokenFile, pyFlags, boot)
		}
	case r := <-results:
		running--
		failure = fmt.Errorf("%s stopped: %v", r.part, r.err)
	}
	if failure == nil {
		select {
		case <-ctx.Done():
		case r := <-results:
			running--
			failure = fmt.Errorf("%s stopped: %v", r.part, r.err)
		}
	}
	cancel()
	shutdown, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	_ = hubSrv.Shutdown(shutdown)
	for ; running > 0; running-- {
		select {
		case r := <-results:
			if r.err != nil && failure == nil && !errors.Is(r.err, context.Canceled) {
				failure = fmt.Errorf("%s: %v", r.part, r.err)
			}
		case <-shutdown.Done():
			return cli.Exit("dev: not everything stopped within 30s", exitError)
		}
	}
	if failure != nil {
		return cli.Exit("dev: "+failure.Error(), exitError)
	}
	fmt.Fprintln(e.stdout, "robothub dev stopped.")
	return nil
}

// devMakeEnv is set by make run: a busy port is then named by make's variable (HUB_PORT=...), the
// way its user gave it, rather than by the flag make passed.
const devMakeEnv = "ROBOTHUB_DEV_MAKE"

// makeVars are make run's variables for dev's address flags.
var makeVars = map[string]string{"--hub-addr": "HUB_PORT", "--receiver-addr": "RECEIVER_PORT", "--daemon-port": "DAEMON_PORT", "--broker-addr": "BROKER_PORT"}

// devListenError says why a part of dev cannot listen on addr and which setting picks another
// port: make run's variable when make started dev, else the flag.
func devListenError(viaMake bool, what, addr, flag string, err error) string {
	if viaMake {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Sprintf("%s cannot listen on %s: the port is in use (by another robothub hub serve, robothub dev or make run?); choose a free one with make run %s=PORT",
				what, addr, makeVars[flag])
		}
		return fmt.Sprintf("%s cannot listen on %s (make run %s=PORT): %v", what, addr, makeVars[flag], err)
	}
	msg := cliapp.ListenError(what, addr, flag, err)
	if flag == "--daemon-port" { // a port, not an address
		msg = strings.Replace(msg, "127.0.0.1:PORT", "PORT", 1)
	}
	return msg
}

// DevBrokerPasswordFile is the embedded broker's password, in dev's data dir (mode 0600).
const DevBrokerPasswordFile = "broker-password"

// devSecret is the receiver's secret: $WEBHOOK_SECRET, else one made on first start and kept in file.
func devSecret(getenv func(string) string, file string) (string, error) {
	if s := getenv(webhook.SecretEnv); s != "" {
		return s, nil
	}
	s, err := privateSecret(file)
	if err != nil {
		return "", fmt.Errorf("saving the webhook secret: %w", err)
	}
	return s, nil
}

// privateSecret reads the secret kept in file, or makes one on first start and keeps it there
// (mode 0600, taken back to 0600 if it was opened up).
func privateSecret(file string) (string, error) {
	if b, err := os.ReadFile(file); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		if fi, err := os.Stat(file); err == nil && fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(file, 0o600); err != nil {
				return "", fmt.Errorf("%s is readable by others and cannot be made private: %w", file, err)
			}
		}
		return strings.TrimSpace(string(b)), nil
	}
	buf := make([]byte, 24)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	s := hex.EncodeToString(buf)
	if err := hubcmd.WritePrivateFile(file, s+"\n"); err != nil {
		return "", err
	}
	return s, nil
}

// waitDaemon waits until the robot daemon says it serves (GET /healthz {"status": "ok"}): it
// prepares its apps venv first, which on a first start takes a few seconds.
func waitDaemon(ctx context.Context, d *daemonclient.Daemon) error {
	for {
		resp, err := daemonclient.Call(ctx, d, daemonclient.NewGetHealthzRequest, daemonclient.ParseGetHealthzResponse)
		if err == nil && resp.JSON200 != nil && resp.JSON200.Status == "ok" {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitHealthy waits until every URL answers 200.
func waitHealthy(ctx context.Context, urls ...string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for _, u := range urls {
		for {
			resp, err := client.Get(u)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

func printDevSummary(out io.Writer, dir, hubURL, recvURL, daemonURL, hookURL, brokerURL, tokenFile, pyFlags string, boot *hubemu.BootstrapResult) {
	sock := filepath.Join(dir, "robot", "daemon.sock")
	password := filepath.Join(dir, DevBrokerPasswordFile)
	fmt.Fprintf(out, `
robothub dev is running (state in %s):
  local hub      %s
  MQTT broker    %s  (the fleet: robot-daemon --fleet %s --fleet-password-file %s;
                 robothub fleet ls --broker %s --password-file %s)
  receiver       %s  (POST %s%s, %s%s, %s%s)
  robot daemon   %s  (robot-1 in the fleet; dashboard: %s/login, with the token in %s;
                 this user, without a token: curl --unix-socket %s http://localhost/api/...)
  webhook        %s watches user:%s (domain repo) and delivers to %s

In another terminal, put the CLIs on PATH and point them at the local hub:
  export PATH=%s:$PATH
  export HF_ENDPOINT=%s
  export HF_TOKEN_PATH=%s

Try it: create and publish an app, install it on the robot, then publish a change:
  robot-app-assistant create my_app ./apps --publish%s
  curl --unix-socket %s -X POST 'http://localhost/api/apps/install?wait=true' -H 'Content-Type: application/json' -d '{"url": "%s/spaces/%s/my_app"}'
  curl --unix-socket %s -X POST http://localhost/api/apps/start-app/my_app
  (edit ./apps/my_app/my_app/main.py)
  robot-app-assistant publish ./apps/my_app%s        (or git push to %s/spaces/%s/my_app)
Every robot of the fleet with my_app reinstalls and restarts it within seconds. Ctrl-C stops everything.
`, dir, hubURL, brokerURL, brokerURL, password, brokerURL, password, recvURL, webhook.RoutePrefix, devFleetRoute, webhook.RoutePrefix, devUpdateRoute, webhook.RoutePrefix, devLogRoute,
		daemonURL, daemonURL, filepath.Join(dir, "robot", "api-token"), sock, boot.Webhook.ID, devUser, hookURL,
		binDir(), hubURL, tokenFile, pyFlags, sock, hubURL, devUser, sock, pyFlags, hubURL, devUser)
}

// binDir is the directory of the running robothub, where make build puts robot-app-assistant too.
func binDir() string {
	exe, err := os.Executable()
	if err != nil {
		return "bin"
	}
	return filepath.Dir(exe)
}
