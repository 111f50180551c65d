package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/robothub/robothub/cli/cliapp"
)

// ServerEnv names robothub-server's path when it is neither beside robothub nor on PATH (a package
// that installs it elsewhere, a test).
const ServerEnv = "ROBOTHUB_SERVER"

// handOver runs robothub-server with robothub's own command line (args[0] as it is, so that its
// messages still say robothub) and environment, and returns its exit code. When robothub's standard
// streams are its own, on Unix, robothub-server replaces robothub (exec) and handOver does not
// return: its signals, its terminal and its exit code are robothub-server's with nothing between.
// Otherwise (Windows, a caller in the same process) robothub-server runs as a child.
func handOver(ctx context.Context, command, prog string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	path, err := serverPath(command)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return cliapp.ExitError
	}
	if stdin == io.Reader(os.Stdin) && stdout == io.Writer(os.Stdout) && stderr == io.Writer(os.Stderr) {
		err := execInPlace(path, args, os.Environ())
		if !errors.Is(err, errors.ErrUnsupported) {
			fmt.Fprintf(stderr, "%s: %s: %v\n", prog, path, err)
			return cliapp.ExitError
		}
	}
	cmd := exec.CommandContext(ctx, path, args[1:]...)
	cmd.Args[0] = args[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	// Ctrl-C reaches a child in the same terminal by itself; a SIGTERM to robothub (ctx) is passed on
	// as an interrupt, which robothub-server's servers take as the signal to shut down cleanly.
	cmd.Cancel = func() error { return interrupt(cmd.Process) }
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return cliapp.ExitOK
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode()
	default:
		fmt.Fprintf(stderr, "%s: %s: %v\n", prog, path, err)
		return cliapp.ExitError
	}
}

// serverPath finds robothub-server: $ROBOTHUB_SERVER, else beside this robothub (the two are built
// and installed together), else on PATH.
func serverPath(command string) (string, error) {
	name := "robothub-server"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if p := os.Getenv(ServerEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s: %w", ServerEnv, err)
		}
		return p, nil
	}
	dir := ""
	if self, err := os.Executable(); err == nil {
		if self, err = filepath.EvalSymlinks(self); err == nil {
			dir = filepath.Dir(self)
			if p := filepath.Join(dir, name); isExecutable(p) {
				return p, nil
			}
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%q is a command of robothub-server, which is neither beside this robothub (in %s) nor on PATH: "+
		"make build puts both in bin/; else go install github.com/robothub/robothub/cli/robothub-server@latest, "+
		"or set $%s to its path", command, dir, ServerEnv)
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && (runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0)
}
