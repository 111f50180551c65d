package release

import (
	"errors"
	"fmt"
)

// replaceLink: the robot daemon, the only program that swaps releases, runs on Linux. The CLIs
// built for Windows import this package to assemble and publish releases and never get here.
func replaceLink(target, name string) error {
	return fmt.Errorf("swapping %s to %s: %w", name, target, errors.ErrUnsupported)
}
