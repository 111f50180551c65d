// Package cliapp holds what robothub's commands share about running a urfave/cli application: the
// exit codes, usage errors, and the one place that turns an error into a message and an exit code;
// also the servers' logger, their listen errors and the reading of required environment variables.
package cliapp

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// Exit codes of every robothub command.
const (
	ExitOK    = 0
	ExitError = 1 // the command ran and failed: the hub refused, a check failed, a server stopped
	ExitUsage = 2 // the command line is wrong
)

// UsageError is a mistake on the command line: exit code 2.
type UsageError struct{ Err error }

func (u *UsageError) Error() string { return u.Err.Error() }
func (u *UsageError) Unwrap() error { return u.Err }

// Usagef reports a command-line mistake.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// OnUsageError makes urfave/cli's flag errors usage errors. Set it on the app and every command.
func OnUsageError(_ *cli.Context, err error, _ bool) error {
	return &UsageError{Err: err}
}

// ExitCode reports err on stderr, prefixed with the program's name, and returns the exit code: 0
// for nil, 2 for a UsageError (with a pointer to --help), a cli.ExitCoder's own code, else 1.
func ExitCode(prog string, err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) && ec.ExitCode() == 3 && strings.HasPrefix(err.Error(), "No help topic for ") {
		// urfave/cli's answer to an unknown command: a usage error.
		err = Usagef("unknown command %s", strings.TrimPrefix(err.Error(), "No help topic for "))
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		fmt.Fprintf(stderr, "Run '%s --help' or '%s <command> --help' for usage.\n", prog, prog)
		return ExitUsage
	}
	if errors.As(err, &ec) {
		if msg := err.Error(); msg != "" {
			fmt.Fprintf(stderr, "%s: %s\n", prog, msg)
		}
		return ec.ExitCode()
	}
	fmt.Fprintf(stderr, "%s: %v\n", prog, err)
	return ExitError
}

// LookupEnv reads a variable that must hold a value: an empty variable counts as unset, so that a
// forgotten export does not silently become an empty secret.
func LookupEnv(getenv func(string) string, name string) (string, bool) {
	if v := getenv(name); v != "" {
		return v, true
	}
	return "", false
}
