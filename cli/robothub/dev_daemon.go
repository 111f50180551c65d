//go:build !windows

package main

import (
	"context"
	"io"

	"github.com/robothub/robothub/robotd"
)

// The robot daemon runs apps in process groups and drives a serial motor bus: Unix only. This file
// and dev_daemon_windows.go keep `robothub` building everywhere, with dev on Linux and macOS.

func devSupported() error { return nil }

func runRobotDaemon(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return robotd.Run(ctx, args, getenv, stdout, stderr)
}
