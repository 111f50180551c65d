package daemonapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/robotd/daemonapi"
)

// fakeApps is the app lifecycle as the daemon's status reads it.
type fakeApps struct {
	startup  string
	slot     apps.SlotInfo
	sessions []apps.SessionInfo
	warnings []string
}

func (a *fakeApps) StartupApp() string           { return a.startup }
func (a *fakeApps) SDKVersion() string           { return "1.2.3" }
func (a *fakeApps) Slot() apps.SlotInfo          { return a.slot }
func (a *fakeApps) Sessions() []apps.SessionInfo { return a.sessions }
func (a *fakeApps) VenvDir() string              { return "/venvs/apps" }
func (a *fakeApps) StopTimeout() time.Duration   { return 3 * time.Second }
func (a *fakeApps) Warnings() []string           { return a.warnings }

// fakeRobot records what the daemon's control asked of it. Its moves never end: a route that
// waits for one waits until its client leaves.
type fakeRobot struct {
	mu      sync.Mutex
	mode    robot.MotorMode
	modeErr error
	awake   bool
	wakeUps int
	sleeps  int
	hw      *robot.HardwareStatus
}

func (r *fakeRobot) MotorMode() robot.MotorMode {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mode
}

func (r *fakeRobot) SetMotorMode(m robot.MotorMode) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.modeErr != nil {
		return r.modeErr
	}
	r.mode = m
	return nil
}

func (r *fakeRobot) HardwareStatus() *robot.HardwareStatus { return r.hw }
func (r *fakeRobot) BackendName() string                   { return "sim" }

func (r *fakeRobot) Awake() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.awake
}

func (r *fakeRobot) WakeUp() *robot.Move {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wakeUps++
	r.awake, r.mode = true, robot.MotorsEnabled
	return &robot.Move{ID: "wake"}
}

func (r *fakeRobot) GotoSleep(bool) *robot.Move {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sleeps++
	return &robot.Move{ID: "sleep"}
}

// routes serves h as robotd's route table does.
func routes(h *daemonapi.Handlers) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/daemon/status", h.Status)
	mux.HandleFunc("POST /api/daemon/start", h.Start)
	mux.HandleFunc("POST /api/daemon/stop", h.Stop)
	mux.HandleFunc("POST /api/daemon/restart", h.Restart)
	mux.HandleFunc("GET /api/daemon/robot-name", h.GetRobotName)
	mux.HandleFunc("POST /api/daemon/robot-name", h.SetRobotName)
	mux.HandleFunc("GET /api/daemon/hardware-id", h.HardwareID)
	mux.HandleFunc("GET /api/daemon/robot-app-lock-status", h.LockStatus)
	mux.HandleFunc("POST /api/hf-auth/save-token", h.SaveToken)
	mux.HandleFunc("GET /api/hf-auth/status", h.AuthStatus)
	mux.HandleFunc("DELETE /api/hf-auth/token", h.DeleteToken)
	mux.HandleFunc("GET /api/hf-auth/relay-status", h.RelayStatus)
	mux.HandleFunc("POST /api/hf-auth/refresh-relay", h.RefreshRelay)
	mux.HandleFunc("GET /api/hf-auth/central-robot-status", h.CentralRobotStatus)
	mux.HandleFunc("GET /api/hf-auth/oauth/configured", h.OAuthConfigured)
	mux.HandleFunc("GET /api/hf-auth/oauth/start", h.OAuthUnavailable)
	mux.HandleFunc("POST /api/hf-auth/oauth/device/start", h.OAuthUnavailable)
	mux.HandleFunc("GET /api/hf-auth/oauth/status/{session_id}", h.OAuthSessionStatus)
	mux.HandleFunc("DELETE /api/hf-auth/oauth/session/{session_id}", h.OAuthSessionCancel)
	return mux
}

// call sends one request to h and returns the status and the JSON body decoded into a map (nil
// when the body is no JSON object).
func call(t *testing.T, h http.Handler, method, path, body string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, rd))
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil && rec.Code < 300 {
		t.Fatalf("%s %s: %d with a body that is no JSON object: %q", method, path, rec.Code, rec.Body.String())
	}
	return rec.Code, out
}
