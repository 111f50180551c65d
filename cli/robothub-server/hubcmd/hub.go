// Package hubcmd is robothub's `hub` command set: the local hub emulator's server (hub serve) and
// the commands that drive it (token, emit, job, spaces). The main wires it with Command.
package hubcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/robothub/robothub/internal/egress"

	"github.com/robothub/robothub/cli/cliapp"
	"github.com/robothub/robothub/cli/hubconn"

	"github.com/robothub/robothub/internal/dirlock"
	"github.com/robothub/robothub/internal/hubemu/delivery"
	"github.com/robothub/robothub/internal/hubemu/localhub"

	"github.com/urfave/cli/v2"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/hubemu"
)

// DefaultAddr is where robothub hub serve listens: beside the receiver's 7860.
const DefaultAddr = "127.0.0.1:7861"

// env is the outside world of one run of robothub, as its main's run gets it.
type env struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// Command is `robothub hub` and its subcommands, reading the environment with getenv and writing to
// stdout and stderr, so that tests run the real program in-process with their own.
func Command(getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) *cli.Command {
	return hubCommand(&env{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr})
}

func hubCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "hub",
		Usage: cliapp.RobothubUsageOf("hub"),
		Flags: hubconn.ConnectionFlags(),
		Description: `The local hub is a stand-in for the public hub: the same webhook management API, with
events you emit yourself, deliveries with retries, an activity view and job webhooks that run local
commands. Start it with robothub hub serve and point the other commands at it with the two export
lines it prints.`,
		OnUsageError: cliapp.OnUsageError,
		Subcommands: []*cli.Command{
			hubServeCommand(e),
			hubTokenCommand(e),
			hubEmitCommand(e),
			hubJobCommand(e),
			hubSpacesCommand(e),
		},
	}
}

// storeFlags choose the emulator's database, for the commands that open it directly.
func storeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "data-dir", Usage: "keep the hub's database (hub.db) in `DIR` (default $XDG_DATA_HOME/robothub/hub or ~/.local/share/robothub/hub)"},
		&cli.StringFlag{Name: "db", Usage: "database `PATH` instead of DIR/hub.db; :memory: keeps nothing (for tests)"},
	}
}

func DefaultDataDir(getenv func(string) string) string {
	if x := getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "robothub", "hub")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "share", "robothub", "hub")
	}
	return "robothub-hub"
}

// storeDSN resolves --db and --data-dir, creating the data directory.
func storeDSN(c *cli.Context, e *env) (string, error) {
	if db := c.String("db"); db != "" {
		if c.IsSet("data-dir") {
			return "", cliapp.Usagef("give --db or --data-dir, not both")
		}
		return db, nil
	}
	dir := c.String("data-dir")
	if dir == "" {
		dir = DefaultDataDir(e.getenv)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", cli.Exit(fmt.Sprintf("creating the data directory: %v", err), cliapp.ExitError)
	}
	return filepath.Join(dir, "hub.db"), nil
}

// LockDatabase keeps a second server (hub serve or dev) off a database file: two would deliver
// every pending event twice. Other commands (token create, emit) open the database beside a
// running server and take no lock. An in-memory database needs none.
func LockDatabase(dsn string) (*dirlock.Lock, error) {
	if dsn == ":memory:" || strings.HasPrefix(dsn, "file:") {
		return nil, nil
	}
	return dirlock.Acquire(dsn+".lock", "robothub hub server")
}

func hubServeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "run the local hub emulator (webhook management API, event delivery, job runs, git spaces)",
		UsageText: `robothub hub serve [--addr 127.0.0.1:7861] [--data-dir DIR] [--bootstrap-webhook URL ...] [options]

On first start (no users yet) it makes a user (--user) and a write token, and prints the two lines
that point robothub (and the public hub's own tools) at it:
  export HF_ENDPOINT=http://127.0.0.1:7861
  export HF_TOKEN=hf_...
State (users, tokens, webhooks, pending deliveries, activity, job runs, spaces) is kept in DIR/hub.db,
and the spaces' git repositories in DIR/repos; both survive restarts, and pending deliveries resume.
Spaces clone from http://ADDRESS/spaces/USER/NAME (see robothub hub spaces --help).

Examples:
  robothub hub serve
  robothub hub serve --data-dir ./.robothub/hub --token-file ./.robothub/hub/token
  WEBHOOK_SECRET=dev robothub hub serve --bootstrap-webhook http://127.0.0.1:7860/webhooks/hello
  robothub hub serve --db :memory: --trigger-limit 0 --addr 127.0.0.1:0`,
		Flags: append(storeFlags(),
			&cli.StringFlag{Name: "addr", Value: DefaultAddr, Usage: "listen on `ADDRESS` (host:port; port 0 picks a free one)"},
			&cli.StringFlag{Name: "public-url", Usage: "the hub's `URL` as clients see it, used in printed lines and payload links (default http://ADDRESS)"},
			&cli.StringFlag{Name: "user", Value: "local", Usage: "`NAME` of the user made on first start"},
			&cli.StringFlag{Name: "token-file", Usage: "also write the first-start token to `FILE` (mode 0600), for HF_TOKEN_PATH"},
			&cli.StringFlag{Name: "bootstrap-webhook", Usage: "make sure the user has a webhook to `URL` (made once, found again on restart)"},
			&cli.StringFlag{Name: "bootstrap-secret", Usage: "`SECRET` of the bootstrap webhook (default $" + webhook.SecretEnv + ")"},
			&cli.StringSliceFlag{Name: "bootstrap-watch", Usage: "what the bootstrap webhook watches, `TYPE:NAME` (repeatable; default user:USER)"},
			&cli.IntFlag{Name: "trigger-limit", Value: hubemu.DefaultTriggerLimit, Usage: "deliveries per webhook per emitting user per 24 hours (0: no limit)"},
			&cli.DurationFlag{Name: "delivery-timeout", Value: 10 * time.Second, Usage: "how long a receiver has to answer one delivery"},
			&cli.IntFlag{Name: "delivery-attempts", Value: 8, Usage: "attempts per delivery before it fails"},
			&cli.DurationFlag{Name: "retry-delay", Value: 2 * time.Second, Usage: "pause after the first failed attempt; doubled after each"},
			&cli.DurationFlag{Name: "retry-max-delay", Value: 10 * time.Minute, Usage: "longest pause between attempts"},
			&cli.IntFlag{Name: "workers", Value: 32, Usage: "deliveries sent at the same time"},
			&cli.DurationFlag{Name: "job-timeout", Value: delivery.DefaultJobTimeout, Usage: "kill a job run (and its children) after this long"},
			&cli.DurationFlag{Name: "read-timeout", Value: hubemu.DefaultReadTimeout, Usage: "drop a client that has not sent its whole request (headers and body, a push's pack included) within this long"},
			&cli.StringSliceFlag{Name: "allow-delivery-to", Usage: "let deliveries reach `TARGET`, host:port or a CIDR network, although it is this machine's own (loopback) or link-local: refused otherwise, so that no hub user reaches local services such as the robot daemon (repeatable; default $" + allowDeliveryEnv + ", comma-separated; the --bootstrap-webhook's own address is allowed)"},
			&cli.BoolFlag{Name: "allow-jobs", Usage: "turn job webhooks on: every user with a write token may then run commands on this machine, as this user, in a sandbox that keeps them out of the hub's files (Linux with Landlock only; off by default; robothub dev turns it on)"},
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "log format: text or json"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "log level: debug, info, warn, error"},
		),
		OnUsageError: cliapp.OnUsageError,
		Action:       func(c *cli.Context) error { return runHubServe(c, e) },
	}
}

func runHubServe(c *cli.Context, e *env) error {
	if c.NArg() > 0 {
		return cliapp.Usagef("hub serve takes no arguments, got %q", c.Args().Slice())
	}
	logger, err := cliapp.NewLogger(e.stderr, c.String("log-format"), c.String("log-level"))
	if err != nil {
		return err
	}
	var watched []hub.WatchedItem
	for _, s := range c.StringSlice("bootstrap-watch") {
		w, err := hub.ParseWatchedItem(s)
		if err != nil {
			return cliapp.Usagef("--bootstrap-watch %v", strings.TrimPrefix(err.Error(), "watch: "))
		}
		watched = append(watched, w)
	}
	if u := c.String("bootstrap-webhook"); u != "" {
		if _, err := (hub.CreateRequest{URL: u, Watched: []hub.WatchedItem{{Type: "user", Name: "x"}}}).Validate(); err != nil {
			return cliapp.Usagef("--bootstrap-webhook: %v", strings.TrimPrefix(err.Error(), "url: "))
		}
	}
	allow, err := deliveryTargets(c, e)
	if err != nil {
		return err
	}
	dsn, err := storeDSN(c, e)
	if err != nil {
		return err
	}
	lock, err := LockDatabase(dsn)
	if err != nil {
		return cli.Exit("hub serve: "+err.Error(), cliapp.ExitError)
	}
	defer lock.Release()
	ln, err := net.Listen("tcp", c.String("addr"))
	if err != nil {
		return cli.Exit("hub serve: "+cliapp.ListenError("the local hub", c.String("addr"), "--addr", err), cliapp.ExitError)
	}
	defer ln.Close()
	public := strings.TrimRight(c.String("public-url"), "/")
	if public == "" {
		public = "http://" + ln.Addr().String()
	}
	limit := c.Int("trigger-limit")
	if limit == 0 {
		limit = -1
	}
	// Jobs run as this user: make /proc/<pid>/environ of the hub unreadable to them.
	if err := delivery.Harden(); err != nil {
		logger.Warn("could not make the hub non-dumpable: a job may read its environment through /proc", "err", err)
	}
	emu, err := localhub.Open(c.Context, localhub.Config{
		DSN: dsn, PublicURL: public, TriggerLimit: limit, Logger: logger, JobTimeout: c.Duration("job-timeout"),
		AllowJobs: c.Bool("allow-jobs"), AllowDeliveryTo: allow, Private: nonEmpty(c.String("token-file")),
		Delivery: delivery.Policy{Timeout: c.Duration("delivery-timeout"), MaxAttempts: c.Int("delivery-attempts"),
			BaseDelay: c.Duration("retry-delay"), MaxDelay: c.Duration("retry-max-delay"), Workers: c.Int("workers")},
	})
	if err != nil {
		return cli.Exit(fmt.Sprintf("hub serve: opening %s: %v", dsn, err), cliapp.ExitError)
	}
	defer emu.Close()

	secret := c.String("bootstrap-secret")
	if !c.IsSet("bootstrap-secret") {
		secret = e.getenv(webhook.SecretEnv)
	}
	boot, err := emu.Bootstrap(c.Context, hubemu.BootstrapConfig{User: c.String("user"), WebhookURL: c.String("bootstrap-webhook"),
		WebhookSecret: secret, Watched: watched, Replaces: SameLocalRoute(c.String("bootstrap-webhook"))})
	if err != nil {
		return cli.Exit(fmt.Sprintf("hub serve: %v", err), cliapp.ExitError)
	}

	fmt.Fprintf(e.stdout, "Local hub listening on %s (database %s)\n", public, dsn)
	fmt.Fprintf(e.stdout, "export HF_ENDPOINT=%s\n", public)
	switch {
	case boot.Token != "":
		fmt.Fprintf(e.stdout, "export HF_TOKEN=%s\n", boot.Token)
		if f := c.String("token-file"); f != "" {
			if err := WriteTokenFile(f, boot.Token); err != nil {
				return cli.Exit(fmt.Sprintf("hub serve: --token-file: %v", err), cliapp.ExitError)
			}
			fmt.Fprintf(e.stdout, "# the token is also in %s: export HF_TOKEN_PATH=%s\n", f, f)
		}
	default:
		fmt.Fprintf(e.stdout, "# HF_TOKEN: the token printed at first start; make another with: robothub hub token create %s\n", storeArgs(c))
	}
	if boot.Webhook != nil {
		what := "found"
		if boot.CreatedWH {
			what = "created"
		}
		items := make([]string, len(boot.Webhook.Watched))
		for i, w := range boot.Webhook.Watched {
			items[i] = w.Type + ":" + w.Name
		}
		fmt.Fprintf(e.stdout, "# webhook %s (%s) -> %s, watching %s\n", boot.Webhook.ID, what, boot.Webhook.URL, strings.Join(items, ","))
	}

	srv := &http.Server{Handler: emu.Handler(), ReadHeaderTimeout: min(hubemu.DefaultReadHeaderTimeout, c.Duration("read-timeout")),
		ReadTimeout: c.Duration("read-timeout"), IdleTimeout: hubemu.DefaultIdleTimeout}
	runCtx, stopRun := context.WithCancel(context.WithoutCancel(c.Context))
	runDone := make(chan error, 1)
	go func() { runDone <- emu.Run(runCtx) }()
	serveDone := make(chan error, 1)
	go func() { serveDone <- srv.Serve(ln) }()
	logger.Info("hub emulator started", "addr", ln.Addr().String(), "database", dsn, "deliveries_to_this_machine_allowed", strings.Join(allow, ","))

	var failure error
	select {
	case <-c.Context.Done():
	case err := <-serveDone:
		if !errors.Is(err, http.ErrServerClosed) {
			failure = cli.Exit(fmt.Sprintf("hub serve: %v", err), cliapp.ExitError)
		}
	case err := <-runDone:
		runDone <- err
		failure = deliveryStopped(dsn, err)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx)
	stopRun()
	if err := <-runDone; err != nil && failure == nil {
		failure = deliveryStopped(dsn, err)
	}
	logger.Info("hub emulator stopped")
	return failure
}

// allowDeliveryEnv holds hub serve's --allow-delivery-to targets, comma-separated.
const allowDeliveryEnv = "ROBOTHUB_ALLOW_DELIVERY_TO"

// deliveryTargets reads --allow-delivery-to (else $ROBOTHUB_ALLOW_DELIVERY_TO) and adds the
// --bootstrap-webhook's address when it is an IP address or localhost: the operator named that
// receiver on the command line, as robothub dev names its own.
func deliveryTargets(c *cli.Context, e *env) ([]string, error) {
	targets := c.StringSlice("allow-delivery-to")
	if !c.IsSet("allow-delivery-to") {
		for _, t := range strings.Split(e.getenv(allowDeliveryEnv), ",") {
			if t = strings.TrimSpace(t); t != "" {
				targets = append(targets, t)
			}
		}
	}
	if _, err := egress.ParseAllowlist(targets); err != nil {
		return nil, cliapp.Usagef("--allow-delivery-to %v", err)
	}
	if u, err := url.Parse(c.String("bootstrap-webhook")); err == nil && u.Host != "" {
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		own := net.JoinHostPort(u.Hostname(), port)
		if _, err := egress.ParseAllowlist([]string{own}); err == nil {
			targets = append(targets, own)
		}
	}
	return targets, nil
}

// deliveryStopped is hub serve's exit when its delivery loop stopped. A database that cannot be
// written (a full or read-only disk) stops the hub rather than pausing it: the loop holds nothing
// the database does not, so a restart once the disk is fixed loses nothing. The API does not stop
// the hub: a change it cannot write answers 507 to that request, and was never accepted.
func deliveryStopped(dsn string, err error) error {
	var se *hubemu.StoreError
	if errors.As(err, &se) {
		return cli.Exit("hub serve: delivery stopped: "+err.Error()+"\n"+
			"Nothing accepted is lost: once the database can be written, start hub serve again on the same data "+
			"directory; pending deliveries are sent then, and a delivery whose result was not recorded is sent "+
			"again (at least once).", cliapp.ExitError)
	}
	return cli.Exit(fmt.Sprintf("hub serve: delivery stopped (database %s): %v", dsn, err), cliapp.ExitError)
}

func WriteTokenFile(path, token string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return WritePrivateFile(path, token+"\n")
}

// SameLocalRoute recognises, for a bootstrap webhook to a receiver on this machine, the URLs of the
// same route on this machine at any port: the webhook an earlier run made for its receiver, which
// Bootstrap points at this run's (the hub stores the URL of one run; after a change of ports it
// would retry against a port nobody listens on). It matches any of the targets on this machine;
// nil when none is: nothing is replaced.
func SameLocalRoute(targets ...string) func(string) bool {
	var local []*url.URL
	for _, target := range targets {
		if t, err := url.Parse(target); err == nil && isLocalHost(t.Hostname()) {
			local = append(local, t)
		}
	}
	if len(local) == 0 {
		return nil
	}
	return func(u string) bool {
		p, err := url.Parse(u)
		if err != nil || !isLocalHost(p.Hostname()) {
			return false
		}
		for _, t := range local {
			if p.Scheme == t.Scheme && p.Path == t.Path {
				return true
			}
		}
		return false
	}
}

func isLocalHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// nonEmpty is the strings of ss that are not empty.
func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// WritePrivateFile writes a secret to path, readable by its owner only (0600) whatever the umask
// and whatever mode the file had before (os.WriteFile keeps an existing file's mode). The mode is
// set before the secret is written.
func WritePrivateFile(path, secret string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.WriteString(secret); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// storeArgs repeats the --data-dir/--db flags of this command, for a printed hint.
func storeArgs(c *cli.Context) string {
	switch {
	case c.String("db") != "":
		return "--db " + hubconn.ShellQuote([]string{c.String("db")})
	case c.String("data-dir") != "":
		return "--data-dir " + hubconn.ShellQuote([]string{c.String("data-dir")})
	}
	return ""
}

func hubTokenCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "token",
		Usage:        "manage the local hub's access tokens",
		OnUsageError: cliapp.OnUsageError,
		Subcommands: []*cli.Command{{
			Name:  "create",
			Usage: "make an access token for a user of the local hub (the user is made if new)",
			UsageText: `robothub hub token create [--user NAME] [--role write|read] [--data-dir DIR | --db PATH]

It opens the hub's database directly, so it works whether or not robothub hub serve is running; give
the same --data-dir as the server. The token is shown once: the hub keeps only its hash.

Examples:
  robothub hub token create --user bob
  robothub hub token create --user ci --role read --format quiet`,
			Flags: append(storeFlags(),
				&cli.StringFlag{Name: "user", Value: "local", Usage: "the token's user `NAME`"},
				&cli.StringFlag{Name: "role", Value: hubemu.RoleWrite, Usage: "write (manage webhooks) or read (list and read only)"},
				&cli.StringFlag{Name: "name", Value: "robothub", Usage: "a `LABEL` for the token"},
				hubconn.FormatFlag()),
			OnUsageError: cliapp.OnUsageError,
			Action: func(c *cli.Context) error {
				format, err := hubconn.OutputFormat(c)
				if err != nil {
					return err
				}
				if c.NArg() > 0 {
					return cliapp.Usagef("hub token create takes no arguments, got %q: name the user with --user", c.Args().Slice())
				}
				dsn, err := storeDSN(c, e)
				if err != nil {
					return err
				}
				emu, err := localhub.Open(c.Context, localhub.Config{DSN: dsn})
				if err != nil {
					return cli.Exit(fmt.Sprintf("opening %s: %v", dsn, err), cliapp.ExitError)
				}
				defer emu.Close()
				token, user, err := emu.CreateToken(c.Context, c.String("user"), c.String("role"), c.String("name"))
				if errors.Is(err, fault.ErrInvalid) {
					return cliapp.Usagef("%v", err)
				}
				if err != nil {
					return cli.Exit(err.Error(), cliapp.ExitError)
				}
				v := map[string]string{"user": user.Name, "role": c.String("role"), "name": c.String("name"), "token": token}
				return hubconn.PrintResult(e.stdout, format, v, []string{token}, func() error {
					_, err := fmt.Fprintf(e.stdout, "# %s token for user %s (shown once)\nexport HF_TOKEN=%s\n", c.String("role"), user.Name, token)
					return err
				})
			},
		}},
	}
}

func hubEmitCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "emit",
		Usage: "make the local hub emit an event, as a push or a discussion would, and deliver it",
		UsageText: `robothub hub emit --repo TYPE:OWNER/NAME [--scope SCOPE] [--action ACTION] [options]

The event goes to every enabled webhook that watches the repo or its owner, within its domains.
Scopes and their actions: repo (create, update, delete, move), repo.content (update), repo.config
(update), discussion (create, update, delete), discussion.comment (create, update).

Examples:
  robothub hub emit --repo model:alice/bert                                   # a push to main
  robothub hub emit --repo dataset:alice/data --scope repo --action create
  robothub hub emit --repo space:alice/app --scope discussion --action create --pr --title "Fix typo"
  robothub hub emit --repo space:alice/app --scope discussion.comment --action create --comment "Thanks!"
  robothub hub emit --repo model:alice/bert --scope repo.config --action update --private
  robothub hub emit --repo model:alice/bert --scope repo --action move --moved-to acme/bert`,
		Flags: append(hubconn.Flags(),
			&cli.StringFlag{Name: "repo", Usage: "the repo, `TYPE:OWNER/NAME` with TYPE model, dataset, space or bucket"},
			&cli.StringFlag{Name: "scope", Value: "repo.content", Usage: "event `SCOPE`"},
			&cli.StringFlag{Name: "action", Value: "update", Usage: "event `ACTION`"},
			&cli.BoolFlag{Name: "private", Usage: "the repo is private (repo.config: the change made)"},
			&cli.BoolFlag{Name: "public", Usage: "the repo is public (repo.config: the change made)"},
			&cli.StringFlag{Name: "head-sha", Usage: "repo.content: the new `SHA` of main (default: a new random one)"},
			&cli.StringFlag{Name: "config", Usage: "repo.config: the updatedConfig `JSON` object, e.g. '{\"private\":true}'"},
			&cli.IntFlag{Name: "num", Usage: "discussion `NUMBER` (default: a new one on create, else the latest)"},
			&cli.StringFlag{Name: "title", Usage: "discussion `TITLE`"},
			&cli.BoolFlag{Name: "pr", Usage: "the discussion is a pull request"},
			&cli.StringFlag{Name: "status", Usage: "discussion `STATUS`: open, closed, merged or draft"},
			&cli.StringFlag{Name: "comment", Usage: "comment `TEXT`"},
			&cli.BoolFlag{Name: "hidden", Usage: "the comment is hidden (its text is then left out)"},
			&cli.StringFlag{Name: "moved-to", Usage: "repo move: the new `OWNER/NAME`"},
		),
		OnUsageError: cliapp.OnUsageError,
		Action: hubconn.Action(e.getenv, e.stderr, func(c *cli.Context, cl *hub.Client, format string, args []string) error {
			if err := hubconn.NoArgs(c, args, ": name the repo with --repo"); err != nil {
				return err
			}
			if c.String("repo") == "" {
				return cliapp.Usagef("hub emit: give the repo with --repo TYPE:OWNER/NAME, e.g. --repo model:alice/bert")
			}
			req := hubemu.EmitInput{Repo: c.String("repo"), Scope: c.String("scope"), Action: c.String("action"),
				HeadSha: c.String("head-sha"), MovedTo: c.String("moved-to")}
			switch {
			case c.Bool("private") && c.Bool("public"):
				return cliapp.Usagef("give --private or --public, not both")
			case c.Bool("private"):
				req.Private = new(true)
			case c.Bool("public"):
				req.Private = new(false)
			}
			if s := c.String("config"); s != "" {
				if !json.Valid([]byte(s)) || !strings.HasPrefix(strings.TrimSpace(s), "{") {
					return cliapp.Usagef("--config %q is not a JSON object", s)
				}
				req.UpdatedConfig = json.RawMessage(s)
			}
			if c.IsSet("num") || c.IsSet("title") || c.IsSet("pr") || c.IsSet("status") {
				req.Discussion = &hubemu.DiscussionInput{Num: c.Int("num"), Title: c.String("title"), IsPullRequest: c.Bool("pr"), Status: c.String("status")}
			}
			if c.IsSet("comment") || c.IsSet("hidden") {
				req.Comment = &hubemu.CommentInput{Content: c.String("comment"), Hidden: c.Bool("hidden")}
			}
			res, err := hubemu.Client{Client: cl}.Emit(c.Context, req)
			if err != nil {
				return err
			}
			return hubconn.PrintResult(e.stdout, format, res, hubconn.IDsOf(res.Deliveries, func(d hubemu.DeliveryRef) string { return d.ID }), func() error {
				fmt.Fprintf(e.stdout, "Event %s: %s %s on %s, %d deliveries.\n", res.EventID, req.Scope, req.Action, req.Repo, len(res.Deliveries))
				if len(res.Deliveries) == 0 {
					return nil
				}
				tw := hubconn.NewTable(e.stdout)
				fmt.Fprintln(tw, "DELIVERY\tWEBHOOK\tSTATE")
				for _, d := range res.Deliveries {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", d.ID, d.WebhookID, d.State)
				}
				return tw.Flush()
			})
		}),
	}
}

func hubJobCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "job",
		Usage:        "source jobs for job webhooks on the local hub: create, ls, runs, logs",
		OnUsageError: cliapp.OnUsageError,
		Subcommands: []*cli.Command{
			{
				Name:  "create",
				Usage: "store a source job: the command a job webhook runs on each event",
				UsageText: `robothub hub job create [--env NAME=VALUE ...] [--secret NAME[=VALUE] ...] [--format ...] -- COMMAND [ARGS...]

Each run is a local subprocess with the payload in $WEBHOOK_PAYLOAD (also WEBHOOK_REPO_ID,
WEBHOOK_REPO_TYPE, WEBHOOK_SECRET), the job's --env, and the webhook's own --secrets. The job's
--secret values are kept with the job and never handed to runs (a webhook passes its own). Options
go before the command.

Examples:
  robothub hub job create -- sh -c 'echo "$WEBHOOK_REPO_ID changed"'
  robothub hub job create --env MODE=fast --format quiet -- ./retrain.sh
  JOB=$(robothub hub job create --format quiet -- ./retrain.sh) && robothub webhooks create --job-id "$JOB" --watch user:local`,
				Flags: append(hubconn.Flags(),
					&cli.StringSliceFlag{Name: "env", Usage: "environment `NAME=VALUE` of every run (repeatable)"},
					&cli.StringSliceFlag{Name: "secret", Usage: "the job's own secret `NAME` (value from $NAME) or NAME=VALUE (repeatable)"}),
				OnUsageError: cliapp.OnUsageError,
				// Everything after the options is the command, flags included: run keeps its flags
				// where they are (cliapp.Interspersed's verbatim).
				Action: hubconn.Action(e.getenv, e.stderr, func(c *cli.Context, cl *hub.Client, format string, args []string) error {
					argv := args
					if len(argv) == 0 {
						return cliapp.Usagef("hub job create: give the command after --, e.g. robothub hub job create -- sh -c 'echo $WEBHOOK_REPO_ID'")
					}
					req := hubemu.JobInput{Command: argv, Environment: map[string]string{}, Secrets: map[string]string{}}
					for _, kv := range c.StringSlice("env") {
						k, v, ok := strings.Cut(kv, "=")
						if !ok {
							return cliapp.Usagef("--env %q: want NAME=VALUE", kv)
						}
						req.Environment[k] = v
					}
					for _, spec := range c.StringSlice("secret") {
						k, v, literal := strings.Cut(spec, "=")
						if !literal {
							var ok bool
							if v, ok = cliapp.LookupEnv(e.getenv, k); !ok {
								return cliapp.Usagef("--secret %s: the environment variable %s is not set (or give %s=VALUE)", k, k, k)
							}
						}
						req.Secrets[k] = v
					}
					job, err := hubemu.Client{Client: cl}.CreateSourceJob(c.Context, req)
					if err != nil {
						return err
					}
					return hubconn.PrintResult(e.stdout, format, job, []string{job.ID}, func() error {
						_, err := fmt.Fprintf(e.stdout, "Created job %s: %s\nUse it with: robothub webhooks create --job-id %s --watch TYPE:NAME\n", job.ID, hubconn.ShellQuote(job.Command), job.ID)
						return err
					})
				}),
			},
			{
				Name:         "ls",
				Usage:        "list your source jobs",
				UsageText:    "robothub hub job ls [--format table|json|quiet]",
				Flags:        hubconn.Flags(),
				OnUsageError: cliapp.OnUsageError,
				Action: hubconn.Action(e.getenv, e.stderr, func(c *cli.Context, cl *hub.Client, format string, args []string) error {
					jobs, err := hubemu.Client{Client: cl}.SourceJobs(c.Context)
					if err != nil {
						return err
					}
					if jobs == nil {
						jobs = []hubemu.SourceJobRecord{} // JSON: [], not null
					}
					return hubconn.PrintResult(e.stdout, format, jobs, hubconn.IDsOf(jobs, func(j hubemu.SourceJobRecord) string { return j.ID }), func() error {
						tw := hubconn.NewTable(e.stdout)
						fmt.Fprintln(tw, "ID\tCOMMAND\tSECRETS\tCREATED")
						for _, j := range jobs {
							fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", j.ID, hubconn.ShellQuote(j.Command), strings.Join(j.Secrets, ","), j.CreatedAt.Local().Format(time.DateTime))
						}
						return tw.Flush()
					})
				}),
			},
			{
				Name:  "runs",
				Usage: "list the runs of a job webhook, newest first",
				UsageText: `robothub hub job runs WEBHOOK_ID [--format table|json|quiet]

Example:
  robothub hub job runs 6571a3f0c9d2e4b1a8f0def0`,
				Flags:        hubconn.Flags(),
				OnUsageError: cliapp.OnUsageError,
				BashComplete: hubconn.CompleteWebhookIDs(e.getenv, e.stdout, e.stderr),
				Action: hubconn.ActionOn(e.getenv, e.stderr, "WEBHOOK_ID", func(c *cli.Context, cl *hub.Client, format, id string) error {
					runs, err := hubemu.Client{Client: cl}.JobRuns(c.Context, id, 0)
					if err != nil {
						return err
					}
					if runs == nil {
						runs = []hubemu.JobRun{} // JSON: [], not null
					}
					return hubconn.PrintResult(e.stdout, format, runs, hubconn.IDsOf(runs, func(r hubemu.JobRun) string { return r.ID }), func() error {
						tw := hubconn.NewTable(e.stdout)
						fmt.Fprintln(tw, "RUN\tSTATE\tEXIT\tSTARTED\tDURATION\tERROR")
						for _, r := range runs {
							exit, dur := "-", "-"
							if r.ExitCode != nil {
								exit = fmt.Sprint(*r.ExitCode)
							}
							if r.FinishedAt != nil {
								dur = r.FinishedAt.Sub(r.StartedAt).String()
							}
							fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.State, exit, r.StartedAt.Local().Format(time.DateTime), dur, r.Error)
						}
						return tw.Flush()
					})
				}),
			},
			{
				Name:  "logs",
				Usage: "print the output of one job run",
				UsageText: `robothub hub job logs RUN_ID [--format table|json]

Example:
  robothub hub job logs 6571a5d0aa01b2c3d4e5f602`,
				Flags:        hubconn.Flags(),
				OnUsageError: cliapp.OnUsageError,
				Action: hubconn.ActionOn(e.getenv, e.stderr, "RUN_ID", func(c *cli.Context, cl *hub.Client, format, id string) error {
					run, err := hubemu.Client{Client: cl}.JobRun(c.Context, id)
					if err != nil {
						return err
					}
					if format == "json" {
						return hubconn.PrintJSON(e.stdout, run)
					}
					_, err = fmt.Fprint(e.stdout, run.Log)
					return err
				}),
			},
		},
	}
}
