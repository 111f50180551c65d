// Command neverready is a broken robot-daemon release for the update tests: it answers --version
// as robot-daemon does (so it passes the check before the swap), and otherwise never says READY
// to systemd, as a release that hangs at start would.
package main

import (
	"fmt"
	"os"
	"time"
)

var version = "0.0.0"

func main() {
	for _, a := range os.Args[1:] {
		if a == "--version" || a == "-v" {
			fmt.Printf("robot-daemon version %s\n", version)
			return
		}
	}
	fmt.Fprintln(os.Stderr, "neverready: starting, and never ready")
	time.Sleep(time.Hour)
}
