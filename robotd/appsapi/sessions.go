package appsapi

import (
	"net/http"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/robotd/httpapi"
)

type sessionRequest struct {
	PID    int    `json:"pid"`
	Client string `json:"client"`
}

func (s *Handlers) OpenSession(w http.ResponseWriter, r *http.Request) {
	var req sessionRequest
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, true); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	info, err := s.apps.OpenSession(apps.SessionRequest{PID: req.PID, Local: httpapi.FromThisMachine(r), Client: req.Client, Peer: s.clients.ClientKey(r)})
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, info)
}

func (s *Handlers) Heartbeat(w http.ResponseWriter, r *http.Request) {
	info, err := s.apps.Heartbeat(r.PathValue("session_id"))
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, info)
}

func (s *Handlers) CloseSession(w http.ResponseWriter, r *http.Request) {
	if err := s.apps.CloseSession(r.PathValue("session_id")); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.StatusOK{Status: "closed"})
}
