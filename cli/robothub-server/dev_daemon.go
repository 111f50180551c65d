//go:build !windows

package main

import (
	"context"
	"io"

	"github.com/robothub/robothub/robotd/access"
	"github.com/robothub/robothub/robotd/cmd/robotdaemon"
)

// The robot daemon runs apps in process groups and drives a serial motor bus: Unix only. This file
// and dev_daemon_windows.go keep `robothub` building everywhere, with dev on Linux and macOS.

func devSupported() error { return nil }

func runRobotDaemon(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return robotdaemon.Run(ctx, args, getenv, stdout, stderr)
}

// devDaemonToken is the owner token of dev's robot daemon, whose data dir is dir: the file the
// daemon makes on first start (and reads at each), made here first when it is missing.
func devDaemonToken(dir string) (string, error) {
	token, _, _, err := access.LoadOrCreateToken(dir)
	return token, err
}
