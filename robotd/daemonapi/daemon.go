package daemonapi

import (
	"io/fs"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/renameio/v2"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/internal/machineid"

	"github.com/robothub/robothub/robotd/httpapi"
)

// DefaultRobotName is the robot's display name until one is set.
const DefaultRobotName = "robot"

// RobotName is the robot's display name kept in dataDir ("": none kept), else DefaultRobotName.
func RobotName(dataDir string) string {
	if p := file(dataDir, "robot-name"); p != "" {
		if data, err := os.ReadFile(p); err == nil && len(strings.TrimSpace(string(data))) > 0 {
			return strings.TrimSpace(string(data))
		}
	}
	return DefaultRobotName
}

// RobotName is the robot's display name.
func (h *Handlers) RobotName() string { return RobotName(h.dataDir) }

// HardwareID names this machine without revealing its machine id (internal/machineid: the first 16
// hex digits of the SHA-256 of /etc/machine-id or the board's serial number), nil when there is
// neither.
func HardwareID() *string {
	if id, _ := machineid.ID(); id != "" {
		return &id
	}
	return nil
}

// Status is the daemon's status (GET /api/daemon/status): the running daemon's (Handlers.Status),
// and the starting daemon's (robotd.Starting) until its robot and apps are up, which has Setup and
// no BackendStatus (null) nor Running (absent).
type Status struct {
	Type      string `json:"type"`
	RobotName string `json:"robot_name"`
	State     string `json:"state"`
	// Setup is what the starting daemon is setting up; absent once it runs.
	Setup           string             `json:"setup,omitempty"`
	DesktopApp      bool               `json:"desktop_app_daemon"`
	Simulation      *bool              `json:"simulation_enabled"`
	MockupSim       *bool              `json:"mockup_sim_enabled"`
	BackendStatus   *BackendStatus     `json:"backend_status"`
	Error           *string            `json:"error"`
	WlanIP          *string            `json:"wlan_ip"`
	HardwareID      *string            `json:"hardware_id"`
	Version         string             `json:"version"`
	SDKVersion      string             `json:"sdk_version"`
	Backend         string             `json:"backend"`
	WirelessVersion bool               `json:"wireless_version"`
	LoopbackOnly    bool               `json:"loopback_only"`
	RobotAwake      bool               `json:"robot_awake"`
	Slot            apps.SlotInfo      `json:"slot"`
	Sessions        []apps.SessionInfo `json:"sessions"`
	StartupApp      *string            `json:"startup_app"`
	AppsVenv        string             `json:"apps_venv"`
	*Running
	// Hardware is the motor bus's health: null on the simulation, and while the daemon starts.
	Hardware *robot.HardwareStatus `json:"hardware"`
	// Warnings name state the daemon could not read at start (a corrupt installed-apps.json kept aside).
	Warnings []string `json:"warnings"`
}

// Running is the part of Status only a running daemon has (its fields stand in Status's JSON).
type Running struct {
	StopTimeout float64   `json:"stop_timeout"`
	StartedAt   time.Time `json:"started_at"`
	Uptime      float64   `json:"uptime"`
}

// BackendStatus is the public daemon's RobotBackendStatus.
type BackendStatus struct {
	Ready            bool            `json:"ready"`
	MotorControlMode robot.MotorMode `json:"motor_control_mode"`
	LastAlive        *float64        `json:"last_alive"`
	ControlLoopStats map[string]any  `json:"control_loop_stats"`
	Error            *string         `json:"error"`
}

func (h *Handlers) Status(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	state := "running"
	if h.stopped {
		state = "stopped"
	}
	h.mu.Unlock()
	sim, mockup := h.sim, false
	now := float64(time.Now().UnixNano()) / 1e9
	bs := BackendStatus{Ready: true, MotorControlMode: h.robot.MotorMode(), LastAlive: &now, ControlLoopStats: map[string]any{"period_ms": robot.ControlPeriod.Seconds() * 1000}}
	hw := h.robot.HardwareStatus()
	if hw != nil {
		bs.ControlLoopStats = map[string]any{"control_loop": hw.ControlLoop, "connected": hw.Connected}
		if hw.Error != nil {
			bs.Ready, bs.Error = false, hw.Error
		}
	}
	var startupApp *string
	if name := h.apps.StartupApp(); name != "" {
		startupApp = &name
	}
	httpapi.WriteJSON(w, http.StatusOK, Status{
		Type: "daemon_status", RobotName: h.RobotName(), Simulation: &sim, MockupSim: &mockup, BackendStatus: &bs, HardwareID: HardwareID(),
		State: state, Version: h.version, SDKVersion: h.apps.SDKVersion(), Backend: h.robot.BackendName(),
		WirelessVersion: h.wireless, LoopbackOnly: h.loopbackOnly, RobotAwake: h.robot.Awake(), Slot: h.apps.Slot(), Sessions: h.apps.Sessions(),
		StartupApp: startupApp, AppsVenv: h.apps.VenvDir(),
		Running:  &Running{StopTimeout: h.apps.StopTimeout().Seconds(), StartedAt: h.started, Uptime: time.Since(h.started).Seconds()},
		Hardware: hw, Warnings: nonNilStrings(h.apps.Warnings()),
	})
}

func nonNilStrings(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

type robotName struct {
	Name *string `json:"name"`
}

func (h *Handlers) GetRobotName(w http.ResponseWriter, r *http.Request) {
	name := h.RobotName()
	httpapi.WriteJSON(w, http.StatusOK, robotName{Name: &name})
}

func (h *Handlers) SetRobotName(w http.ResponseWriter, r *http.Request) {
	var req robotName
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, h.log, err)
		return
	}
	if req.Name == nil {
		httpapi.WriteError(w, r, h.log, httpapi.BodyError("body: field name is required: the robot's display name, 1 to 64 characters"))
		return
	}
	name := strings.TrimSpace(*req.Name)
	if n := utf8.RuneCountInString(name); n < 1 || n > 64 || strings.ContainsAny(name, "\n\r\x00") {
		httpapi.WriteError(w, r, h.log, httpapi.BodyError("name: 1 to 64 characters on one line"))
		return
	}
	p := file(h.dataDir, "robot-name")
	if p == "" {
		httpapi.WriteJSON(w, http.StatusServiceUnavailable, httpapi.Detail{Detail: "this daemon keeps no data directory: the name cannot be saved"})
		return
	}
	if err := writeFileAtomic(p, []byte(name+"\n"), 0o644); err != nil {
		httpapi.WriteError(w, r, h.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, robotName{Name: &name})
}

// writeFileAtomic replaces path with data (renameio: a temporary file, synced, renamed over), with
// mode perm even when an older file had another: a secret written 0600 stays 0600.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return renameio.WriteFile(path, data, perm, renameio.WithStaticPermissions(perm))
}

func (h *Handlers) HardwareID(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, map[string]*string{"hardware_id": HardwareID()})
}

type lockStatus struct {
	State      string  `json:"state"`
	HolderName *string `json:"holder_name"`
}

func (h *Handlers) LockStatus(w http.ResponseWriter, r *http.Request) {
	slot := h.apps.Slot()
	out := lockStatus{State: slot.State}
	if slot.Holder != "" {
		out.HolderName = &slot.Holder
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// Start turns the robot's control back on after a stop, and wakes it with ?wake_up=true.
func (h *Handlers) Start(w http.ResponseWriter, r *http.Request) {
	wake, err := httpapi.RequiredBool(r, "wake_up")
	if err != nil {
		httpapi.WriteError(w, r, h.log, err)
		return
	}
	h.setStopped(false)
	if wake {
		h.robot.WakeUp()
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"state": "running"})
}

// Stop stops the robot's control: with ?goto_sleep=true it lays the head down first, then the
// motors go limp. Apps and the API keep running; start turns the control back on.
func (h *Handlers) Stop(w http.ResponseWriter, r *http.Request) {
	sleep, err := httpapi.RequiredBool(r, "goto_sleep")
	if err != nil {
		httpapi.WriteError(w, r, h.log, err)
		return
	}
	if sleep {
		m := h.robot.GotoSleep(true)
		select {
		case <-m.Done():
		case <-r.Context().Done():
			return
		}
	} else if err := h.robot.SetMotorMode(robot.MotorsDisabled); err != nil {
		httpapi.WriteError(w, r, h.log, err)
		return
	}
	h.setStopped(true)
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"state": "stopped"})
}

// Restart restarts the robot's control: the motors on again, the robot awake.
func (h *Handlers) Restart(w http.ResponseWriter, r *http.Request) {
	h.setStopped(false)
	h.robot.WakeUp()
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"state": "running"})
}

func (h *Handlers) setStopped(stopped bool) {
	h.mu.Lock()
	h.stopped = stopped
	h.mu.Unlock()
}
