//go:build !unix

package main

import (
	"errors"
	"os"
)

// execInPlace is not there on Windows: robothub-server runs as a child instead.
func execInPlace(string, []string, []string) error { return errors.ErrUnsupported }

// interrupt does nothing on Windows: the console sends Ctrl-C to robothub-server itself, and
// os.Process.Signal cannot send an interrupt there.
func interrupt(*os.Process) error { return nil }
