// Package http is the local hub's HTTP API: one route table (routes.go), the handlers that decode
// requests and encode answers as the public hub does (JSON, {"error": ...} bodies, X-Error-Message),
// the one mapping of core/fault's kinds to status codes (status.go), and the Go client of the
// emulator's own routes. It calls the hub's services (internal/hubemu) and serves git's smart
// protocol through a Backend (internal/hubemu/git).
package http

import (
	"log/slog"
	"net/http"

	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/spaces"
)

// Backend serves git's smart HTTP protocol for a space whose access the server has checked:
// internal/hubemu/git.Repos.
type Backend interface {
	Serve(w http.ResponseWriter, r *http.Request, space, path, remoteUser string, log *slog.Logger)
}

// Server is the hub's HTTP API over its services.
type Server struct {
	hub     *hubemu.Emulator
	spaces  *spaces.Service
	backend Backend
	log     *slog.Logger
	handler http.Handler
	// The datasets and models served read only (datasets.go).
	datasets, models servedRepo
	modelFiles       *http.ServeMux // modelRoutes
}

// NewServer returns the HTTP API of hub and its spaces, with backend serving the spaces' git
// repositories, and the datasets of datasetsDir and models of modelsDir ("" for none) read only.
func NewServer(hub *hubemu.Emulator, sp *spaces.Service, backend Backend, datasetsDir, modelsDir string) *Server {
	s := &Server{hub: hub, spaces: sp, backend: backend, log: hub.Logger(),
		datasets: servedRepo{kind: "dataset", root: datasetsDir}, models: servedRepo{kind: "model", root: modelsDir}}
	s.modelFiles = s.modelRoutes()
	s.handler = s.middleware(s.routes())
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }
