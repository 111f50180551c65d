package robotd

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/renameio/v2"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/machineid"

	"github.com/robothub/robothub/robotd/httpapi"
)

// The public daemon's daemon and hf-auth routes: starting and stopping the robot's control (the
// HTTP server keeps serving), its display name, its hardware id, the app lock, and logging the
// robot in to the hub with a token so that the dashboard installs private spaces.

// control is what the daemon routes keep: whether the robot's control is stopped, and the files
// of the name and the hub token.
type control struct {
	mu      sync.Mutex
	stopped bool
	dataDir string // "": nothing is kept across restarts
	hubURL  string // "": no hub (--hub-url none)
}

// DefaultRobotName is the robot's display name until one is set.
const DefaultRobotName = "robot"

func (c *control) file(name string) string {
	if c.dataDir == "" {
		return ""
	}
	return filepath.Join(c.dataDir, name)
}

func (s *Server) robotName() string {
	if p := s.ctl.file("robot-name"); p != "" {
		if data, err := os.ReadFile(p); err == nil && len(strings.TrimSpace(string(data))) > 0 {
			return strings.TrimSpace(string(data))
		}
	}
	return DefaultRobotName
}

type robotName struct {
	Name *string `json:"name"`
}

func (s *Server) handleGetRobotName(w http.ResponseWriter, r *http.Request) {
	name := s.robotName()
	httpapi.WriteJSON(w, http.StatusOK, robotName{Name: &name})
}

func (s *Server) handleSetRobotName(w http.ResponseWriter, r *http.Request) {
	var req robotName
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if req.Name == nil {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError("body: field name is required: the robot's display name, 1 to 64 characters"))
		return
	}
	name := strings.TrimSpace(*req.Name)
	if n := utf8.RuneCountInString(name); n < 1 || n > 64 || strings.ContainsAny(name, "\n\r\x00") {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError("name: 1 to 64 characters on one line"))
		return
	}
	p := s.ctl.file("robot-name")
	if p == "" {
		httpapi.WriteJSON(w, http.StatusServiceUnavailable, httpapi.Detail{Detail: "this daemon keeps no data directory: the name cannot be saved"})
		return
	}
	if err := writeFileAtomic(p, []byte(name+"\n"), 0o644); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, robotName{Name: &name})
}

// writeFileAtomic replaces path with data (renameio: a temporary file, synced, renamed over), with
// mode perm even when an older file had another: a secret written 0600 stays 0600.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return renameio.WriteFile(path, data, perm, renameio.WithStaticPermissions(perm))
}

// hardwareID names this machine without revealing its machine id (internal/machineid: the first 16
// hex digits of the SHA-256 of /etc/machine-id or the board's serial number), nil when there is
// neither.
func hardwareID() *string {
	if id, _ := machineid.ID(); id != "" {
		return &id
	}
	return nil
}

func (s *Server) handleHardwareID(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, map[string]*string{"hardware_id": hardwareID()})
}

type lockStatus struct {
	State      string  `json:"state"`
	HolderName *string `json:"holder_name"`
}

func (s *Server) handleLockStatus(w http.ResponseWriter, r *http.Request) {
	slot := s.apps.Slot()
	out := lockStatus{State: slot.State}
	if slot.Holder != "" {
		out.HolderName = &slot.Holder
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// handleDaemonStart turns the robot's control back on after a stop, and wakes it with
// ?wake_up=true.
func (s *Server) handleDaemonStart(w http.ResponseWriter, r *http.Request) {
	wake, err := httpapi.RequiredBool(r, "wake_up")
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	s.ctl.mu.Lock()
	s.ctl.stopped = false
	s.ctl.mu.Unlock()
	if wake {
		s.robot.WakeUp()
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"state": "running"})
}

// handleDaemonStop stops the robot's control: with ?goto_sleep=true it lays the head down first,
// then the motors go limp. Apps and the API keep running; start turns the control back on.
func (s *Server) handleDaemonStop(w http.ResponseWriter, r *http.Request) {
	sleep, err := httpapi.RequiredBool(r, "goto_sleep")
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if sleep {
		m := s.robot.GotoSleep(true)
		select {
		case <-m.Done():
		case <-r.Context().Done():
			return
		}
	} else if err := s.robot.SetMotorMode("disabled"); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	s.ctl.mu.Lock()
	s.ctl.stopped = true
	s.ctl.mu.Unlock()
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"state": "stopped"})
}

// handleDaemonRestart restarts the robot's control: the motors on again, the robot awake.
func (s *Server) handleDaemonRestart(w http.ResponseWriter, r *http.Request) {
	s.ctl.mu.Lock()
	s.ctl.stopped = false
	s.ctl.mu.Unlock()
	s.robot.WakeUp()
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"state": "running"})
}

// --- hf-auth ------------------------------------------------------------------------------------

// hubToken is the token the robot was logged in with (save-token), else the one the daemon started
// with (HF_TOKEN, the hub's token file).
func (s *Server) savedHubToken() string {
	if p := s.ctl.file("hub-token"); p != "" {
		if data, err := os.ReadFile(p); err == nil {
			return strings.TrimSpace(string(data))
		}
	}
	return ""
}

func (s *Server) whoAmI(ctx context.Context, token string) (*hub.WhoAmI, error) {
	if s.ctl.hubURL == "" {
		return nil, errors.New("this daemon has no hub (--hub-url none)")
	}
	c, err := hub.New(s.ctl.hubURL, hub.WithToken(token))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return c.WhoAmI(ctx)
}

type tokenResponse struct {
	Status   string  `json:"status"`
	Username *string `json:"username"`
	Message  *string `json:"message"`
}

// handleSaveToken checks a hub token with the hub (whoami) and keeps it (0600, in the data dir)
// for the dashboard's private installs. The token never appears in an answer or a log line.
func (s *Server) handleSaveToken(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Token *string `json:"token"`
	}
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if req.Token == nil || strings.TrimSpace(*req.Token) == "" {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError("body: field token is required: a hub access token"))
		return
	}
	token := strings.TrimSpace(*req.Token)
	who, err := s.whoAmI(r.Context(), token)
	if err != nil {
		msg := "the hub refused the token: " + redactToken(err.Error(), token)
		httpapi.WriteJSON(w, http.StatusBadRequest, httpapi.Detail{Detail: msg})
		return
	}
	p := s.ctl.file("hub-token")
	if p == "" {
		httpapi.WriteJSON(w, http.StatusServiceUnavailable, httpapi.Detail{Detail: "this daemon keeps no data directory: the token cannot be saved"})
		return
	}
	if err := writeFileAtomic(p, []byte(token+"\n"), 0o600); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	s.log.Info("the robot is logged in to the hub", "user", who.Name)
	httpapi.WriteJSON(w, http.StatusOK, tokenResponse{Status: "success", Username: &who.Name})
}

func redactToken(msg, token string) string {
	if token == "" {
		return msg
	}
	return strings.ReplaceAll(msg, token, "[token]")
}

func (s *Server) handleAuthStatus(w http.ResponseWriter, r *http.Request) {
	token := s.savedHubToken()
	if token == "" {
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"is_logged_in": false, "username": nil})
		return
	}
	who, err := s.whoAmI(r.Context(), token)
	if err != nil {
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"is_logged_in": false, "username": nil, "error": redactToken(err.Error(), token)})
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"is_logged_in": true, "username": who.Name})
}

func (s *Server) handleDeleteToken(w http.ResponseWriter, r *http.Request) {
	if p := s.ctl.file("hub-token"); p != "" {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			httpapi.WriteError(w, r, s.log, err)
			return
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "success"})
}

// The public daemon relays WebRTC through its maker's central server and logs in with its OAuth
// app; this daemon has neither: the routes answer so, in the public shapes.
const noRelay = "this daemon has no central relay: apps and the dashboard reach it directly"

func (s *Server) handleRelayStatus(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"state": "unavailable", "message": noRelay, "is_connected": false})
}

func (s *Server) handleRefreshRelay(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "unavailable", "message": noRelay, "token_available": s.savedHubToken() != ""})
}

func (s *Server) handleCentralRobotStatus(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"available": false, "robots": []any{}, "reason": "no_central_relay"})
}

func (s *Server) handleOAuthConfigured(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"configured": false})
}

const noOAuth = "OAuth login is not configured on this daemon: log the robot in with a hub token (POST /api/hf-auth/save-token)"

func (s *Server) handleOAuthUnavailable(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusServiceUnavailable, httpapi.Detail{Detail: noOAuth})
}

func (s *Server) handleOAuthSessionStatus(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "not_found", "message": "no OAuth session " + httpapi.Truncate(r.PathValue("session_id")) + ": " + noOAuth})
}

func (s *Server) handleOAuthSessionCancel(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusNotFound, httpapi.Detail{Detail: "Session not found"})
}
