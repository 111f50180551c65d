package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/version"
)

// spaceRemote is the name of the git remote that points at the app's space.
const spaceRemote = "space"

func publishCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "publish",
		Usage:     "publish an app package to a hub space (create it if needed, commit, push)",
		ArgsUsage: "<path> [commit_message]",
		Description: `Publishes the app at <path> to the space <user>/<app_name> on the hub:
  1. checks the token: it must have write permission (--token, else $HF_TOKEN, else the token file:
     $HF_TOKEN_PATH, $HF_HOME/token, or ~/.cache/huggingface/token); the hub is $HF_ENDPOINT
     (default https://huggingface.co);
  2. runs check (unless --nocheck);
  3. creates the space (a static space) if it does not exist;
  4. commits everything in <path> (a git repository is made if there is none) and pushes it to
     the space's main branch with git, through the remote "space"; without git on PATH, it makes
     the space's main hold exactly the folder's files (less those .gitignore names) in one commit
     through the hub's commit API instead.
git runs without the folder's hooks, its fsmonitor, its filter, diff and merge drivers, its
credential helpers, and without the system's and user's git configuration; the push goes out of a
throw-away repository that borrows the folder's objects, so no configuration of the folder reaches
it. Only that push gets the token, in an HTTP header passed through its environment: it is never
written to .git/config or shown.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "token", Usage: "hub token with write permission (default $HF_TOKEN, then the token file)"},
			&cli.BoolFlag{Name: "nocheck", Usage: "publish without running check first"},
			&cli.BoolFlag{Name: "private", Usage: "create the space private (when it does not exist yet)"},
			&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "commit message (default \"Update <app>\")"},
			&cli.StringFlag{Name: "python", Usage: "the Python interpreter check uses (default $" + envPython + ", then python3)"},
			&cli.BoolFlag{Name: "system-site-packages", Usage: "check's venvs see the interpreter's own packages (default $" + envSystemSite + ")"},
			&cli.StringSliceFlag{Name: "wheel-dir", Usage: "offline wheels for check's install (default " + defaultWheelDir + ")"},
		},
		OnUsageError: onUsageError,
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 || c.NArg() > 2 {
				return usagef("publish needs <path> and optionally a commit message, got %d argument(s)", c.NArg())
			}
			msg := c.String("message")
			if c.NArg() == 2 {
				if msg != "" {
					return usagef("give the commit message once: as an argument or with --message")
				}
				msg = c.Args().Get(1)
			}
			return publishApp(c.Context, e, publishOptions{
				dir: c.Args().First(), token: c.String("token"), noCheck: c.Bool("nocheck"),
				private: c.Bool("private"), message: msg, check: checkOptionsFrom(c, e, c.Args().First()),
			})
		},
	}
}

// publishOptions says what to publish and how.
type publishOptions struct {
	dir, token, message string
	private, noCheck    bool
	check               checkOptions
}

// publishApp publishes the package at opts.dir to the space <user>/<app> and prints its URL.
func publishApp(ctx context.Context, e *env, opts publishOptions) error {
	dir, err := filepath.Abs(opts.dir)
	if err != nil {
		return err
	}
	if !isDir(dir) {
		return fmt.Errorf("%s is not a directory: give the folder of the app package", opts.dir)
	}
	if opts.check.python == "" {
		opts.check = defaultCheckOptions(e)
	}
	opts.check.dir = dir

	// 1. The token, first: nothing else is worth doing without one that can write.
	cfg, err := hub.ConfigFromEnv(e.getenv, "", opts.token)
	if err != nil {
		return err
	}
	cfg.Endpoint = strings.TrimRight(cfg.Endpoint, "/")
	if cfg.Token == "" {
		where := "a token file"
		if p := hub.TokenPath(e.getenv); p != "" {
			where = p
		}
		return fmt.Errorf("publishing needs a hub token with write permission: pass --token, set HF_TOKEN, or save the token in %s (%s)", where, createTokenHint(cfg.Endpoint))
	}
	client, err := hub.New(cfg.Endpoint, hub.WithToken(cfg.Token), hub.WithUserAgent("robot-app-assistant/"+version.String()))
	if err != nil {
		return fmt.Errorf("HF_ENDPOINT: %s", strings.TrimPrefix(err.Error(), "endpoint: "))
	}
	who, err := client.WhoAmI(ctx)
	var he *hub.Error
	switch {
	case errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden):
		return fmt.Errorf("the hub at %s refused the token from %s (%d: %s): %s",
			cfg.Endpoint, cfg.TokenSource, he.Status, he.Message, createTokenHint(cfg.Endpoint))
	case err != nil:
		return fmt.Errorf("asking the hub at %s who the token belongs to: %w%s", cfg.Endpoint, err, unreachableHubHint(e.getenv, cfg.Endpoint, err))
	case who.Name == "":
		return fmt.Errorf("asking the hub at %s who the token belongs to: the answer names no user", cfg.Endpoint)
	case !who.CanWrite(who.Name):
		role := who.Role()
		if role == "" {
			role = "unknown"
		}
		return fmt.Errorf("the token from %s (user %s) has %s permission: publishing needs write permission; %s",
			cfg.TokenSource, who.Name, role, createTokenHint(cfg.Endpoint))
	}
	fmt.Fprintf(e.stdout, "Publishing as %s to %s\n", who.Name, cfg.Endpoint)

	// 2. The checks (they also tell the app's name).
	app := ""
	if opts.noCheck {
		fmt.Fprintln(e.stdout, "Skipping the checks (--nocheck).")
		app = appNameOf(ctx, e, opts.check.python, dir)
	} else {
		r, err := checkApp(ctx, e, opts.check)
		if err != nil {
			return err
		}
		if n := r.problems(); n > 0 {
			return fmt.Errorf("not published: %w; fix them, or publish anyway with --nocheck", &checkFailedError{dir: dir, problems: n})
		}
		fmt.Fprintln(e.stdout, "All checks passed.")
		app = r.app
	}
	if err := validateAppName(app); err != nil {
		return fmt.Errorf("cannot name the space: %v", err)
	}
	if opts.message == "" {
		opts.message = "Update " + app
	}

	// The folder's repository is checked before anything is created or pushed.
	gitDir := ""
	if _, ok := gitAvailable(e.getenv); ok {
		if gitDir, err = gitDirOf(ctx, e, dir); err != nil {
			return fmt.Errorf("not published: %w", err)
		}
	}

	// 3. The space.
	created := true
	_, err = client.CreateRepo(ctx, hub.CreateRepoRequest{Type: "space", ID: who.Name + "/" + app, Private: opts.private, SDK: "static"})
	switch {
	case errors.Is(err, fault.ErrRefused): // it exists: publish updates it
		created = false
	case err != nil:
		return fmt.Errorf("creating the space %s/%s: %w", who.Name, app, err)
	}
	spaceURL := client.SpaceGitURL(who.Name + "/" + app)
	if created {
		fmt.Fprintf(e.stdout, "Created the space %s/%s\n", who.Name, app)
	} else {
		fmt.Fprintf(e.stdout, "The space %s/%s exists: updating it\n", who.Name, app)
	}

	// 4. Commit and push; without git, one commit through the hub's commit API.
	if git, ok := gitAvailable(e.getenv); !ok {
		fmt.Fprintf(e.stdout, "No %s on PATH: publishing through the hub's commit API instead of git\n", git)
		if err := commitByAPI(ctx, e, client, who.Name+"/"+app, dir, opts.message); err != nil {
			return err
		}
	} else {
		g := &gitRunner{e: e, dir: dir, gitDir: gitDir, token: cfg.Token, authEnv: gitAuthEnv(cfg.Endpoint, who.Name, cfg.Token)}
		if err := g.neutralizeDrivers(ctx); err != nil {
			return err
		}
		if err := g.commitAll(ctx, opts.message, who.Name, cfg.Endpoint); err != nil {
			return err
		}
		if err := g.pushTo(ctx, spaceURL, created); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stdout, "Published %s/%s: %s\n", who.Name, app, spaceURL)
	// The robot's address is not the hub's to tell: ROBOT_DAEMON_URL when the user set it, else
	// a placeholder, never a port that may not be the daemon's (robothub dev's may be any).
	daemon := e.getenv("ROBOT_DAEMON_URL")
	if daemon == "" {
		daemon = "http://<robot>:8000"
	}
	fmt.Fprintln(e.stdout, "Robots that have it update themselves when a fleet announces the push (robothub dev's do). Install it on")
	fmt.Fprintln(e.stdout, "another robot from its dashboard's app store, or with (the daemon's address, and its token from its data")
	fmt.Fprintln(e.stdout, "dir, ~/.local/state/robot-daemon by default; robothub dev prints its own):")
	fmt.Fprintf(e.stdout, "  curl -X POST '%s/api/apps/install' -H \"Authorization: Bearer $(cat ~/.local/state/robot-daemon/api-token)\" -H 'Content-Type: application/json' -d '{\"url\": \"%s\"}'\n", strings.TrimRight(daemon, "/"), spaceURL)
	fmt.Fprintf(e.stdout, "After changes, run robot-app-assistant publish %s again.\n", dir)
	return nil
}

// createTokenHint says where a write token comes from: the local hub has no settings page, its
// tokens come from robothub hub token create (robothub dev writes one to <data-dir>/hub/token).
func createTokenHint(endpoint string) string {
	if isLoopbackURL(endpoint) {
		return "the local hub's tokens come from robothub hub token create --data-dir DIR, and robothub dev writes one to <its data dir>/hub/token: export HF_TOKEN_PATH=<that file>"
	}
	return "create a token with write permission at " + endpoint + "/settings/tokens"
}

// unreachableHubHint says what to start or set when the hub could not be reached at all.
func unreachableHubHint(getenv func(string) string, endpoint string, err error) string {
	var te *hub.TransportError
	if !errors.As(err, &te) {
		return ""
	}
	switch {
	case isLoopbackURL(endpoint):
		return "\n  is the local hub running there? (robothub dev, make run, or robothub hub serve)"
	case getenv("HF_ENDPOINT") == "":
		return "\n  HF_ENDPOINT is not set, so this is the public hub; for the local one: export HF_ENDPOINT=http://127.0.0.1:7861 (robothub dev prints its own)"
	}
	return "\n  check HF_ENDPOINT and the network"
}

func isLoopbackURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	return u.Hostname() == "localhost" || ip != nil && ip.IsLoopback()
}

// appNameOf is the app's name without the full check: its robot_apps entry point, else the folder's name.
func appNameOf(ctx context.Context, e *env, python, dir string) string {
	if insp, err := inspectApp(ctx, e, python, dir); err == nil {
		names := slices.Sorted(maps.Keys(insp.Pyproject.Groups[apps.EntryPointGroup]))
		if len(names) > 0 {
			return names[0]
		}
	}
	return filepath.Base(dir)
}
