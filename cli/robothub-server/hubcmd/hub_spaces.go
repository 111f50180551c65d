package hubcmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/robothub/robothub/cli/cliapp"
	"github.com/robothub/robothub/cli/hubconn"

	"github.com/urfave/cli/v2"

	"github.com/robothub/robothub/core/hub"
)

func hubSpacesCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "spaces",
		Usage: "spaces (git repositories) on the hub: ls, create, info, delete",
		Description: `Spaces are git repositories: clone one with git clone <hub>/spaces/<owner>/<name>, and push
with a write token (git sends it as the password, or use
git -c http.extraHeader="Authorization: Bearer $HF_TOKEN" push). A push to main is read again by the
hub: the tags of README.md's front matter make a space an app of the robot catalog
(robot_python_app). These calls are the public hub's too.`,
		OnUsageError: cliapp.OnUsageError,
		Subcommands: []*cli.Command{
			hubSpacesLsCommand(e),
			hubSpacesCreateCommand(e),
			hubSpacesInfoCommand(e),
			hubSpacesDeleteCommand(e),
		},
	}
}

func shortSha(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	if sha == "" {
		return "-"
	}
	return sha
}

func visibility(private bool) string {
	if private {
		return "private"
	}
	return "public"
}

func hubSpacesLsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "ls",
		Usage: "list spaces: the public ones and your own, newest change first",
		UsageText: `robothub hub spaces ls [--filter TAG ...] [--author NAME] [--search TEXT] [--limit N] [--format table|json|quiet]

Examples:
  robothub hub spaces ls --filter robot_python_app       # the robot app catalog
  robothub hub spaces ls --author alice --format quiet`,
		Flags: append(hubconn.Flags(),
			&cli.StringSliceFlag{Name: "filter", Usage: "only spaces with the `TAG` (repeatable: all of them)"},
			&cli.StringFlag{Name: "author", Usage: "only spaces of the owner `NAME`"},
			&cli.StringFlag{Name: "search", Usage: "only spaces whose ID contains `TEXT`"},
			&cli.IntFlag{Name: "limit", Usage: "at most `N` spaces"}),
		OnUsageError: cliapp.OnUsageError,
		Action: hubconn.Action(e.getenv, e.stderr, func(c *cli.Context, cl *hub.Client, format string, args []string) error {
			if err := hubconn.NoArgs(c, args, ": filter with --filter, --author or --search"); err != nil {
				return err
			}
			if c.Int("limit") < 0 {
				return cliapp.Usagef("--limit %d: give a positive number", c.Int("limit"))
			}
			spaces, err := cl.ListSpaces(c.Context, hub.SpaceQuery{Filter: c.StringSlice("filter"), Author: c.String("author"),
				Search: c.String("search"), Limit: c.Int("limit")})
			if err != nil {
				return err
			}
			return hubconn.PrintResult(e.stdout, format, spaces, hubconn.IDsOf(spaces, func(s hub.Space) string { return s.ID }), func() error {
				tw := hubconn.NewTable(e.stdout)
				fmt.Fprintln(tw, "ID\tVISIBILITY\tSDK\tHEAD\tMODIFIED\tTAGS")
				for _, s := range spaces {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, visibility(s.Private), s.SDK, shortSha(s.SHA),
						s.LastModified.Local().Format(time.DateTime), strings.Join(s.Tags, ","))
				}
				return tw.Flush()
			})
		}),
	}
}

func hubSpacesCreateCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "create",
		Usage: "create an empty space owned by you",
		UsageText: `robothub hub spaces create NAME [--private] [--sdk static] [--format table|json|quiet]

NAME is the space's name (letters, digits, '-', '_' and '.'), or OWNER/NAME with your own user
name. The space starts empty; its branch is main.

Examples:
  robothub hub spaces create wave
  robothub hub spaces create wave --private --format quiet`,
		Flags: append(hubconn.Flags(),
			&cli.BoolFlag{Name: "private", Usage: "only you can see and clone it"},
			&cli.StringFlag{Name: "sdk", Value: "static", Usage: "the space's `SDK`: " + strings.Join(hub.SpaceSDKs, ", ")}),
		OnUsageError: cliapp.OnUsageError,
		Action: hubconn.ActionOn(e.getenv, e.stderr, "NAME", func(c *cli.Context, cl *hub.Client, format, name string) error {
			created, err := cl.CreateRepo(c.Context, hub.CreateRepoRequest{Type: "space", ID: name, Private: c.Bool("private"), SDK: c.String("sdk")})
			if err != nil {
				return err
			}
			return hubconn.PrintResult(e.stdout, format, created, []string{created.URL}, func() error {
				_, err := fmt.Fprintf(e.stdout, "Created space %s: %s\nClone it with: git clone %s\n", created.Name, created.URL, created.URL)
				return err
			})
		}),
	}
}

func hubSpacesInfoCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "info",
		Usage: "show one space: head of main, tags, files",
		UsageText: `robothub hub spaces info OWNER/NAME [--format table|json]

Example:
  robothub hub spaces info alice/wave`,
		Flags:        hubconn.Flags(),
		OnUsageError: cliapp.OnUsageError,
		Action: hubconn.ActionOn(e.getenv, e.stderr, "OWNER/NAME", func(c *cli.Context, cl *hub.Client, format, id string) error {
			s, err := cl.SpaceInfo(c.Context, id)
			if err != nil {
				return err
			}
			return hubconn.PrintResult(e.stdout, format, s, []string{s.ID}, func() error {
				files := make([]string, len(s.Siblings))
				for i, f := range s.Siblings {
					files[i] = f.RFilename
				}
				tw := hubconn.NewTable(e.stdout)
				fmt.Fprintf(tw, "ID:\t%s\n", s.ID)
				fmt.Fprintf(tw, "Git:\t%s\n", cl.SpaceGitURL(s.ID))
				fmt.Fprintf(tw, "Visibility:\t%s\n", visibility(s.Private))
				fmt.Fprintf(tw, "SDK:\t%s\n", s.SDK)
				fmt.Fprintf(tw, "Head of main:\t%s\n", orDash(s.SHA))
				fmt.Fprintf(tw, "Tags:\t%s\n", orDash(strings.Join(s.Tags, ", ")))
				fmt.Fprintf(tw, "Modified:\t%s\n", s.LastModified.Local().Format(time.DateTime))
				fmt.Fprintf(tw, "Files:\t%s\n", orDash(strings.Join(files, ", ")))
				return tw.Flush()
			})
		}),
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func hubSpacesDeleteCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "delete",
		Usage: "delete one of your spaces with its git data (asks first; --yes does not)",
		UsageText: `robothub hub spaces delete NAME [--yes] [--format table|json|quiet]

NAME is the space's name or OWNER/NAME. On a terminal it asks first; without one it refuses unless
--yes is given.

Example:
  robothub hub spaces delete alice/wave --yes`,
		Flags: append(hubconn.Flags(),
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "delete without asking, e.g. in a script"}),
		OnUsageError: cliapp.OnUsageError,
		Action: hubconn.ActionOn(e.getenv, e.stderr, "NAME", func(c *cli.Context, cl *hub.Client, format, id string) error {
			if !c.Bool("yes") {
				if err := hubconn.ConfirmDelete(e.stdin, e.stderr, "space "+id, "Delete space "+id+" with all its git data? This cannot be undone."); err != nil {
					return err
				}
			}
			if err := cl.DeleteRepo(c.Context, "space", id); err != nil {
				return err
			}
			return hubconn.PrintDeleted(e.stdout, format, "space", id)
		}),
	}
}
