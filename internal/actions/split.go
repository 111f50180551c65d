package actions

import (
	"fmt"
	"strings"
)

// SplitCommand splits a command line into arguments the way a user expects from a shell, but
// without one: spaces separate arguments, '...' quotes literally, "..." quotes with \" and \\
// escapes, and a backslash outside quotes escapes the next character. Nothing is expanded: no
// variables, globs, pipes or redirections, so a payload can never inject a command.
func SplitCommand(line string) ([]string, error) {
	var (
		args    []string
		cur     strings.Builder
		inArg   bool
		quote   rune // 0, '\'' or '"'
		escaped bool
	)
	for _, c := range line {
		switch {
		case escaped:
			cur.WriteRune(c)
			escaped = false
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteRune(c)
			}
		case quote == '"':
			switch c {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				cur.WriteRune(c)
			}
		case c == '\\':
			escaped, inArg = true, true
		case c == '\'' || c == '"':
			quote, inArg = c, true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(c)
			inArg = true
		}
	}
	switch {
	case quote != 0:
		return nil, fmt.Errorf("command %q: unterminated %c quote", line, quote)
	case escaped:
		return nil, fmt.Errorf("command %q: ends with a lone backslash", line)
	}
	if inArg {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("command is empty")
	}
	return args, nil
}
