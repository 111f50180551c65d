// Package webhookscmd is `robothub webhooks`: it manages a hub account's webhooks through core/hub.
// Both binaries serve it, robothub (the front) and robothub-server.
package webhookscmd

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/robothub/robothub/cli/cliapp"
	"github.com/robothub/robothub/cli/hubconn"

	"github.com/urfave/cli/v2"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/egress"
	"github.com/robothub/robothub/internal/hubemu"
)

// env is the outside world of one run: the caller's environment and output streams.
type env struct {
	getenv         func(string) string
	stdin          io.Reader
	stdout, stderr io.Writer
}

// Command is `robothub webhooks`: the hub's webhook management (ls, info, create, update, enable,
// disable, delete) and the local hub's activity and replay. Both robothub and robothub-server
// serve it.
func Command(getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) *cli.Command {
	e := &env{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	return &cli.Command{
		Name:  "webhooks",
		Usage: cliapp.RobothubUsageOf("webhooks"),
		Flags: hubconn.ConnectionFlags(),
		Description: `Talks to the hub at $HF_ENDPOINT (default ` + hub.DefaultEndpoint + `) with the token in --token,
$HF_TOKEN or the token file. Against the local hub, first run: robothub hub serve

Exit codes: 0 done, 1 the hub refused or could not be reached, 2 the command line is wrong.`,
		OnUsageError: cliapp.OnUsageError,
		Subcommands: []*cli.Command{
			webhooksLsCommand(e),
			webhooksInfoCommand(e),
			webhooksCreateCommand(e),
			webhooksUpdateCommand(e),
			webhooksStateCommand(e, "enable", "enable a disabled webhook: deliveries resume", (*hub.Client).Enable),
			webhooksStateCommand(e, "disable", "disable a webhook: it is kept but receives nothing", (*hub.Client).Disable),
			webhooksDeleteCommand(e),
			webhooksActivityCommand(e),
			webhooksReplayCommand(e),
		},
	}
}

func webhooksLsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:    "ls",
		Aliases: []string{"list"},
		Usage:   "list your webhooks: ID, URL (or \"(job)\"), status, domains, watched items",
		UsageText: `robothub webhooks ls [--format table|json|quiet]

Examples:
  robothub webhooks ls
  robothub webhooks ls --format json | jq '.[] | select(.status == "disabled") | .id'
  robothub webhooks ls --format quiet | xargs -n1 robothub webhooks disable`,
		Flags:        hubconn.Flags(),
		OnUsageError: cliapp.OnUsageError,
		Action: hubconn.Action(e.getenv, e.stderr, func(c *cli.Context, cl *hub.Client, format string, args []string) error {
			if err := hubconn.NoArgs(c, args, ""); err != nil {
				return err
			}
			list, err := cl.List(c.Context)
			if err != nil {
				return err
			}
			return printWebhooks(e.stdout, format, list)
		}),
	}
}

func webhooksInfoCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "info",
		Usage: "show one webhook in full",
		UsageText: `robothub webhooks info WEBHOOK_ID [--show-secret] [--format table|json|quiet]

Examples:
  robothub webhooks info 6571a3f0c9d2e4b1a8f0def0
  robothub webhooks info 6571a3f0c9d2e4b1a8f0def0 --format json`,
		Flags: append(hubconn.Flags(),
			&cli.BoolFlag{Name: "show-secret", Usage: "print the webhook's secret (hidden by default so that it stays out of terminals and CI logs)"}),
		OnUsageError: cliapp.OnUsageError,
		BashComplete: hubconn.CompleteWebhookIDs(e.getenv, e.stdout, e.stderr),
		Action: hubconn.ActionOn(e.getenv, e.stderr, "WEBHOOK_ID", func(c *cli.Context, cl *hub.Client, format, id string) error {
			w, err := cl.Get(c.Context, id)
			if err != nil {
				return err
			}
			return printWebhook(e.stdout, format, "", w, c.Bool("show-secret"))
		}),
	}
}

// Flags that describe a webhook, for create and update.
func webhookSpecFlags(update bool) []cli.Flag {
	replaces := ""
	if update {
		replaces = "; on update the list replaces the stored one"
	}
	return []cli.Flag{
		&cli.StringFlag{Name: "url", Usage: "send payloads to `URL` (absolute http:// or https://), e.g. --url https://example.com/webhooks/retrain"},
		&cli.StringFlag{Name: "job-id", Usage: "instead of a URL, run the source job `ID` on each event, e.g. --job-id 687f911eaea852de79c4a50a"},
		&cli.StringSliceFlag{Name: "watch", Aliases: []string{"w"}, Usage: "follow `TYPE:NAME` (repeatable" + replaces + "); types: " +
			strings.Join(hub.WatchTypes, ", ") + "; e.g. --watch model:alice/bert --watch org:acme"},
		&cli.StringSliceFlag{Name: "domain", Aliases: []string{"d"}, Usage: "follow `DOMAIN` activity: repo or discussion (\"discussions\" is accepted; repeatable" +
			replaces + "; create defaults to both), e.g. --domain repo"},
		&cli.StringFlag{Name: "secret", Usage: "`SECRET` the hub sends in X-Webhook-Secret (printable ASCII)" + map[bool]string{true: "; --secret '' removes it", false: ""}[update] +
			"; prefer --secret-env: flags show in ps"},
		&cli.StringFlag{Name: "secret-env", Usage: "read the webhook secret from environment variable `NAME`, e.g. --secret-env WEBHOOK_SECRET"},
		&cli.StringSliceFlag{Name: "secrets", Usage: "job webhooks: hand secret `NAME` (value from $NAME) or NAME=VALUE to each run (repeatable)" +
			map[bool]string{true: "; needs --job-id; NAME= removes it, unlisted secrets are kept", false: ""}[update] + ", e.g. --secrets HF_TOKEN"},
	}
}

// readSpec reads the webhook-describing flags shared by create and update.
func readSpec(c *cli.Context, e *env) (watched []hub.WatchedItem, domains []string, secret *string, secrets map[string]string, err error) {
	if c.IsSet("watch") {
		watched = []hub.WatchedItem{}
		for _, s := range c.StringSlice("watch") {
			w, err := hub.ParseWatchedItem(s)
			if err != nil {
				return nil, nil, nil, nil, cliapp.Usagef("--watch %v", strings.TrimPrefix(err.Error(), "watch: "))
			}
			watched = append(watched, w)
		}
	}
	if c.IsSet("domain") {
		if domains, err = hub.NormalizeDomains(c.StringSlice("domain")); err != nil {
			return nil, nil, nil, nil, cliapp.Usagef("--domain: %v", err)
		}
	}
	switch {
	case c.IsSet("secret") && c.IsSet("secret-env"):
		return nil, nil, nil, nil, cliapp.Usagef("give --secret or --secret-env, not both")
	case c.IsSet("secret"):
		s := c.String("secret")
		secret = &s
	case c.IsSet("secret-env"):
		name := c.String("secret-env")
		s, ok := cliapp.LookupEnv(e.getenv, name)
		if !ok {
			return nil, nil, nil, nil, cliapp.Usagef("--secret-env %s: the environment variable %s is not set", name, name)
		}
		secret = &s
	}
	if c.IsSet("secrets") {
		secrets = map[string]string{}
		for _, spec := range c.StringSlice("secrets") {
			name, value, literal := strings.Cut(spec, "=")
			if !literal {
				v, ok := cliapp.LookupEnv(e.getenv, name)
				if !ok {
					return nil, nil, nil, nil, cliapp.Usagef("--secrets %s: the environment variable %s is not set (or give %s=VALUE)", name, name, name)
				}
				value = v
			}
			secrets[name] = value
		}
	}
	return watched, domains, secret, secrets, nil
}

func webhooksCreateCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "create",
		Usage: "create a webhook that POSTs payloads to a URL, or runs a job, on changes to what it watches",
		UsageText: `robothub webhooks create (--url URL | --job-id ID) --watch TYPE:NAME [--watch ...] [options]

Examples:
  robothub webhooks create --url https://example.com/webhooks/retrain --watch model:alice/bert
  robothub webhooks create --url https://example.com/hook --watch org:acme --watch dataset:alice/data --domain repo
  WEBHOOK_SECRET=s3cret robothub webhooks create --url https://example.com/hook --watch user:alice --secret-env WEBHOOK_SECRET
  robothub webhooks create --job-id 687f911eaea852de79c4a50a --watch user:alice --secrets HF_TOKEN --secrets MODE=fast
  robothub webhooks create --url https://example.com/hook --watch user:alice --format quiet   # prints the new ID only`,
		Flags:        append(hubconn.Flags(), webhookSpecFlags(false)...),
		OnUsageError: cliapp.OnUsageError,
		Action: hubconn.Action(e.getenv, e.stderr, func(c *cli.Context, cl *hub.Client, format string, args []string) error {
			if err := hubconn.NoArgs(c, args, ": give the URL with --url"); err != nil {
				return err
			}
			watched, domains, secret, secrets, err := readSpec(c, e)
			if err != nil {
				return err
			}
			req := hub.CreateRequest{URL: c.String("url"), JobID: c.String("job-id"), Watched: watched, Domains: domains, Secrets: secrets}
			if secret != nil {
				req.Secret = *secret
			}
			if _, err := req.Validate(); err != nil {
				return cliapp.Usagef("%v", cliWording(err))
			}
			w, err := cl.Create(c.Context, req)
			if err != nil {
				return err
			}
			warnRefusedTarget(e, req.URL, w.ID)
			return printWebhook(e.stdout, format, "Created webhook "+w.ID+".", w, false)
		}),
	}
}

// warnRefusedTarget warns, on stderr, when the webhook's URL names this machine's loopback or a
// link-local address: the hub accepts the webhook but refuses each delivery to it, as it acts
// for a hub user (the public hub always; the local hub unless allowed), and a newcomer saw only
// failed deliveries. The CLI cannot know a local hub's --allow-delivery-to: the warning says when
// it applies. Names other than localhost resolve at delivery time and are not guessed at here.
func warnRefusedTarget(e *env, raw, id string) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return
	}
	ip, err := netip.ParseAddr(u.Hostname())
	if strings.EqualFold(u.Hostname(), "localhost") {
		ip, err = netip.MustParseAddr("127.0.0.1"), nil
	}
	if err != nil {
		return
	}
	reason := egress.Reason(ip)
	if reason == "" {
		return
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	fmt.Fprintf(e.stderr, "warning: %s is %s: a hub delivers there only when it allows it (the local hub: robothub hub serve --allow-delivery-to %s); the public hub never does. robothub webhooks activity %s says why a delivery was refused.\n",
		u.Host, reason, net.JoinHostPort(u.Hostname(), port), id)
}

// cliWording names flags rather than API fields in a validation error.
func cliWording(err error) string {
	return strings.NewReplacer("url: give the URL to send payloads to, or the ID of a source job to run",
		"give --url URL or --job-id ID", "url: give a URL or a job ID, not both", "give --url or --job-id, not both",
		"watched: watch at least one item", "give --watch TYPE:NAME at least once", "job_id:", "--job-id:", "url:", "--url:",
		"secrets:", "--secrets:", "secret:", "--secret:", "domains:", "--domain:").Replace(err.Error())
}

func webhooksUpdateCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "update",
		Usage: "change a webhook: only the options you give change, everything else is kept",
		UsageText: `robothub webhooks update WEBHOOK_ID [--url URL] [--watch TYPE:NAME ...] [--domain D ...] [--secret S] [--job-id ID --secrets ...]

Examples:
  robothub webhooks update 6571a3f0c9d2e4b1a8f0def0 --url https://new.example.com/webhooks/retrain
  robothub webhooks update 6571a3f0c9d2e4b1a8f0def0 --watch model:alice/bert --watch model:alice/gpt   # replaces the list
  robothub webhooks update 6571a3f0c9d2e4b1a8f0def0 --domain repo
  robothub webhooks update 6571a3f0c9d2e4b1a8f0def0 --secret ''      # removes the secret
  robothub webhooks update 6571a3f0c9d2e4b1a8f0def0 --job-id 687f911eaea852de79c4a50a --secrets HF_TOKEN --secrets OLD=`,
		Flags:        append(hubconn.Flags(), webhookSpecFlags(true)...),
		OnUsageError: cliapp.OnUsageError,
		BashComplete: hubconn.CompleteWebhookIDs(e.getenv, e.stdout, e.stderr),
		Action: hubconn.ActionOn(e.getenv, e.stderr, "WEBHOOK_ID", func(c *cli.Context, cl *hub.Client, format, id string) error {
			watched, domains, secret, secrets, err := readSpec(c, e)
			if err != nil {
				return err
			}
			req := hub.UpdateRequest{Watched: watched, Domains: domains, Secret: secret, JobID: c.String("job-id"), Secrets: secrets}
			if c.IsSet("url") {
				u := c.String("url")
				req.URL = &u
			}
			if _, err := req.Validate(); err != nil {
				msg := cliWording(err)
				if strings.Contains(msg, "nothing to update") {
					msg = "nothing to update: give at least one of --url, --watch, --domain, --secret, or --job-id with --secrets"
				}
				return cliapp.Usagef("%s", msg)
			}
			w, err := cl.Update(c.Context, id, req)
			if err != nil {
				return err
			}
			if req.URL != nil {
				warnRefusedTarget(e, *req.URL, w.ID)
			}
			return printWebhook(e.stdout, format, "Updated webhook "+w.ID+".", w, false)
		}),
	}
}

func webhooksStateCommand(e *env, name, usage string, call func(*hub.Client, context.Context, string) (*hub.Webhook, error)) *cli.Command {
	past := map[string]string{"enable": "Enabled", "disable": "Disabled"}[name]
	return &cli.Command{
		Name:  name,
		Usage: usage,
		UsageText: fmt.Sprintf(`robothub webhooks %s WEBHOOK_ID [--format table|json|quiet]

Example:
  robothub webhooks %s 6571a3f0c9d2e4b1a8f0def0`, name, name),
		Flags:        hubconn.Flags(),
		OnUsageError: cliapp.OnUsageError,
		BashComplete: hubconn.CompleteWebhookIDs(e.getenv, e.stdout, e.stderr),
		Action: hubconn.ActionOn(e.getenv, e.stderr, "WEBHOOK_ID", func(c *cli.Context, cl *hub.Client, format, id string) error {
			w, err := call(cl, c.Context, id)
			if err != nil {
				return err
			}
			return printWebhook(e.stdout, format, past+" webhook "+w.ID+".", w, false)
		}),
	}
}

func webhooksDeleteCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "delete",
		Usage: "delete a webhook for good (asks first; --yes does not)",
		UsageText: `robothub webhooks delete WEBHOOK_ID [--yes] [--format table|json|quiet]

On a terminal it asks "Delete webhook ...? [y/N]". Without a terminal (scripts, CI) it refuses unless
--yes is given.

Examples:
  robothub webhooks delete 6571a3f0c9d2e4b1a8f0def0
  robothub webhooks delete 6571a3f0c9d2e4b1a8f0def0 --yes`,
		Flags: append(hubconn.Flags(),
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "delete without asking, e.g. in a script"}),
		OnUsageError: cliapp.OnUsageError,
		BashComplete: hubconn.CompleteWebhookIDs(e.getenv, e.stdout, e.stderr),
		Action: hubconn.ActionOn(e.getenv, e.stderr, "WEBHOOK_ID", func(c *cli.Context, cl *hub.Client, format, id string) error {
			if !c.Bool("yes") {
				if err := hubconn.ConfirmDelete(e.stdin, e.stderr, "webhook "+id, "Delete webhook "+id+"? This cannot be undone."); err != nil {
					return err
				}
			}
			if err := cl.Delete(c.Context, id); err != nil {
				return err
			}
			return hubconn.PrintDeleted(e.stdout, format, "webhook", id)
		}),
	}
}

func webhooksActivityCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "activity",
		Usage: "show a webhook's recent deliveries and every attempt (local hub only)",
		UsageText: `robothub webhooks activity WEBHOOK_ID [--limit N] [--format table|json|quiet]

Each attempt shows its time, the receiver's HTTP status, the latency and the error, if any. The public
hub shows this in the webhook's settings page; this command works against robothub hub serve.

Examples:
  robothub webhooks activity 6571a3f0c9d2e4b1a8f0def0
  robothub webhooks activity 6571a3f0c9d2e4b1a8f0def0 --limit 5 --format json`,
		Flags: append(hubconn.Flags(),
			&cli.IntFlag{Name: "limit", Value: 20, Usage: "show the latest `N` deliveries (1 to 1000)"}),
		OnUsageError: cliapp.OnUsageError,
		BashComplete: hubconn.CompleteWebhookIDs(e.getenv, e.stdout, e.stderr),
		Action: hubconn.ActionOn(e.getenv, e.stderr, "WEBHOOK_ID", func(c *cli.Context, cl *hub.Client, format, id string) error {
			if n := c.Int("limit"); n < 1 || n > 1000 {
				return cliapp.Usagef("--limit %d: use 1 to 1000", n)
			}
			a, err := hubemu.Client{Client: cl}.Activity(c.Context, id, c.Int("limit"))
			if err != nil {
				return err
			}
			return printActivity(e.stdout, format, a)
		}),
	}
}

func webhooksReplayCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "replay",
		Usage: "send a past delivery's event again, to the webhook's current URL and secret (local hub only)",
		UsageText: `robothub webhooks replay WEBHOOK_ID DELIVERY_ID [--format table|json|quiet]

Find DELIVERY_ID with robothub webhooks activity WEBHOOK_ID.

Example:
  robothub webhooks replay 6571a3f0c9d2e4b1a8f0def0 6571a4c2aa01b2c3d4e5f601`,
		Flags:        hubconn.Flags(),
		OnUsageError: cliapp.OnUsageError,
		Action: hubconn.Action(e.getenv, e.stderr, func(c *cli.Context, cl *hub.Client, format string, args []string) error {
			pos := args
			if len(pos) != 2 {
				return cliapp.Usagef("webhooks replay takes WEBHOOK_ID and DELIVERY_ID, got %d arguments", len(pos))
			}
			ref, err := hubemu.Client{Client: cl}.Replay(c.Context, pos[0], pos[1])
			if err != nil {
				return err
			}
			return hubconn.PrintResult(e.stdout, format, ref, []string{ref.ID}, func() error {
				_, err := fmt.Fprintf(e.stdout, "Replaying delivery %s as delivery %s (%s).\n", pos[1], ref.ID, ref.State)
				return err
			})
		}),
	}
}
