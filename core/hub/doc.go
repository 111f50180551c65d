// Package hub is a client for a model hub's webhook management API: list, get, create, update,
// enable, disable and delete webhooks, as the public hub (https://huggingface.co) and the local
// emulator (package hubemu) serve it.
//
// Requests are checked before they are sent (Create and Update return a *ValidationError naming the
// field, which is fault.ErrInvalid), failures come back as *Error values that errors.Is matches by
// status against core/fault's kinds (fault.ErrNotFound, fault.ErrUnauthenticated, fault.ErrForbidden,
// fault.ErrRateLimited, fault.ErrRefused, fault.ErrInvalid), and idempotent calls are retried with
// backoff on 429, 502, 503, 504 and connection errors. A create is never sent twice. The token is
// sent only in the Authorization header: it appears in no error and no log record.
//
// repos.go holds the repo calls that publishing needs: WhoAmI (the token's user and role),
// CreateRepo, DeleteRepo, ListSpaces and SpaceInfo. Send carries calls this package has no method for,
// such as the local hub's own API (internal/hubemu/http.Client).
package hub
