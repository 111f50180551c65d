// Package hubemu is the local hub emulator: the hub's webhook management API (the same paths,
// shapes and error bodies as the public hub), bearer tokens mapped to users, events that are
// delivered to webhooks as v3 payloads with retries, an activity view with replay, and job webhooks
// that run a local subprocess, and spaces: git repositories served through git http-backend, whose
// pushes are announced as repo.content events. State lives in SQLite (modernc.org/sqlite), in a file
// or in memory, and the spaces' repositories in a directory beside it.
//
// An Emulator does not listen on anything: Handler returns its http.Handler and Run drives event
// delivery and job runs until its context ends. The routes are listed in routes.go; the routes under
// /api/emulator/ exist only here, not on the public hub.
package hubemu
