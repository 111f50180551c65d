// Package broker is an MQTT broker in this process, for `robothub dev` and `make run`: a package of
// its own so that the binaries that only talk to a broker (robot-daemon, the Lambda bootstrap) do not
// carry one.
package broker

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Broker is an MQTT 3.1.1/5 broker in this process (mochi-mqtt), for `robothub dev`: it listens on
// loopback only and lets in the clients that send its password (any user name), so that another
// local user cannot speak for a robot of the fleet. Its retained messages and sessions live in
// memory and end with it; a fleet of real robots uses a real broker with TLS and per-robot
// credentials and ACLs (README, Fleets).
type Broker struct {
	srv *mochi.Server
	ln  net.Listener
}

// Start listens on addr, which must be a loopback address, and serves until Close; a client must
// send password (which must not be empty) to connect.
func Start(addr, password string, log *slog.Logger) (*Broker, error) {
	if password == "" {
		return nil, errors.New("the embedded broker needs a password: another local user could otherwise publish a robot's status")
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("broker address %q: %v", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("broker address %s: the embedded broker is for one machine (a password, no TLS, no ACLs), so it listens on loopback only (127.0.0.1 or [::1])", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	srv := mochi.New(&mochi.Options{Logger: log, InlineClient: false})
	if err := srv.AddHook(&passwordHook{password: []byte(password), log: log}, nil); err != nil {
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

// passwordHook lets in a client that sends the broker's password, and gives every client let in
// every topic: on one developer's machine, the clients are that developer's robots and tools.
type passwordHook struct {
	mochi.HookBase
	password []byte
	log      *slog.Logger
}

func (h *passwordHook) ID() string { return "password-auth" }

func (h *passwordHook) Provides(b byte) bool {
	return bytes.Contains([]byte{mochi.OnConnectAuthenticate, mochi.OnACLCheck}, []byte{b})
}

func (h *passwordHook) OnConnectAuthenticate(cl *mochi.Client, pk packets.Packet) bool {
	if pk.Connect.PasswordFlag && subtle.ConstantTimeCompare(pk.Connect.Password, h.password) == 1 {
		return true
	}
	h.log.Warn("refused a client without the broker's password", "client", cl.ID, "remote", cl.Net.Remote)
	return false
}

func (h *passwordHook) OnACLCheck(*mochi.Client, string, bool) bool { return true }

// Addr is the address the broker listens on.
func (b *Broker) Addr() string { return b.ln.Addr().String() }

// URL is the broker's mqtt:// URL.
func (b *Broker) URL() string { return "mqtt://" + b.Addr() }

// Close stops the broker and disconnects its clients.
func (b *Broker) Close() error { return b.srv.Close() }
