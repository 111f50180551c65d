package apps

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// Session kinds.
const (
	sessionApp    = "app"    // the SDK inside the app the daemon runs: it shares the app's slot
	sessionRemote = "remote" // any other SDK client: it holds the slot itself
)

// MaxSessionsPerPeer caps the SDK sessions one client holds at once: an app that opens sessions in
// a loop, or a remote client that never closes them, cannot grow the daemon's table.
const MaxSessionsPerPeer = 8

// ErrTooManySessions refuses a session beyond MaxSessionsPerPeer (HTTP 429).
var ErrTooManySessions = errors.New("too many SDK sessions")

type session struct {
	SessionInfo
	peer string
	pid  int
	seen time.Time
}

// SessionRequest is what an SDK client says about itself when it connects.
type SessionRequest struct {
	PID    int    // the client's process ID, as it reports it
	Local  bool   // the request came over loopback, so PID is a process on this machine
	Client string // a short client description, e.g. robot_sdk/1.0
	Peer   string // who the client is (its user on this machine, or its address): sessions are capped per peer
}

// SessionInfo describes an SDK session.
type SessionInfo struct {
	ID     string    `json:"id"`
	Kind   string    `json:"kind"`
	App    string    `json:"app,omitempty"`
	Client string    `json:"client"`
	TTL    float64   `json:"ttl"`
	Opened time.Time `json:"opened"`
}

// SlotInfo says who holds the app slot.
type SlotInfo struct {
	State  string `json:"state"` // free, local_app or remote_session
	Holder string `json:"holder,omitempty"`
}

// OpenSession opens an SDK session. A client inside the running app's process group (checked by
// PID, for loopback requests only) joins the app, and marks it running; any other client becomes a
// remote session that holds the slot, which is refused while an app runs or another remote session
// is open. A session lasts until it is closed or misses heartbeats for the session TTL.
func (m *Manager) OpenSession(req SessionRequest) (SessionInfo, error) {
	if len(req.Client) > 200 {
		return SessionInfo{}, fault.Invalidf("client: at most 200 characters")
	}
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireSessionsLocked(now)
	if req.Peer != "" {
		held := 0
		for _, o := range m.sessions {
			if o.peer == req.Peer {
				held++
			}
		}
		if held >= MaxSessionsPerPeer {
			return SessionInfo{}, fmt.Errorf("%w: this client (%s) has %d open, the most one client may hold; close one (DELETE /api/sessions/<id>) or let it expire", ErrTooManySessions, req.Peer, held)
		}
	}
	s := &session{SessionInfo: SessionInfo{ID: randomHex(12), Client: req.Client, TTL: m.cfg.SessionTTL.Seconds(), Opened: now},
		pid: req.PID, peer: req.Peer, seen: now}
	if r := m.activeLocked(); r != nil && req.Local && req.PID > 0 && processGroup(req.PID) == r.pid {
		s.Kind, s.App = sessionApp, r.info.Name
		if r.state == StateStarting {
			r.state = StateRunning
		}
	} else {
		if m.closed {
			return SessionInfo{}, fault.Refusedf("The daemon is shutting down")
		}
		if err := m.slotBusyLocked(now); err != nil {
			return SessionInfo{}, err
		}
		s.Kind = sessionRemote
	}
	m.sessions[s.ID] = s
	m.log.Info("SDK session opened", "session", s.ID, "kind", s.Kind, "client", s.Client, "app", s.App)
	return s.SessionInfo, nil
}

// Heartbeat renews a session's lease.
func (m *Manager) Heartbeat(id string) (SessionInfo, error) {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireSessionsLocked(now)
	s, ok := m.sessions[id]
	if !ok {
		return SessionInfo{}, fault.NotFoundf("Session %s not found or expired", truncate(id, 64))
	}
	s.seen = now
	return s.SessionInfo, nil
}

// CloseSession ends a session and frees the slot it held.
func (m *Manager) CloseSession(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sessions[id]; !ok {
		return fault.NotFoundf("Session %s not found or expired", truncate(id, 64))
	}
	delete(m.sessions, id)
	m.log.Info("SDK session closed", "session", id)
	return nil
}

// Sessions lists the open sessions.
func (m *Manager) Sessions() []SessionInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireSessionsLocked(time.Now())
	out := []SessionInfo{}
	for _, s := range m.sessions {
		out = append(out, s.SessionInfo)
	}
	return out
}

// Slot says who holds the app slot.
func (m *Manager) Slot() SlotInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if r := m.activeLocked(); r != nil {
		return SlotInfo{State: "local_app", Holder: r.info.Name}
	}
	if s := m.remoteSessionLocked(now); s != nil {
		return SlotInfo{State: "remote_session", Holder: s.Client}
	}
	return SlotInfo{State: "free"}
}

func (m *Manager) expireSessionsLocked(now time.Time) {
	for id, s := range m.sessions {
		if now.Sub(s.seen) > m.cfg.SessionTTL {
			m.log.Info("SDK session expired", "session", id, "kind", s.Kind, "client", s.Client)
			delete(m.sessions, id)
		}
	}
}

func (m *Manager) remoteSessionLocked(now time.Time) *session {
	m.expireSessionsLocked(now)
	for _, s := range m.sessions {
		if s.Kind == sessionRemote {
			return s
		}
	}
	return nil
}

// slotBusyLocked returns the refusal for a new holder of the slot, or nil when the slot is free.
func (m *Manager) slotBusyLocked(now time.Time) error {
	if m.activeLocked() != nil {
		return fault.Refusedf("An app is already running")
	}
	if s := m.remoteSessionLocked(now); s != nil {
		return fault.Refusedf("The robot is in use by a remote SDK session (%s)", s.Client)
	}
	return nil
}

// randomHex returns n random bytes in hex: the IDs of jobs and sessions.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
