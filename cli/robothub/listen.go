package main

import (
	"errors"
	"fmt"
	"syscall"
)

// listenError says why a server cannot listen on addr; when the port is taken (a second make run,
// robothub dev or hub serve on the default ports), it names the flag that picks another.
func listenError(what, addr, flag string, err error) string {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Sprintf("%s cannot listen on %s: the port is in use (by another robothub hub serve, robothub dev or make run?); choose a free one with %s 127.0.0.1:PORT", what, addr, flag)
	}
	return fmt.Sprintf("%s cannot listen on %s (%s): %v", what, addr, flag, err)
}
