package cliapp

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestExitCode(t *testing.T) {
	cases := []struct {
		err    error
		code   int
		stderr string
	}{
		{nil, ExitOK, ""},
		{Usagef("--format %q: use table, json or quiet", "xml"), ExitUsage,
			"tool: --format \"xml\": use table, json or quiet\nRun 'tool --help' or 'tool <command> --help' for usage.\n"},
		{fmt.Errorf("webhooks create: %w", Usagef("no --watch")), ExitUsage, "tool: webhooks create: no --watch\nRun 'tool --help' or 'tool <command> --help' for usage.\n"},
		{cli.Exit("the hub said no", 3), 3, "tool: the hub said no\n"},
		{cli.Exit("", 4), 4, ""},
		{cli.Exit("No help topic for 'frobnicate'", 3), ExitUsage, "tool: unknown command 'frobnicate'\nRun 'tool --help' or 'tool <command> --help' for usage.\n"},
		{errors.New("disk full"), ExitError, "tool: disk full\n"},
	}
	for _, c := range cases {
		var stderr bytes.Buffer
		if got := ExitCode("tool", c.err, &stderr); got != c.code || stderr.String() != c.stderr {
			t.Errorf("ExitCode(%v) = %d, %q; want %d, %q", c.err, got, stderr.String(), c.code, c.stderr)
		}
	}
	if err := OnUsageError(nil, errors.New("flag provided but not defined: -x"), false); !errors.As(err, new(*UsageError)) {
		t.Errorf("OnUsageError gave %T", err)
	}
}
