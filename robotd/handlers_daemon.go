package robotd

import (
	"net/http"
	"strings"
	"time"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/robot"

	"github.com/robothub/robothub/robotd/httpapi"
)

func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, httpapi.StatusOK{Status: "ok"})
}

type daemonStatus struct {
	Type            string             `json:"type"`
	RobotName       string             `json:"robot_name"`
	State           string             `json:"state"`
	DesktopApp      bool               `json:"desktop_app_daemon"`
	Simulation      *bool              `json:"simulation_enabled"`
	MockupSim       *bool              `json:"mockup_sim_enabled"`
	BackendStatus   backendStatus      `json:"backend_status"`
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
	StopTimeout     float64            `json:"stop_timeout"`
	StartedAt       time.Time          `json:"started_at"`
	Uptime          float64            `json:"uptime"`
	// Hardware is the motor bus's health: null on the simulation.
	Hardware *robot.HardwareStatus `json:"hardware"`
	// Warnings name state the daemon could not read at start (a corrupt installed-apps.json kept aside).
	Warnings []string `json:"warnings"`
}

// backendStatus is the public daemon's RobotBackendStatus.
type backendStatus struct {
	Ready            bool            `json:"ready"`
	MotorControlMode robot.MotorMode `json:"motor_control_mode"`
	LastAlive        *float64        `json:"last_alive"`
	ControlLoopStats map[string]any  `json:"control_loop_stats"`
	Error            *string         `json:"error"`
}

func (s *Server) handleDaemonStatus(w http.ResponseWriter, r *http.Request) {
	s.ctl.mu.Lock()
	state := "running"
	if s.ctl.stopped {
		state = "stopped"
	}
	s.ctl.mu.Unlock()
	sim, mockup := s.sim, false
	now := float64(time.Now().UnixNano()) / 1e9
	bs := backendStatus{Ready: true, MotorControlMode: s.robot.MotorMode(), LastAlive: &now, ControlLoopStats: map[string]any{"period_ms": robot.ControlPeriod.Seconds() * 1000}}
	hw := s.robot.HardwareStatus()
	if hw != nil {
		bs.ControlLoopStats = map[string]any{"control_loop": hw.ControlLoop, "connected": hw.Connected}
		if hw.Error != nil {
			bs.Ready, bs.Error = false, hw.Error
		}
	}
	var startupApp *string
	if name := s.apps.StartupApp(); name != "" {
		startupApp = &name
	}
	httpapi.WriteJSON(w, http.StatusOK, daemonStatus{
		Type: "daemon_status", RobotName: s.robotName(), Simulation: &sim, MockupSim: &mockup, BackendStatus: bs, HardwareID: hardwareID(),
		State: state, Version: s.version, SDKVersion: s.apps.SDKVersion(), Backend: s.robot.BackendName(),
		WirelessVersion: s.wireless, LoopbackOnly: s.loopbackOnly, RobotAwake: s.robot.Awake(), Slot: s.apps.Slot(), Sessions: s.apps.Sessions(),
		StartupApp: startupApp, AppsVenv: s.apps.VenvDir(),
		StopTimeout: s.apps.StopTimeout().Seconds(), StartedAt: s.started, Uptime: time.Since(s.started).Seconds(),
		Hardware: s.robot.HardwareStatus(), Warnings: nonNilStrings(s.apps.Warnings()),
	})
}

// handleUnknownAPI answers unknown /api/ routes with a JSON 404, or 405 with Allow when the path
// exists for other methods.
func (s *Server) handleUnknownAPI(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		if method == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = method
		if _, pattern := s.mux.Handler(probe); pattern != "/api/" && pattern != "" {
			allow = append(allow, method)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		httpapi.WriteJSON(w, http.StatusMethodNotAllowed, httpapi.Detail{Detail: "Method " + r.Method + " not allowed; use " + strings.Join(allow, " or ")})
		return
	}
	httpapi.WriteJSON(w, http.StatusNotFound, httpapi.Detail{Detail: "Not found: " + r.URL.Path})
}

func nonNilStrings(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
