package main

import (
	"context"
	"errors"
	"io"
)

var errDevNeedsUnix = errors.New("robothub dev needs Linux or macOS: it runs the robot daemon, which manages " +
	"apps as Unix process groups (on Windows, run it in WSL); the other commands work here")

func devSupported() error { return errDevNeedsUnix }

func runRobotDaemon(context.Context, []string, func(string) string, io.Writer, io.Writer) error {
	return errDevNeedsUnix
}

func devDaemonToken(string) (string, error) { return "", errDevNeedsUnix }
