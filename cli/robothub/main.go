// Command robothub is the admin front end of robothub: a ready-made webhook receiver
// (robothub serve), the hub's webhook management (robothub webhooks ...), the local hub emulator
// (robothub hub ...), robothub dev, fleet and release.
//
// It is the quick half of two programs. It runs --version, help and webhooks itself, linking
// little more than an HTTP client, and hands every other command to robothub-server, which it looks
// for in $ROBOTHUB_SERVER, beside itself, then on PATH (forward.go). On Unix the hand-over is an
// exec: robothub-server takes robothub's process, its signals, its terminal and its exit code.
//
// Why two: a Go program runs the init of every package it links before main, and in one program the
// libraries of the servers (the local hub, SQLite, go-git, pion, the MQTT broker, the robot daemon)
// made `robothub --version` 3.8-4.3x a Go binary that only prints a version; this front is about 2x
// (BenchmarkVersionAgainstMinimal; the smallest urfave/cli program that makes an HTTP request is
// 1.6x), and `robothub webhooks ls` takes as long as curl of the same list
// (BenchmarkWebhooksLsVersusCurl). make build also builds it without cgo, so it is linked
// statically (the dynamic loader alone cost more than a version-only Go program), and without
// urfave/cli's man-page generator. Figures in docs/BENCHMARKS.md.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/robothub/robothub/cli/cliapp"
	"github.com/robothub/robothub/cli/webhookscmd"

	"github.com/robothub/robothub/core/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs robothub with args (args[0] is the program name) and returns the exit code. A command
// of robothub-server's is handed to it (handOver): on Unix run does not return then.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if name := serverCommand(args); name != "" {
		return handOver(ctx, name, "robothub", args, stdin, stdout, stderr)
	}
	app := newApp(args, getenv, stdin, stdout, stderr)
	return cliapp.ExitCode("robothub", app.RunContext(ctx, cliapp.Interspersed(app, args)), stderr)
}

// ownCommand is the one command of robothub's that runs in the front.
const ownCommand = "webhooks"

// newApp is robothub as its help shows it, built from the list robothub-server's help is built from
// (cliapp.RobothubCommands), of which only webhooks runs here.
func newApp(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	var commands []*cli.Command
	for _, c := range cliapp.RobothubCommands {
		if c.Name == ownCommand {
			commands = append(commands, webhookscmd.Command(getenv, stdin, stdout, stderr))
			continue
		}
		commands = append(commands, &cli.Command{
			Name: c.Name, Usage: c.Usage, SkipFlagParsing: true, HideHelp: true,
			// run hands every command line that names this command over before the app runs;
			// this is for one that reaches it anyway, which robothub-server then reads as it is.
			Action: func(cCtx *cli.Context) error {
				if code := handOver(cCtx.Context, c.Name, "robothub", args, stdin, stdout, stderr); code != 0 {
					return cli.Exit("", code)
				}
				return nil
			},
		})
	}
	return &cli.App{
		Name:                 "robothub",
		Usage:                cliapp.RobothubUsage,
		Version:              version.String(),
		Reader:               stdin,
		Writer:               stdout,
		ErrWriter:            stderr,
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		ExitErrHandler:       func(*cli.Context, error) {}, // run() reports errors and picks the exit code
		OnUsageError:         cliapp.OnUsageError,
		Commands:             commands,
	}
}

// serverCommand is the name of the command args run when robothub-server runs it, or "". robothub
// has no flags of its own before a command but --help and --version, which end the command line,
// and the shell's completion request, which robothub-server answers for its commands too.
func serverCommand(args []string) string {
	for _, a := range args[1:] {
		switch a {
		case "--generate-bash-completion":
			continue
		case "-h", "--help", "-v", "--version":
			return ""
		}
		if a == ownCommand || cliapp.RobothubUsageOf(a) == "" {
			return ""
		}
		return a
	}
	return ""
}
