// Package httpstatus is the one table from core/fault's kinds to HTTP statuses, for every HTTP
// server of the project: the local hub (internal/hubemu/http), the webhook receiver (core/webhook)
// and the robot daemon (robotd/httpapi). core/fault stays a vocabulary of kinds; this package holds
// numbers only, and no server.
//
// Where a surface must answer a kind otherwise, because the public service it stands in for does,
// the row says so, beside the common status, with the reason.
package httpstatus

import (
	"errors"
	"net/http"
	"syscall"

	"github.com/robothub/robothub/core/fault"
)

// Surface is one of the project's HTTP servers.
type Surface int

const (
	// Hub is the local hub emulator: the public hub's statuses.
	Hub Surface = iota + 1
	// Receiver is the webhook receiver: the public hub's receiver's statuses.
	Receiver
	// Daemon is the robot daemon: the public robot daemon's (a FastAPI server) statuses.
	Daemon
)

func (s Surface) String() string {
	switch s {
	case Hub:
		return "hub"
	case Receiver:
		return "receiver"
	case Daemon:
		return "daemon"
	}
	return "surface?"
}

// Surfaces lists every surface.
func Surfaces() []Surface { return []Surface{Hub, Receiver, Daemon} }

// Row is a kind's status.
type Row struct {
	Kind   fault.Kind
	Status int // the hub's and the receiver's status, and the daemon's unless Daemon is set
	Daemon int // the daemon's status where the public robot daemon answers otherwise; 0: Status
}

// For is the row's status on surface s.
func (r Row) For(s Surface) int {
	if s == Daemon && r.Daemon != 0 {
		return r.Daemon
	}
	return r.Status
}

// table is tried in order, so that an error of two kinds gets the first: the hub client's answer
// to a 429 is fault.RateLimited and fault.Unavailable, and is a 429.
var table = []Row{
	// The public robot daemon is FastAPI, which answers a request it cannot validate with 422; its
	// SDK and its dashboard read a 422 as "what you sent is wrong".
	{Kind: fault.Invalid, Status: http.StatusBadRequest, Daemon: http.StatusUnprocessableEntity},
	// The daemon's own checks of its clients' credentials (robotd/access) answer 401 themselves; an
	// error of this kind that reaches the table is the hub refusing the daemon's token, a failure
	// of the daemon's upstream, and a 401 would send the dashboard to the daemon's login page.
	{Kind: fault.Unauthenticated, Status: http.StatusUnauthorized, Daemon: http.StatusBadGateway},
	{Kind: fault.Forbidden, Status: http.StatusForbidden},
	{Kind: fault.NotFound, Status: http.StatusNotFound},
	// The public robot daemon's app routes answer a refused action ("An app is already running",
	// "No app is currently running") with 400 (its routers/apps.py), and apps written for it
	// check for that; the hub and the receiver follow the public hub: 409 Conflict.
	{Kind: fault.Refused, Status: http.StatusConflict, Daemon: http.StatusBadRequest},
	{Kind: fault.TooLarge, Status: http.StatusRequestEntityTooLarge},
	{Kind: fault.RateLimited, Status: http.StatusTooManyRequests},
	{Kind: fault.Upstream, Status: http.StatusBadGateway},
	{Kind: fault.Unavailable, Status: http.StatusServiceUnavailable},
	{Kind: fault.Timeout, Status: http.StatusGatewayTimeout},
	// A full or read-only disk is the operator's to mend, not a bug: 507 says so.
	{Kind: fault.Storage, Status: http.StatusInsufficientStorage},
}

// Table is a copy of the table, in the order Of tries it.
func Table() []Row { return append([]Row(nil), table...) }

// Of is the status surface s answers err with: its kind's, in the table's order; a write the
// disk refused (ENOSPC, EDQUOT, EROFS from the system) is fault.Storage's; anything else is 500.
func Of(err error, s Surface) int {
	for _, row := range table {
		if errors.Is(err, fault.Sentinel(row.Kind)) {
			return row.For(s)
		}
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EROFS) {
		return Status(fault.Storage, s)
	}
	return http.StatusInternalServerError
}

// Status is kind's status on surface s, 500 for a kind the table does not hold.
func Status(kind fault.Kind, s Surface) int {
	for _, row := range table {
		if row.Kind == kind {
			return row.For(s)
		}
	}
	return http.StatusInternalServerError
}
