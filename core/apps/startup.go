package apps

import (
	"context"
	"fmt"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// StartupApp returns the startup app ("" when none): the --startup-app flag, else the one saved
// through SetStartupApp.
func (m *Manager) StartupApp() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.startupApp
}

// SetStartupApp sets (or, with "", clears) the startup app and saves it. The app must be installed.
// It is armed again: it starts after the next wake-up.
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

// RunStartup runs the daemon's start-up sequence: install the startup app from the catalog if it
// is missing, arm it to start after the first wake-up, then wake the robot if wakeUp is set.
func (m *Manager) RunStartup(ctx context.Context, wakeUp bool) {
	if name := m.StartupApp(); name != "" {
		if _, err := m.App(name); err != nil {
			m.installStartupApp(ctx, name)
		}
		m.mu.Lock()
		m.launchOnWake = true
		m.mu.Unlock()
	}
	if wakeUp && m.robot != nil {
		m.log.Info("waking the robot up")
		m.robot.WakeUp()
	}
}

func (m *Manager) installStartupApp(ctx context.Context, name string) {
	info, err := m.catalog.Lookup(ctx, name)
	if err != nil {
		m.log.Error("startup app is not installed and cannot be found in the catalog", "app", name, "err", err)
		return
	}
	m.log.Info("installing the startup app from the catalog", "app", name, "url", info.URL)
	job, err := m.Install(info.URL)
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
	if !m.robot.Awake() {
		m.log.Info("antenna touch: waking the robot for the startup app", "app", name)
		mv := m.robot.WakeUp()
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
