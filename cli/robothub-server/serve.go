package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/robothub/robothub/cli/cliapp"
	"github.com/robothub/robothub/cli/hubconn"

	"github.com/urfave/cli/v2"

	"github.com/robothub/robothub/adapters/mqtt"
	"github.com/robothub/robothub/adapters/nethttp"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/actions"
)

func serveCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: cliapp.RobothubUsageOf("serve"),
		UsageText: `robothub serve --route NAME=ACTION [--route ...] [options]

Each --route serves POST /webhooks/NAME. Actions:
  log                   print each payload as one line of JSON on stdout
  exec:COMMAND ARGS...  run COMMAND (no shell) with the payload in $WEBHOOK_PAYLOAD and on stdin;
                        also set: WEBHOOK_ROUTE, WEBHOOK_EVENT_SCOPE, WEBHOOK_EVENT_ACTION,
                        WEBHOOK_REPO_TYPE, WEBHOOK_REPO_NAME. Exit status 0 answers 200, others 500.
                        Of the receiver's environment it gets PATH, HOME, the locale, TZ, TMPDIR,
                        and the variables named with --exec-env: no token or key unless named.
  forward:URL           POST the payload on to URL, retrying on errors, 429 and 5xx
  robot-update:URL      on a push to a space that an app on the robot daemon at URL came from,
                        reinstall that app at the pushed revision and restart it if it runs
                        ($ROBOT_DAEMON_TOKEN, the daemon's token, is sent when set)

Examples:
  WEBHOOK_SECRET=... robothub serve --route seen=log
  robothub serve --route retrain=exec:'./retrain.sh --fast' --route relay=forward:https://ci.example.com/hook
  NGROK_AUTHTOKEN=... robothub serve --route seen=log             # public URL through ngrok
  robothub serve --route seen=log --tunnel-command 'cloudflared tunnel --url {url}'`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "route", Aliases: []string{"r"}, Usage: "add a route `NAME=ACTION` (repeatable); also read from $" + actions.RoutesEnv + ", separated by ';' or newlines"},
			&cli.StringFlag{Name: "addr", Usage: "listen `ADDRESS` (default 127.0.0.1:7860, or 127.0.0.1:$PORT; 0.0.0.0:7860 on a hub Space)"},
			&cli.StringFlag{Name: "secret", Usage: "secret that deliveries must carry in X-Webhook-Secret (default $" + webhook.SecretEnv + "; prefer the variable: flags show in ps)"},
			&cli.BoolFlag{Name: "insecure-no-secret", Usage: "serve exec:, forward: and robot-update: routes without a secret, to anyone who reaches the receiver (also $" + actions.InsecureNoSecretEnv + "=1)"},
			&cli.Int64Flag{Name: "max-body-bytes", Value: webhook.DefaultMaxBodyBytes, Usage: "refuse larger deliveries with 413"},
			&cli.DurationFlag{Name: "exec-timeout", Value: 60 * time.Second, Usage: "kill an exec: command (and its children) after this long"},
			&cli.IntFlag{Name: "exec-concurrency", Value: 4, Usage: "exec: commands running at once; further deliveries wait"},
			&cli.StringSliceFlag{Name: "exec-env", Usage: "pass the environment variable `NAME` to exec: commands (repeatable; also $" + actions.ExecEnvEnv + "); they get PATH, HOME, the locale, TZ and TMPDIR, and no credentials, unless named here"},
			&cli.StringFlag{Name: "tunnel", Value: "auto", Usage: "public tunnel: auto (ngrok when $" + nethttp.NgrokAuthtokenEnv + " is set, the command when --tunnel-command is given), ngrok, command, none"},
			&cli.StringFlag{Name: "tunnel-command", Usage: "tunnel program printing a public https URL, e.g. 'cloudflared tunnel --url {url}' ({url}, {port}, {host} are replaced)"},
			&cli.StringFlag{Name: "tunnel-url-pattern", Usage: "`REGEXP` that picks the public URL from the tunnel program's output (first group, or whole match)"},
			&cli.StringSliceFlag{Name: "update-webhook", Usage: "hub webhook to point at the public URL once known, through the hub's API: `ID` (with one route) or ID=ROUTE (repeatable)"},
			&cli.StringFlag{Name: "token", Usage: "hub access `TOKEN` for --update-webhook (default $HF_TOKEN, then the token file)"},
			&cli.StringFlag{Name: "endpoint", Usage: "hub base `URL` for --update-webhook (default $HF_ENDPOINT, then " + hub.DefaultEndpoint + ")"},
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "log format: text or json"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "log level: debug, info, warn, error"},
		},
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			return runServe(c, e)
		},
	}
}

func runServe(c *cli.Context, e *env) error {
	if c.NArg() > 0 {
		return usagef("serve takes no arguments (got %q): routes are given with --route NAME=ACTION", c.Args().Slice())
	}
	logger, err := cliapp.NewLogger(e.stderr, c.String("log-format"), c.String("log-level"))
	if err != nil {
		return err
	}
	routes, err := actions.ParseRoutes(e.getenv(actions.RoutesEnv))
	if err != nil {
		return usagef("$%s: %v", actions.RoutesEnv, err)
	}
	for _, spec := range c.StringSlice("route") {
		r, err := actions.ParseRoute(spec)
		if err != nil {
			return usagef("--route: %v", err)
		}
		routes = append(routes, r)
	}
	if len(routes) == 0 {
		return usagef("no route: add at least one --route NAME=ACTION (for example --route hello=log)")
	}

	execEnv, err := actions.ParseEnvNames(e.getenv(actions.ExecEnvEnv))
	if err != nil {
		return usagef("$%s: %v", actions.ExecEnvEnv, err)
	}
	for _, list := range c.StringSlice("exec-env") {
		names, err := actions.ParseEnvNames(list)
		if err != nil {
			return usagef("--exec-env: %v", err)
		}
		execEnv = append(execEnv, names...)
	}

	secretOpt := webhook.WithGetenv(e.getenv)
	opts := []webhook.Option{secretOpt, webhook.WithLogger(logger),
		webhook.WithMaxBodyBytes(c.Int64("max-body-bytes")),
		webhook.WithHandlerTimeout(c.Duration("exec-timeout") + 10*time.Second)}
	if c.IsSet("secret") {
		opts = append(opts, webhook.WithSecret(c.String("secret")))
	}
	srv := webhook.NewServer(opts...)
	// stdout is buffered, a few milliseconds at most, for the log route's lines (see BufferedOutput
	// for what a killed receiver loses); the addresses go through it too, to keep stdout in order.
	stdout := actions.NewBufferedOutput(e.stdout)
	defer stdout.Close()
	b := actions.NewBuilder(actions.Config{
		FleetDialers: mqtt.FleetDialers(), SplitCommand: actions.SplitCommand, RobotUpdate: actions.RobotUpdate,
		Logger: logger, Output: stdout,
		ExecTimeout: c.Duration("exec-timeout"), ExecConcurrency: c.Int("exec-concurrency"),
		ExecEnv: execEnv, Getenv: e.getenv,
		InsecureNoSecret: c.Bool("insecure-no-secret") || truthy(e.getenv(actions.InsecureNoSecretEnv)),
	})
	if err := b.Register(srv, routes); err != nil {
		return usagef("%v", err)
	}

	tunnel, err := chooseTunnel(c, e, logger)
	if err != nil {
		return err
	}
	updates, err := webhookUpdates(c.StringSlice("update-webhook"), srv.Routes())
	if err != nil {
		return err
	}
	var client *hub.Client
	if len(updates) > 0 {
		if client, err = hubconn.NewClient(c, e.getenv, e.stderr); err != nil {
			return err
		}
	}
	addr := nethttp.ResolveAddr(c.String("addr"), e.getenv)
	err = nethttp.Launch(c.Context, srv, nethttp.Options{
		Addr: c.String("addr"), Getenv: e.getenv, Logger: logger, Out: stdout, Tunnel: tunnel,
		OnPublicURL: func(ctx context.Context, public string) {
			announcePublicURL(ctx, stdout, client, public, srv.Routes(), updates)
		},
	})
	if errors.Is(err, syscall.EADDRINUSE) {
		return cli.Exit("serve: "+cliapp.ListenError("the receiver", addr, "--addr", err), exitError)
	}
	return err
}

func chooseTunnel(c *cli.Context, e *env, logger *slog.Logger) (nethttp.Tunnel, error) {
	mode, command := c.String("tunnel"), c.String("tunnel-command")
	token := e.getenv(nethttp.NgrokAuthtokenEnv)
	var pattern *regexp.Regexp
	if p := c.String("tunnel-url-pattern"); p != "" {
		var err error
		if pattern, err = regexp.Compile(p); err != nil {
			return nil, usagef("--tunnel-url-pattern: %v", err)
		}
	}
	commandTunnel := func() (nethttp.Tunnel, error) {
		if command == "" {
			return nil, usagef("--tunnel command needs --tunnel-command, e.g. 'cloudflared tunnel --url {url}'")
		}
		argv, err := actions.SplitCommand(command)
		if err != nil {
			return nil, usagef("--tunnel-command: %v", err)
		}
		return &nethttp.CommandTunnel{Argv: argv, URLPattern: pattern, Logger: logger}, nil
	}
	ngrokTunnel := func() (nethttp.Tunnel, error) {
		if token == "" {
			return nil, usagef("--tunnel ngrok needs $%s (your ngrok authtoken)", nethttp.NgrokAuthtokenEnv)
		}
		return &nethttp.NgrokTunnel{Authtoken: token, Domain: e.getenv(nethttp.NgrokDomainEnv), Logger: logger}, nil
	}
	switch mode {
	case "none":
		return nil, nil
	case "ngrok":
		return ngrokTunnel()
	case "command":
		return commandTunnel()
	case "auto":
		switch {
		case command != "":
			return commandTunnel()
		case token != "":
			return ngrokTunnel()
		}
		return nil, nil
	default:
		return nil, usagef("--tunnel %q: use auto, ngrok, command or none", mode)
	}
}

// webhookUpdate is a hub webhook to repoint at route once the public URL is known.
type webhookUpdate struct{ id, route string }

func webhookUpdates(specs []string, routes []webhook.Route) ([]webhookUpdate, error) {
	var out []webhookUpdate
	for _, s := range specs {
		id, route, named := strings.Cut(s, "=")
		if id == "" {
			return nil, usagef("--update-webhook %q: want ID or ID=ROUTE", s)
		}
		if !named {
			if len(routes) != 1 {
				return nil, usagef("--update-webhook %s: the receiver has %d routes; say which with %s=ROUTE", id, len(routes), id)
			}
			route = routes[0].Name
		}
		known := false
		for _, r := range routes {
			known = known || r.Name == strings.Trim(route, "/")
		}
		if !known {
			return nil, usagef("--update-webhook %s: no route named %q", id, route)
		}
		out = append(out, webhookUpdate{id: id, route: strings.Trim(route, "/")})
	}
	return out, nil
}

// announcePublicURL tells the hub about a new public address (the spec's rule 6): the webhooks named
// with --update-webhook are updated through the hub's API; otherwise it prints the command to run.
func announcePublicURL(ctx context.Context, out io.Writer, client *hub.Client, public string, routes []webhook.Route, updates []webhookUpdate) {
	if len(updates) > 0 {
		for _, u := range updates {
			target := public + webhook.RoutePrefix + u.route
			if _, err := client.Update(ctx, u.id, hub.UpdateRequest{URL: &target}); err != nil {
				fmt.Fprintf(out, "Could not update hub webhook %s: %v\n  Run: robothub webhooks update %s --url %s\n", u.id, err, u.id, target)
				continue
			}
			fmt.Fprintf(out, "Updated hub webhook %s: it now delivers to %s\n", u.id, target)
		}
		return
	}
	fmt.Fprintln(out, "This public address changes when the tunnel restarts. Point a hub webhook at a route with:")
	for _, r := range routes {
		fmt.Fprintf(out, "  robothub webhooks update <webhook_id> --url %s%s\n", public, r.Path)
	}
}

// truthy reads a boolean environment variable: 1, t, true (any case) are true.
func truthy(v string) bool {
	b, _ := strconv.ParseBool(strings.TrimSpace(v))
	return b
}
