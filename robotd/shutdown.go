package robotd

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// nextSignal returns a context done at the next SIGINT or SIGTERM the process gets. Taken when the
// daemon starts to shut down, it is the second Ctrl-C (or systemd's second SIGTERM), which skips
// what is left of the robot's sleep move: the motors let go at once.
func nextSignal() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
