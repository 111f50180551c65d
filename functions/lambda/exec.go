//go:build robothub.exec

package main

import "github.com/robothub/robothub/internal/actions"

// Built with -tags robothub.exec (make lambda-zip LAMBDA_EXEC=1), the bootstrap has the exec
// action, and the shell parser it reads commands with (0.48 MB).
func init() { splitCommand = actions.SplitCommand }
