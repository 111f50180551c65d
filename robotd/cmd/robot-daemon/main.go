// Command robot-daemon serves the robot and runs its apps; see package robotd.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/robothub/robothub/robotd/cmd/robotdaemon"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := robotdaemon.Main(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "robot-daemon:", err)
		os.Exit(1)
	}
}
