package hubconn

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/robothub/robothub/cli/cliapp"
	"github.com/robothub/robothub/core/hub"
)

// PrintResult writes what a command has to show in the --format chosen (OutputFormat): v as
// indented JSON, the quiet lines (IDs, one a line) for scripts, or what table writes for people.
// Every command that takes --format prints through it, so the three formats mean the same
// everywhere.
func PrintResult(out io.Writer, format string, v any, quiet []string, table func() error) error {
	switch format {
	case "json":
		return PrintJSON(out, v)
	case "quiet":
		var b strings.Builder
		for _, l := range quiet {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		_, err := io.WriteString(out, b.String())
		return err
	}
	return table()
}

// IDsOf is the quiet output of a list: each item's ID.
func IDsOf[T any](items []T, id func(T) string) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = id(it)
	}
	return ids
}

// PrintDeleted says that what (e.g. "webhook") id was deleted.
func PrintDeleted(out io.Writer, format, what, id string) error {
	return PrintResult(out, format, map[string]any{"id": id, "deleted": true}, []string{id}, func() error {
		_, err := fmt.Fprintf(out, "Deleted %s %s.\n", what, id)
		return err
	})
}

func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// NewTable is the table of a list: columns aligned, two spaces apart. Write the rows, then Flush.
func NewTable(out io.Writer) *Table {
	buf := bufio.NewWriterSize(out, 64<<10)
	return &Table{Writer: tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0), buf: buf}
}

// Table is a tabwriter whose output is buffered: tabwriter writes each cell and each padding on
// its own, so that `robothub webhooks ls` of 1,000 webhooks made some 10,000 write system calls to
// stdout, to a pipe as many wake-ups of its reader (docs/BENCHMARKS.md, issue 31).
type Table struct {
	*tabwriter.Writer
	buf *bufio.Writer
}

// Flush writes the table out.
func (t *Table) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	return t.buf.Flush()
}

// Action runs fn with a client and the command's arguments (flags written after them were read
// too: see run), turning client errors into the CLI's messages and exit codes.
func Action(getenv func(string) string, stderr io.Writer, fn func(c *cli.Context, cl *hub.Client, format string, args []string) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		format, err := OutputFormat(c)
		if err != nil {
			return err
		}
		cl, err := NewClient(c, getenv, stderr)
		if err != nil {
			return err
		}
		return UserError(cl, fn(c, cl, format, c.Args().Slice()))
	}
}

// ActionOn is Action for a command that takes exactly one argument, named what in its
// usage error ("WEBHOOK_ID").
func ActionOn(getenv func(string) string, stderr io.Writer, what string, fn func(c *cli.Context, cl *hub.Client, format, arg string) error) cli.ActionFunc {
	return Action(getenv, stderr, func(c *cli.Context, cl *hub.Client, format string, args []string) error {
		arg, err := OneArg(c, args, what)
		if err != nil {
			return err
		}
		return fn(c, cl, format, arg)
	})
}

// NoArgs refuses positional arguments for a command that takes none.
func NoArgs(c *cli.Context, args []string, hint string) error {
	if len(args) > 0 {
		return cliapp.Usagef("%s takes no arguments, got %q%s", c.Command.FullName(), args, hint)
	}
	return nil
}

// ShellQuote writes argv as a POSIX shell reads it back.
func ShellQuote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// CompleteWebhookIDs offers the caller's webhook IDs for shell completion.
func CompleteWebhookIDs(getenv func(string) string, stdout, stderr io.Writer) cli.BashCompleteFunc {
	return func(c *cli.Context) {
		if c.NArg() > 0 {
			return
		}
		cl, err := NewClient(c, getenv, stderr)
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(c.Context, 2*time.Second)
		defer cancel()
		list, err := cl.List(ctx)
		if err != nil {
			return
		}
		for _, w := range list {
			fmt.Fprintf(stdout, "%s:%s\n", w.ID, Target(w))
		}
	}
}

// ConfirmDelete asks question on the terminal and goes on only on y or yes. Without a terminal it
// refuses, saying to add --yes: a script must say what it means.
func ConfirmDelete(stdin io.Reader, stderr io.Writer, what, question string) error {
	if !IsTerminal(stdin) {
		return cliapp.Usagef("not deleting %s without confirmation: stdin is not a terminal; add --yes to delete it", what)
	}
	fmt.Fprintf(stderr, "%s [y/N] ", question)
	answer, _ := bufio.NewReader(stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return cli.Exit("not deleted", cliapp.ExitError)
	}
	return nil
}

// Target is where a webhook delivers: its URL, or (job).
func Target(w hub.Webhook) string {
	if w.Job != nil || w.URL == "" {
		return "(job)"
	}
	return w.URL
}
