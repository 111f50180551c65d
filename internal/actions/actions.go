// Package actions is the configurable receiver: webhook handlers built from short text specs, so that
// a receiver can be set up from flags or environment variables without writing Go. `robothub serve`,
// the Lambda function and the Cloud Function all read the same specs.
//
//	name=log                  print each payload as one line of JSON
//	name=exec:CMD ARG...      run CMD with the payload in WEBHOOK_PAYLOAD and on stdin
//	name=forward:URL          POST the payload on to URL, with retries
//	name=robot-update:URL     update the robot daemon's apps whose space was pushed to
//	name=fleet:BROKER_URL     announce a push to a space to a fleet of robots through a broker
package actions

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/robothub/robothub/core/fleet"
	"github.com/robothub/robothub/core/webhook"
)

// RoutesEnv is the environment variable that lists routes for deployments configured by environment
// (Lambda, Cloud Functions, a Space): specs separated by newlines or ";".
const RoutesEnv = "ROBOTHUB_ROUTES"

// Route is a named action: the receiver serves it at /webhooks/<Name>.
type Route struct {
	Name   string
	Action string // "log", "exec:...", "forward:..."
}

// ParseRoute reads "name=ACTION".
func ParseRoute(spec string) (Route, error) {
	name, action, ok := strings.Cut(strings.TrimSpace(spec), "=")
	name, action = strings.TrimSpace(name), strings.TrimSpace(action)
	if !ok || name == "" || action == "" {
		return Route{}, fmt.Errorf("route %q: want name=ACTION, such as hello=log, build=exec:make build or relay=forward:https://example.com/hook", spec)
	}
	return Route{Name: name, Action: action}, nil
}

// ParseRoutes reads a list of route specs separated by newlines or ";", as in ROBOTHUB_ROUTES.
// Blank entries are skipped.
func ParseRoutes(list string) ([]Route, error) {
	var out []Route
	for _, spec := range strings.FieldsFunc(list, func(r rune) bool { return r == '\n' || r == ';' }) {
		if strings.TrimSpace(spec) == "" {
			continue
		}
		r, err := ParseRoute(spec)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Config holds what actions need from their surroundings. The zero value is usable.
type Config struct {
	Logger *slog.Logger // default slog.Default()
	Output io.Writer    // where the log action prints payloads; default os.Stdout

	ExecTimeout     time.Duration // default 60s: then the command's process group is killed
	ExecConcurrency int           // default 4 commands at once; more deliveries wait their turn
	ExecOutputLimit int           // bytes of a command's output kept for the log and the reply; default 4 KiB
	ExecEnv         []string      // names of variables that commands get besides execEnvBase's (--exec-env)

	// Getenv reads the receiver's environment: the variables commands get, ROBOT_DAEMON_TOKEN,
	// the fleet's broker credentials. Default os.Getenv.
	Getenv func(string) string

	ForwardClient   *http.Client  // default: a client with a 10s timeout (also for robot-update)
	ForwardAttempts int           // default 4
	ForwardBackoff  time.Duration // first pause between attempts, doubled each time; default 500ms

	DaemonToken string // the robot daemon's API token for robot-update; default $ROBOT_DAEMON_TOKEN

	// FleetTLS, when set, is the TLS of fleet routes instead of the ROBOTHUB_FLEET_CA/CERT/KEY files.
	FleetTLS *tls.Config
	// FleetDialers open the links of fleet routes, by their URL's scheme: adapters/mqtt's
	// FleetDialers for a broker, the Lambda's awsiot. A receiver links only what it registers.
	FleetDialers map[string]fleet.Dialer
	// Ephemeral says the receiver stops after each answer (Lambda, Cloud Functions): no work can
	// go on in the background, so fleet routes with canary waves are refused.
	Ephemeral bool

	// SplitCommand splits the command line of exec: routes into its arguments: SplitCommand, for a
	// receiver that has the exec action. It is nil in a receiver without it (the Lambda
	// bootstrap's default build), whose exec: routes are refused with ErrNoExec: the shell parser
	// SplitCommand uses (mvdan.cc/sh) is 0.48 MB of a stripped binary, and the linker leaves it
	// out only when nothing refers to it (docs/BENCHMARKS.md, issue 31). Binaries register it as
	// they register FleetDialers.
	SplitCommand func(line string) ([]string, error)

	// RobotUpdate builds robot-update: routes: RobotUpdate, for a receiver that has the action. It
	// is nil in the Lambda bootstrap's default build, whose robot-update: routes are refused with
	// ErrNoRobotUpdate: the action calls the daemon through internal/daemonclient, and the
	// oapi-codegen runtime that client needs (with google/uuid, go-jsonmerge and net/mail) is 0.1 MB
	// of a stripped binary, which took the bootstrap from 1.295x to 1.311x the smallest aws-lambda-go
	// function (docs/BENCHMARKS.md, issue 31). A Lambda reaches robots through fleet routes.
	RobotUpdate func(b *Builder, route, daemonURL string) (webhook.HandlerFunc, error)

	// InsecureNoSecret lets routes that run or send something (exec, forward, robot-update) be
	// served by a receiver without a secret, where anyone who reaches it may trigger them. Without
	// it Register refuses them; log routes are always allowed (the server warns that they are open).
	InsecureNoSecret bool
}

func (c *Config) defaults() {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Output == nil {
		c.Output = os.Stdout
	}
	if c.ExecTimeout <= 0 {
		c.ExecTimeout = 60 * time.Second
	}
	if c.ExecConcurrency <= 0 {
		c.ExecConcurrency = 4
	}
	if c.ExecOutputLimit <= 0 {
		c.ExecOutputLimit = 4 << 10
	}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.ForwardClient == nil {
		c.ForwardClient = &http.Client{Timeout: 10 * time.Second}
	}
	// A forward target (or a robot daemon) that redirects does not choose where the payload goes
	// next: the redirect is answered as a refusal (502 naming the status).
	noRedirect := *c.ForwardClient
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.ForwardClient = &noRedirect
	if c.ForwardAttempts <= 0 {
		c.ForwardAttempts = 4
	}
	if c.ForwardBackoff <= 0 {
		c.ForwardBackoff = 500 * time.Millisecond
	}
	if c.DaemonToken == "" {
		c.DaemonToken = c.Getenv(DaemonTokenEnv)
	}
}

// ErrNoExec is the error of an exec: route in a receiver built without the exec action
// (Config.SplitCommand is nil).
var ErrNoExec = errors.New("this receiver was built without the exec action")

// ErrNoRobotUpdate is the error of a robot-update: route in a receiver built without the
// robot-update action (Config.RobotUpdate is nil).
var ErrNoRobotUpdate = errors.New("this receiver was built without the robot-update action")

// Builder turns action specs into handlers. Commands of all exec actions share one concurrency cap.
type Builder struct {
	cfg     Config
	execCap chan struct{}
	ctx     context.Context // the background work of routes (fleet connections and waves)
	cancel  context.CancelFunc
	closers []func(context.Context)
}

// NewBuilder returns a Builder with cfg's defaults filled in.
func NewBuilder(cfg Config) *Builder {
	cfg.defaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Builder{cfg: cfg, execCap: make(chan struct{}, cfg.ExecConcurrency), ctx: ctx, cancel: cancel}
}

// Close ends the routes' background work: fleet routes disconnect from their brokers.
func (b *Builder) Close(ctx context.Context) {
	for _, c := range b.closers {
		c(ctx)
	}
	b.cancel()
}

// Handler returns the handler for one action spec.
func (b *Builder) Handler(route, action string) (webhook.HandlerFunc, error) {
	kind, arg, _ := strings.Cut(action, ":")
	switch kind {
	case "log":
		if arg != "" {
			return nil, fmt.Errorf("route %s: the log action takes no argument (got %q)", route, action)
		}
		return b.logAction(route), nil
	case "exec":
		return b.execAction(route, arg)
	case "forward":
		return b.forwardAction(route, arg)
	case "robot-update":
		if b.cfg.RobotUpdate == nil {
			return nil, fmt.Errorf("route %s: robot-update: %w", route, ErrNoRobotUpdate)
		}
		return b.cfg.RobotUpdate(b, route, arg)
	case "fleet":
		return b.fleetAction(route, arg)
	default:
		return nil, fmt.Errorf("route %s: unknown action %q: use log, exec:COMMAND ARGS..., forward:URL, robot-update:DAEMON_URL or fleet:BROKER_URL", route, action)
	}
}

// Register adds every route to srv, stopping at the first bad one. A route that runs or sends
// something is refused when srv has no secret, unless Config.InsecureNoSecret.
func (b *Builder) Register(srv *webhook.Server, routes []Route) error {
	for _, r := range routes {
		h, err := b.Handler(r.Name, r.Action)
		if err != nil {
			return err
		}
		if kind, _, _ := strings.Cut(r.Action, ":"); kind != "log" && !srv.SecretIsSet() && !b.cfg.InsecureNoSecret {
			return fmt.Errorf("route %s: %s: routes run or send something on every delivery, so they need a secret: set %s (and the same secret on the hub webhook), or serve it open to anyone with --insecure-no-secret (%s=1)",
				r.Name, kind, webhook.SecretEnv, InsecureNoSecretEnv)
		}
		if err := srv.Add(r.Name, h); err != nil {
			return err
		}
	}
	return nil
}
