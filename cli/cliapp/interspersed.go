package cliapp

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// completionFlag is the flag urfave/cli's shell completion adds last to a command line; it must
// stay last.
const completionFlag = "--generate-bash-completion"

// Interspersed returns args (args[0] is the program) with the flags of the command they run moved
// in front of that command's arguments, so that `robothub webhooks delete ID --yes` reads as
// `robothub webhooks delete --yes ID` and `create my_app . --publish` as `create --publish my_app .`:
// urfave/cli v2 stops reading flags at a command's first argument and has no option to read them
// further. It is applied once, to the whole command line, before the app runs.
//
// The command is found by walking args through the app's commands and subcommands (the flags of
// each level, with their values, stay where they are). Only a command without subcommands has its
// flags moved. Everything from "--" on stays in place, as do the arguments of the commands named in
// verbatim by their full name ("hub job create"), whose arguments are a command line of their own.
// A flag that the command does not define is moved too, so that urfave/cli reports it.
func Interspersed(app *cli.App, args []string, verbatim ...string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	flags, commands := app.Flags, app.Commands
	var path []string // the full name of the command reached so far
	i := 1
	for {
		for i < len(args) && isFlag(args[i]) {
			n := flagArgs(flags, args[i:])
			out, i = append(out, args[i:i+n]...), i+n
		}
		if i >= len(args) {
			return out
		}
		if cmd := findCommand(commands, args[i]); cmd != nil {
			out, i = append(out, args[i]), i+1
			flags, commands, path = cmd.Flags, cmd.Subcommands, append(path, cmd.Name)
			continue
		}
		// args[i] is the first argument of the command reached, or a word that is not a command.
		if len(path) == 0 || hasSubcommands(commands) || slices.Contains(verbatim, strings.Join(path, " ")) {
			return append(out, args[i:]...)
		}
		break
	}
	var moved, positional, last []string
	for rest := args[i:]; len(rest) > 0; {
		switch a := rest[0]; {
		case a == "--":
			positional, rest = append(positional, rest...), nil
		case a == completionFlag && len(rest) == 1:
			last, rest = rest, nil
		case isFlag(a):
			n := flagArgs(flags, rest)
			moved, rest = append(moved, rest[:n]...), rest[n:]
		default:
			positional, rest = append(positional, a), rest[1:]
		}
	}
	return slices.Concat(out, moved, positional, last)
}

func isFlag(a string) bool { return strings.HasPrefix(a, "-") && a != "-" && a != "--" }

// flagArgs is how many of args the flag args[0] takes: 2 for a flag that takes a value given as
// the next argument, else 1 (a boolean flag, -name=value, an unknown flag, or no next argument).
func flagArgs(flags []cli.Flag, args []string) int {
	name, _, inline := strings.Cut(strings.TrimLeft(args[0], "-"), "=")
	if inline || len(args) < 2 {
		return 1
	}
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			if v, ok := f.(interface{ TakesValue() bool }); ok && v.TakesValue() {
				return 2
			}
			return 1
		}
	}
	return 1
}

func findCommand(commands []*cli.Command, name string) *cli.Command {
	for _, c := range commands {
		if c.Name == name || slices.Contains(c.Aliases, name) {
			return c
		}
	}
	return nil
}

// hasSubcommands reports whether commands has one besides the help command, which urfave/cli adds
// to every command it has run.
func hasSubcommands(commands []*cli.Command) bool {
	return slices.ContainsFunc(commands, func(c *cli.Command) bool { return c.Name != "help" })
}
