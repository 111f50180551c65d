package robotd

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/robotd/access"
	"github.com/robothub/robothub/robotd/daemonapi"
	"github.com/robothub/robothub/robotd/httpapi"
)

// Starting serves the daemon's listener while the daemon starts (the motor bus is set up, the apps
// venv prepared: seconds on a robot), so that a client is told what is happening instead of
// waiting in the listen queue: GET /api/daemon/status answers at once with state "starting" and
// the step under way, and /healthz 503 with Retry-After. Every other request waits until the
// daemon runs, as it waited in the listen queue before, so that a client that connects early (an
// SDK script, a README's curl after the port opens) is served, not refused. Once Ready hands it
// the daemon's Server, it serves through that Server alone.
type Starting struct {
	guard  *access.Guard
	info   StartingInfo
	step   atomic.Pointer[string]
	server atomic.Pointer[Server]
	ready  chan struct{} // closed by Ready
	early  http.Handler  // the guard over the starting routes
}

// StartingInfo is what the status says of a daemon that is starting.
type StartingInfo struct {
	Version, SDKVersion, Backend, AppsVenv string
	Sim, Wireless, LoopbackOnly            bool
	DataDir                                string // where the robot's name is kept
}

// NewStarting returns the handler of a starting daemon; guard checks its requests as the
// Server's will (pass it to NewServer as ServerConfig.Access).
func NewStarting(guard *access.Guard, info StartingInfo) *Starting {
	b := &Starting{guard: guard, info: info, ready: make(chan struct{})}
	b.Step("starting")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/daemon/status", b.status)
	mux.HandleFunc("/healthz", b.unavailable)
	b.early = guard.Handler(mux)
	return b
}

// Step says what the daemon is setting up now ("setting up the motor bus").
func (b *Starting) Step(what string) { b.step.Store(&what) }

// Ready hands every later request, and those waiting, to s.
func (b *Starting) Ready(s *Server) {
	b.server.Store(s)
	close(b.ready)
}

// ServeHTTP implements http.Handler.
func (b *Starting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s := b.server.Load(); s != nil {
		s.ServeHTTP(w, r)
		return
	}
	if r.URL.Path == "/api/daemon/status" || r.URL.Path == "/healthz" {
		b.early.ServeHTTP(w, r)
		return
	}
	select {
	case <-b.ready:
		b.server.Load().ServeHTTP(w, r)
	case <-r.Context().Done(): // the client left, or the start failed and the server closed
	}
}

// ConnContext and Listener are the guard's, the Server's too: set them on the http.Server.
func (b *Starting) ConnContext(ctx context.Context, c net.Conn) context.Context {
	return b.guard.ConnContext(ctx, c)
}

func (b *Starting) Listener(ln net.Listener) net.Listener { return b.guard.Listener(ln) }

// OwnerListener serves the owner's unix socket (access.Guard.OwnerListener).
func (b *Starting) OwnerListener(ln net.Listener) net.Listener { return b.guard.OwnerListener(ln) }

// status is daemonapi.Status while the daemon starts: no robot, no apps yet.
func (b *Starting) status(w http.ResponseWriter, r *http.Request) {
	step := *b.step.Load()
	sim, mockup := b.info.Sim, false
	httpapi.WriteJSON(w, http.StatusOK, daemonapi.Status{
		Type: "daemon_status", RobotName: daemonapi.RobotName(b.info.DataDir), State: "starting", Setup: step,
		Simulation: &sim, MockupSim: &mockup, HardwareID: daemonapi.HardwareID(), Version: b.info.Version, SDKVersion: b.info.SDKVersion,
		Backend: b.info.Backend, WirelessVersion: b.info.Wireless, LoopbackOnly: b.info.LoopbackOnly,
		Slot: apps.SlotInfo{State: "free"}, Sessions: []apps.SessionInfo{}, AppsVenv: b.info.AppsVenv, Warnings: []string{},
	})
}

func (b *Starting) unavailable(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", "1")
	httpapi.WriteJSON(w, http.StatusServiceUnavailable, httpapi.Detail{
		Detail: "robot-daemon is starting (" + *b.step.Load() + "): other requests wait until it runs; GET /api/daemon/status says when it does"})
}
