// Package hubconn is what every robothub command that talks to a hub shares: the --token,
// --endpoint and --format flags, the client they build, and the one place where the hub's
// refusals become what the user reads (with a hint and an exit code).
package hubconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/robothub/robothub/cli/cliapp"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/hubemu"
)

// Flags shared by every command that talks to a hub.
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "token", Usage: "hub access `TOKEN` (default $HF_TOKEN, then the token file: $HF_TOKEN_PATH, $HF_HOME/token, ~/.cache/huggingface/token)"},
		&cli.StringFlag{Name: "endpoint", Usage: "hub base `URL` (default $HF_ENDPOINT, then " + hub.DefaultEndpoint + "); e.g. http://127.0.0.1:7861 for robothub hub serve"},
		FormatFlag(),
	}
}

func FormatFlag() cli.Flag {
	return &cli.StringFlag{Name: "format", Value: "table", Usage: "output `FORMAT`: table (for people), json (stable, for scripts) or quiet (IDs only)"}
}

// OutputFormat reads and checks --format.
func OutputFormat(c *cli.Context) (string, error) {
	f := c.String("format")
	switch f {
	case "table", "json", "quiet":
		return f, nil
	}
	return "", cliapp.Usagef("--format %q: use table, json or quiet", f)
}

// NewClient builds a client from --endpoint/--token and the environment. Retries are reported
// on stderr; the token never is.
func NewClient(c *cli.Context, getenv func(string) string, stderr io.Writer) (*hub.Client, error) {
	cfg, err := hub.ConfigFromEnv(getenv, inherited(c, "endpoint"), inherited(c, "token"))
	var ve *hub.ValidationError
	if errors.As(err, &ve) {
		return nil, cliapp.Usagef("%v", err) // a bad --endpoint or HF_ENDPOINT: nothing was sent
	}
	if err != nil {
		return nil, err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cl, err := hub.New(cfg.Endpoint, hub.WithToken(cfg.Token), hub.WithLogger(logger))
	if err != nil {
		return nil, cliapp.Usagef("%v", err)
	}
	return cl, nil
}

// inherited reads a string flag set on this command or on one of its parents ("robothub webhooks
// --token T ls" and "robothub webhooks ls --token T" both work).
func inherited(c *cli.Context, name string) string {
	for _, cc := range c.Lineage() {
		if cc.Command != nil && findFlag(cc.Command.Flags, name) != nil && cc.IsSet(name) {
			return cc.String(name)
		}
	}
	return ""
}

// ConnectionFlags are --token and --endpoint, which the webhooks and hub commands also accept
// before their subcommand.
func ConnectionFlags() []cli.Flag { return Flags()[:2] }

// UserError turns a client error into what the user reads: a mistake on the command line (exit 2),
// or the hub's refusal with a hint (exit 1).
func UserError(cl *hub.Client, err error) error {
	if err == nil {
		return nil
	}
	var ue *cliapp.UsageError
	if errors.As(err, &ue) {
		return err
	}
	var ve *hub.ValidationError
	if errors.As(err, &ve) {
		return &cliapp.UsageError{Err: err}
	}
	var hint string
	var te *hub.TransportError
	var he *hub.Error
	switch {
	case errors.Is(err, fault.ErrUnauthenticated):
		if cl.HasToken() {
			hint = "the hub at " + cl.Endpoint() + " does not accept this token: check --token, $HF_TOKEN or the token file"
		} else {
			hint = "no token: pass --token, set $HF_TOKEN, or write the token file (for the local hub: robothub hub token create)"
		}
	case errors.Is(err, fault.ErrForbidden) && errors.As(err, &he) && strings.Contains(he.Message, "--allow-jobs"):
		// The local hub refuses jobs it was not started for: the fix is the hub's flag, which its
		// message names, not another token.
	case errors.Is(err, fault.ErrForbidden):
		hint = "this token may not do that: use a token with the write role"
	case errors.Is(err, fault.ErrNotFound) && errors.As(err, &he) && strings.HasPrefix(he.Path, hub.WebhooksPath+"/"):
		hint = "no such webhook for this token's user on " + cl.Endpoint() + ": list yours with robothub webhooks ls"
	case errors.Is(err, fault.ErrNotFound) && errors.As(err, &he) && (strings.HasPrefix(he.Path, hub.SpacesPath+"/") || he.Path == hub.DeleteRepoPath):
		hint = "no such space that this token's user may see on " + cl.Endpoint() + ": list them with robothub hub spaces ls"
	case errors.Is(err, fault.ErrNotFound) && errors.As(err, &he) && strings.HasPrefix(he.Path, hubemu.APIPath+"/") && !isLoopback(cl.Endpoint()):
		hint = "this command works against the local hub (robothub hub serve) only"
	case errors.As(err, &te) && !errors.Is(err, context.Canceled):
		hint = "cannot reach the hub at " + cl.Endpoint()
		if isLoopback(cl.Endpoint()) {
			hint += ": is robothub hub serve (or robothub dev, make run) running there?"
		} else if strings.TrimRight(cl.Endpoint(), "/") == strings.TrimRight(hub.DefaultEndpoint, "/") {
			// HF_ENDPOINT unset means the public hub: a newcomer who meant the local one saw only
			// retries against it.
			hint += " (the public hub: HF_ENDPOINT and --endpoint are not set; for the local hub, export HF_ENDPOINT=http://127.0.0.1:7861 as robothub dev prints)"
		}
	}
	if hint != "" {
		return cli.Exit(fmt.Sprintf("%v\n  %s", err, hint), cliapp.ExitError)
	}
	return cli.Exit(err.Error(), cliapp.ExitError)
}

func isLoopback(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// OneArg returns the single positional argument called what ("WEBHOOK_ID").
func OneArg(c *cli.Context, pos []string, what string) (string, error) {
	switch len(pos) {
	case 0:
		return "", cliapp.Usagef("%s: missing %s (see robothub webhooks ls)", c.Command.FullName(), what)
	case 1:
		return pos[0], nil
	}
	return "", cliapp.Usagef("%s takes one %s, got %d arguments: %q", c.Command.FullName(), what, len(pos), pos)
}

// IsTerminal reports whether r is an interactive terminal (not merely a character device such as
// /dev/null). Tests replace it.
var IsTerminal = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
