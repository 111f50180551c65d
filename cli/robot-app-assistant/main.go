// Command robot-app-assistant creates, checks and publishes robot app packages: Python packages
// that the robot daemon installs from a hub space and runs, one at a time.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/robothub/robothub/cli/cliapp"

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
	code := run(ctx, os.Args, os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// env is the outside world of one run: tests run the real program in-process with their own.
type env struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	log    *slog.Logger
	home   string // the throw-away HOME of package code (sandbox.go)
}

// run runs robot-app-assistant with args (args[0] is the program name) and returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr, log: slog.New(slog.DiscardHandler)}
	home, cleanup, err := throwawayHome()
	if err != nil {
		fmt.Fprintf(stderr, "robot-app-assistant: %v\n", err)
		return exitError
	}
	defer cleanup()
	e.home = home
	app := newApp(e)
	return cliapp.ExitCode("robot-app-assistant", app.RunContext(ctx, cliapp.Interspersed(app, args)), stderr)
}

func newApp(e *env) *cli.App {
	return &cli.App{
		Name:            "robot-app-assistant",
		Usage:           "create, check and publish robot apps",
		Version:         version.String(),
		Reader:          e.stdin,
		Writer:          e.stdout,
		ErrWriter:       e.stderr,
		HideHelpCommand: true,
		ExitErrHandler:  func(*cli.Context, error) {}, // run() reports errors and picks the exit code
		OnUsageError:    onUsageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "log-level", Value: "warn", Usage: "log the commands it runs (debug) or only problems (warn) on stderr"},
		},
		Before: func(c *cli.Context) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
				return usagef("--log-level: %q is not one of debug, info, warn, error", c.String("log-level"))
			}
			e.log = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
			return nil
		},
		Commands: []*cli.Command{
			createCommand(e),
			checkCommand(e),
			publishCommand(e),
		},
	}
}

// usagef reports a command-line mistake.
var usagef = cliapp.Usagef

// onUsageError makes urfave/cli's flag errors usage errors (exit code 2). Set it on every command.
var onUsageError = cliapp.OnUsageError
