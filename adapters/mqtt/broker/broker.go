// Package broker is an MQTT broker in this process, for `robothub dev` and `make run`: a package of
// its own so that the binaries that only talk to a broker (robot-daemon, the Lambda bootstrap) do not
// carry one.
package broker

import (
	"fmt"
	"log/slog"
	"net"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"
)

// Broker is an MQTT 3.1.1/5 broker in this process (mochi-mqtt), for `robothub dev`: it listens on
// loopback only and lets every local client in, so a developer's machine needs nothing more. Its
// retained messages and sessions live in memory and end with it; a fleet of real robots uses a
// real broker with TLS and per-robot credentials (README, Fleets).
type Broker struct {
	srv *mochi.Server
	ln  net.Listener
}

// Start listens on addr, which must be a loopback address, and serves until Close.
func Start(addr string, log *slog.Logger) (*Broker, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("broker address %q: %v", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("broker address %s: the embedded broker has no authentication, so it listens on loopback only (127.0.0.1 or [::1])", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	srv := mochi.New(&mochi.Options{Logger: log, InlineClient: false})
	if err := srv.AddHook(new(auth.AllowHook), nil); err != nil {
		ln.Close()
		return nil, err
	}
	if err := srv.AddListener(listeners.NewNet("dev", ln)); err != nil {
		ln.Close()
		return nil, err
	}
	if err := srv.Serve(); err != nil {
		ln.Close()
		return nil, err
	}
	return &Broker{srv: srv, ln: ln}, nil
}

// Addr is the address the broker listens on.
func (b *Broker) Addr() string { return b.ln.Addr().String() }

// URL is the broker's mqtt:// URL.
func (b *Broker) URL() string { return "mqtt://" + b.Addr() }

// Close stops the broker and disconnects its clients.
func (b *Broker) Close() error { return b.srv.Close() }
