package main

import (
	"errors"
	"io"
	"sync"
	"syscall"
)

// brokenPipeStops is stdout or stderr when it is a pipe whose reader may go away: `robothub dev |
// tee log`, where Ctrl-C ends tee too. A write to the broken pipe killed robothub with SIGPIPE in
// the middle of its shutdown, and the app the robot daemon ran was left orphaned. With SIGPIPE
// ignored (main) such a write fails with EPIPE instead; the first one stops robothub as Ctrl-C does
// (stop), and the output is dropped from then on.
type brokenPipeStops struct {
	w    io.Writer
	once sync.Once
	stop func()
}

func (b *brokenPipeStops) Write(p []byte) (int, error) {
	n, err := b.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		b.once.Do(b.stop)
		return len(p), nil
	}
	return n, err
}
