package apps

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/robothub/robothub/core/apps/catalog"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/procgroup"
)

// Session kinds.
const (
	sessionApp    = "app"    // the SDK inside the app the daemon runs: it shares the app's slot
	sessionRemote = "remote" // any other SDK client: it holds no slot; many may connect at once
)

// MaxSessionsPerPeer caps one client's sessions, so that a leaking client cannot grow the table.
const MaxSessionsPerPeer = 8

// ErrTooManySessions refuses a session beyond MaxSessionsPerPeer: a fault.RateLimited (HTTP 429).
var ErrTooManySessions error = &fault.Error{Kind: fault.RateLimited, Msg: "too many SDK sessions"}

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
	State  string `json:"state"` // free or local_app (remote_session is the anchor's relay, which this daemon has not)
	Holder string `json:"holder,omitempty"`
}

// OpenSession opens an SDK session, until closed or the TTL passes without a heartbeat. A client in
// the running app's process group (loopback only) joins the app and marks it running; any other is
// a remote session. The app slot is one running app, not one client: as the anchor lets any number
// of SDK clients drive the robot beside its managed app, remote sessions hold no slot, so a client
// that died does not lock the next one out for its lease.
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
	s := &session{SessionInfo: SessionInfo{ID: randomHex(12), Kind: sessionRemote, Client: req.Client, TTL: m.cfg.SessionTTL.Seconds(), Opened: now},
		pid: req.PID, peer: req.Peer, seen: now}
	if r := m.activeLocked(); r != nil && req.Local && req.PID > 0 && procgroup.Of(req.PID) == r.pid {
		s.Kind, s.App = sessionApp, r.info.Name
		if r.state == StateStarting {
			r.state = StateRunning
		}
	} else if m.closed {
		return SessionInfo{}, fault.Refusedf("The daemon is shutting down")
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

// Slot says who holds the app slot: the running app, if any.
func (m *Manager) Slot() SlotInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.activeLocked(); r != nil {
		return SlotInfo{State: "local_app", Holder: r.info.Name}
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

// slotBusyLocked returns the refusal for a new app, or nil when the slot is free.
func (m *Manager) slotBusyLocked() error {
	if m.closed {
		return fault.Refusedf("The daemon is shutting down")
	}
	if r := m.activeLocked(); r != nil {
		return fault.Refusedf("An app is already running: '%s' (%s); stop it first: POST /api/apps/stop-current-app, or Stop on the dashboard", r.info.Name, r.state)
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// StartupApp returns the --startup-app flag, else the app saved by SetStartupApp ("" if none).
func (m *Manager) StartupApp() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.startupApp
}

// SetStartupApp saves the installed app name ("" clears) as the startup app, armed to start.
func (m *Manager) SetStartupApp(name string) error {
	if name != "" {
		if _, err := m.App(name); err != nil {
			// The anchor answers 400: the request is refused, not a route to nothing.
			return fault.Refusedf("App '%s' is not installed", truncate(name, 100))
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := writeJSONAtomic(m.path(startupFile), startupConfig{StartupApp: name}); err != nil {
		return fmt.Errorf("saving the startup app: %w", err)
	}
	m.startupApp = name
	m.launchOnWake = name != ""
	m.log.Info("startup app set", "app", name)
	return nil
}

// RunStartup installs a missing startup app from the catalog, arms it, and wakes the robot if asked.
func (m *Manager) RunStartup(ctx context.Context, wakeUp bool) {
	if name := m.StartupApp(); name != "" {
		if _, err := m.App(name); err != nil {
			m.installStartupApp(ctx, name)
		}
		m.mu.Lock()
		m.launchOnWake = true
		m.mu.Unlock()
	}
	if wakeUp && m.cfg.Robot != nil {
		m.log.Info("waking the robot up")
		m.cfg.Robot.WakeUp()
	}
}

func (m *Manager) installStartupApp(ctx context.Context, name string) {
	listed, err := m.catalog.List(ctx, true)
	i := slices.IndexFunc(listed, func(a catalog.App) bool { return a.Name == name || strings.ReplaceAll(a.Name, "-", "_") == name })
	if err != nil || i < 0 {
		m.log.Error("startup app is not installed and cannot be found in the catalog", "app", name, "hub", m.cfg.HubURL, "err", err)
		return
	}
	info := listed[i]
	m.log.Info("installing the startup app from the catalog", "app", name, "url", info.GitURL)
	job, err := m.Install(info.GitURL)
	if err != nil {
		m.log.Error("installing the startup app", "app", name, "err", err)
		return
	}
	if err := job.Wait(); err != nil {
		m.log.Error("installing the startup app", "app", name, "job", job.ID(), "err", err)
	}
}

// onWake starts the startup app after the first wake-up that follows arming.
func (m *Manager) onWake() {
	m.mu.Lock()
	name, fire := m.startupApp, m.launchOnWake && m.startupApp != ""
	m.launchOnWake = false
	m.mu.Unlock()
	if fire {
		m.startStartupApp(name, "wake-up")
	}
}

// onAntennaTouch wakes an asleep robot and starts the startup app, when the slot is free.
func (m *Manager) onAntennaTouch() {
	name := m.StartupApp()
	if name == "" {
		return
	}
	if slot := m.Slot(); slot.State != "free" {
		m.log.Info("antenna touch: the slot is busy; not starting the startup app", "holder", slot.Holder)
		return
	}
	if !m.cfg.Robot.Awake() {
		m.log.Info("antenna touch: waking the robot for the startup app", "app", name)
		mv := m.cfg.Robot.WakeUp()
		select {
		case <-mv.Done():
		case <-time.After(30 * time.Second):
		}
		if !mv.Completed() {
			return
		}
	}
	m.startStartupApp(name, "antenna touch")
}

func (m *Manager) startStartupApp(name, reason string) {
	if slot := m.Slot(); slot.State != "free" {
		m.log.Info("not starting the startup app: the slot is busy", "app", name, "reason", reason, "holder", slot.Holder)
		return
	}
	if _, err := m.StartNoEvict(name); err != nil {
		m.log.Warn("starting the startup app", "app", name, "reason", reason, "err", err)
		return
	}
	m.log.Info("started the startup app", "app", name, "reason", reason)
}
