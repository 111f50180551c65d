// Command robothub-server is the whole of robothub in one program: the webhook receiver (serve), the
// hub's webhook management (webhooks), the local hub emulator (hub), robothub dev with its daemon
// and broker, fleet and release. Users type `robothub`: that is the front (cli/robothub), which runs
// --version, help and webhooks itself and hands every other command, unchanged, to this program.
// It answers to the name robothub, so its help, errors and examples read as the front's.
//
// Why two programs: a Go program runs the init of every package it links before main, and the
// local hub, pion, SQLite, go-git and the MQTT broker made `robothub --version` about 4x a Go binary
// that only prints a version (issue 31's target is 1.5x). Figures in docs/BENCHMARKS.md.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/robothub/robothub/cli/cliapp"
	"github.com/robothub/robothub/cli/robothub-server/hubcmd"
	"github.com/robothub/robothub/cli/webhookscmd"

	"github.com/robothub/robothub/core/version"
)

// Exit codes (see cliapp).
const (
	exitOK    = cliapp.ExitOK
	exitError = cliapp.ExitError
	exitUsage = cliapp.ExitUsage
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// A reader of stdout that goes away (`robothub dev | tee log`, Ctrl-C) stops robothub as
	// Ctrl-C does, instead of killing it with SIGPIPE mid-shutdown (stdout.go).
	signal.Ignore(syscall.SIGPIPE)
	ctx, brokenPipe := context.WithCancel(ctx)
	code := run(ctx, os.Args, os.Getenv, os.Stdin,
		&brokenPipeStops{w: os.Stdout, stop: brokenPipe}, &brokenPipeStops{w: os.Stderr, stop: brokenPipe})
	brokenPipe()
	stop()
	os.Exit(code)
}

// env is the outside world of one run: tests run the real program in-process with their own.
type env struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// run runs robothub with args (args[0] is the program name) and returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	app := newApp(e)
	// Flags may follow a command's arguments (robothub webhooks delete ID --yes), except in the
	// command line that hub job create stores.
	return cliapp.ExitCode("robothub", app.RunContext(ctx, cliapp.Interspersed(app, args, "hub job create")), stderr)
}

func newApp(e *env) *cli.App {
	return &cli.App{
		Name:                 "robothub",
		Usage:                cliapp.RobothubUsage,
		Version:              version.String(),
		Reader:               e.stdin,
		Writer:               e.stdout,
		ErrWriter:            e.stderr,
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		ExitErrHandler:       func(*cli.Context, error) {}, // run() reports errors and picks the exit code
		OnUsageError:         onUsageError,
		Commands: []*cli.Command{
			serveCommand(e),
			webhookscmd.Command(e.getenv, e.stdin, e.stdout, e.stderr),
			hubcmd.Command(e.getenv, e.stdin, e.stdout, e.stderr),
			devCommand(e),
			fleetCommand(e),
			releaseCommand(e),
			completionCommand(e),
		},
	}
}

// usageError is a mistake on the command line: exit code 2.
type usageError = cliapp.UsageError

// usagef reports a command-line mistake.
var usagef = cliapp.Usagef

// onUsageError makes urfave/cli's flag errors usage errors (exit code 2). Set it on every command.
var onUsageError = cliapp.OnUsageError
