//go:build !linux

package delivery

import "os/exec"

// startSandboxed refuses: there is no Landlock outside Linux (sandbox.go says why jobs do not run
// unsandboxed).
func startSandboxed(cmd *exec.Cmd, read []string, runDir, rootDir string) error { return errNoSandbox }

// sandboxError says why jobs cannot be sandboxed here.
func sandboxError() error { return errNoSandbox }
