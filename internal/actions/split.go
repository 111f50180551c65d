package actions

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// SplitCommand splits a command line into its arguments by the POSIX shell's quoting rules, read
// by a real shell parser (mvdan.cc/sh, the parser of shfmt): spaces separate arguments, '...'
// quotes literally, "..." quotes with \" \\ \$ escapes, a backslash outside quotes escapes the next
// character, and # starts a comment. The command then runs without a shell, so what only a shell
// would do is refused with its name rather than passed on as text: expansions ($VAR, $(...),
// `...`, $((...)), a leading ~), redirections, pipes, lists (; && || &) and assignments before
// the command. Quote it to pass it as text ('$HOME'), or run the shell yourself: sh -c '...'.
//
// mvdan.cc/sh rather than github.com/google/shlex: shlex reads "\a" inside double quotes as "a"
// and takes "a|b" or "> out" as plain words, which is not what a user who writes shell quoting
// expects; a parser of the language knows every construct and says which one it met.
func SplitCommand(line string) ([]string, error) {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, fmt.Errorf("command %q: %w", line, err)
	}
	switch {
	case len(file.Stmts) == 0:
		return nil, errors.New("command is empty")
	case len(file.Stmts) > 1:
		return nil, needsShell(line, "more than one command")
	}
	st := file.Stmts[0]
	call, simple := st.Cmd.(*syntax.CallExpr)
	switch {
	case st.Background:
		return nil, needsShell(line, "a background command (&)")
	case st.Negated:
		return nil, needsShell(line, "a negation (!)")
	case len(st.Redirs) > 0:
		return nil, needsShell(line, "a redirection ("+st.Redirs[0].Op.String()+")")
	case !simple:
		return nil, needsShell(line, describeCommand(st.Cmd))
	case len(call.Assigns) > 0:
		return nil, needsShell(line, "an assignment before the command ("+call.Assigns[0].Name.Value+"=)")
	}
	var construct string
	syntax.Walk(call, func(n syntax.Node) bool {
		if construct != "" {
			return false
		}
		switch n := n.(type) {
		case *syntax.ParamExp:
			construct = "a variable ($" + n.Param.Value + ")"
		case *syntax.CmdSubst:
			construct = "a command substitution ($(...))"
		case *syntax.ArithmExp:
			construct = "an arithmetic expansion ($((...)))"
		case *syntax.ProcSubst, *syntax.ExtGlob, *syntax.BraceExp:
			construct = "a shell expansion"
		case *syntax.Word:
			if lit, ok := n.Parts[0].(*syntax.Lit); ok && strings.HasPrefix(lit.Value, "~") {
				construct = "a home directory (~)"
			}
		}
		return construct == ""
	})
	if construct != "" {
		return nil, needsShell(line, construct)
	}
	// With no expansion left, expanding the words only removes their quotes. Globbing is off (the
	// config has no ReadDir), so * and ? are passed as they are.
	return expand.Fields(&expand.Config{Env: expand.ListEnviron()}, call.Args...)
}

func needsShell(line, construct string) error {
	return fmt.Errorf("command %q has %s, which only a shell understands, and the command runs without one: quote it to pass it as text, or run a shell yourself (sh -c '...')", line, construct)
}

func describeCommand(c syntax.Command) string {
	if b, ok := c.(*syntax.BinaryCmd); ok {
		switch b.Op {
		case syntax.Pipe, syntax.PipeAll:
			return "a pipe (|)"
		default:
			return "a list (" + b.Op.String() + ")"
		}
	}
	return "a compound command"
}
