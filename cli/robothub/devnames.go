package main

import (
	"github.com/robothub/robothub/cli/cliapp"
	"github.com/robothub/robothub/cli/robothub/hubcmd"
)

// What `robothub dev` (dev.go) shares with `robothub hub` and `robothub serve`: dev starts the same
// local hub and receiver, so it uses their defaults, data directory, lock and files.
const DefaultHubAddr = hubcmd.DefaultAddr

var (
	defaultDataDir   = hubcmd.DefaultDataDir
	lockDatabase     = hubcmd.LockDatabase
	sameLocalRoute   = hubcmd.SameLocalRoute
	writePrivateFile = hubcmd.WritePrivateFile
	writeTokenFile   = hubcmd.WriteTokenFile
	listenError      = cliapp.ListenError
	newLogger        = cliapp.NewLogger
)
