package daemonapi

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/robothub/robothub/core/hub"

	"github.com/robothub/robothub/robotd/httpapi"
)

// The robot's hub login: a hub token checked with the hub (whoami) and kept in the data dir, for
// the dashboard's private installs. The public daemon also relays WebRTC through its maker's
// central server and logs in with its OAuth app; this daemon has neither, and those routes say so
// in the public shapes.

// HubToken is the token the robot was logged in with (save-token); "" when it was not.
func (h *Handlers) HubToken() string {
	if p := file(h.dataDir, "hub-token"); p != "" {
		if data, err := os.ReadFile(p); err == nil {
			return strings.TrimSpace(string(data))
		}
	}
	return ""
}

func (h *Handlers) whoAmI(ctx context.Context, token string) (*hub.WhoAmI, error) {
	if h.hubURL == "" {
		return nil, errors.New("this daemon has no hub (--hub-url none)")
	}
	c, err := hub.New(h.hubURL, hub.WithToken(token))
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

// SaveToken checks a hub token with the hub (whoami) and keeps it (0600, in the data dir) for the
// dashboard's private installs. The token never appears in an answer or a log line.
func (h *Handlers) SaveToken(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Token *string `json:"token"`
	}
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, h.log, err)
		return
	}
	if req.Token == nil || strings.TrimSpace(*req.Token) == "" {
		httpapi.WriteError(w, r, h.log, httpapi.BodyError("body: field token is required: a hub access token"))
		return
	}
	token := strings.TrimSpace(*req.Token)
	who, err := h.whoAmI(r.Context(), token)
	if err != nil {
		msg := "the hub refused the token: " + redactToken(err.Error(), token)
		httpapi.WriteJSON(w, http.StatusBadRequest, httpapi.Detail{Detail: msg})
		return
	}
	p := file(h.dataDir, "hub-token")
	if p == "" {
		httpapi.WriteJSON(w, http.StatusServiceUnavailable, httpapi.Detail{Detail: "this daemon keeps no data directory: the token cannot be saved"})
		return
	}
	if err := writeFileAtomic(p, []byte(token+"\n"), 0o600); err != nil {
		httpapi.WriteError(w, r, h.log, err)
		return
	}
	h.log.Info("the robot is logged in to the hub", "user", who.Name)
	httpapi.WriteJSON(w, http.StatusOK, tokenResponse{Status: "success", Username: &who.Name})
}

func redactToken(msg, token string) string {
	if token == "" {
		return msg
	}
	return strings.ReplaceAll(msg, token, "[token]")
}

func (h *Handlers) AuthStatus(w http.ResponseWriter, r *http.Request) {
	token := h.HubToken()
	if token == "" {
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"is_logged_in": false, "username": nil})
		return
	}
	who, err := h.whoAmI(r.Context(), token)
	if err != nil {
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"is_logged_in": false, "username": nil, "error": redactToken(err.Error(), token)})
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"is_logged_in": true, "username": who.Name})
}

func (h *Handlers) DeleteToken(w http.ResponseWriter, r *http.Request) {
	if p := file(h.dataDir, "hub-token"); p != "" {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			httpapi.WriteError(w, r, h.log, err)
			return
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "success"})
}

const noRelay = "this daemon has no central relay: apps and the dashboard reach it directly"

func (h *Handlers) RelayStatus(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"state": "unavailable", "message": noRelay, "is_connected": false})
}

func (h *Handlers) RefreshRelay(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "unavailable", "message": noRelay, "token_available": h.HubToken() != ""})
}

func (h *Handlers) CentralRobotStatus(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"available": false, "robots": []any{}, "reason": "no_central_relay"})
}

func (h *Handlers) OAuthConfigured(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"configured": false})
}

const noOAuth = "OAuth login is not configured on this daemon: log the robot in with a hub token (POST /api/hf-auth/save-token)"

// OAuthUnavailable answers the OAuth login's start, begin, callback and device start.
func (h *Handlers) OAuthUnavailable(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusServiceUnavailable, httpapi.Detail{Detail: noOAuth})
}

func (h *Handlers) OAuthSessionStatus(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "not_found", "message": "no OAuth session " + httpapi.Truncate(r.PathValue("session_id")) + ": " + noOAuth})
}

func (h *Handlers) OAuthSessionCancel(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusNotFound, httpapi.Detail{Detail: "Session not found"})
}
