package robotd

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed dashboard/index.html dashboard/dashboard.js dashboard/dashboard.css
var dashboardFiles embed.FS

// dashboardCSP keeps the dashboard to its own scripts and to this daemon's API.
const dashboardCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

func (s *Server) handleDashboard() http.Handler {
	page, _ := dashboardFiles.ReadFile("dashboard/index.html")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", dashboardCSP)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-cache")
		_, _ = w.Write(page)
	})
}

func (s *Server) handleDashboardAssets() http.Handler {
	sub, _ := fs.Sub(dashboardFiles, "dashboard")
	files := http.StripPrefix("/dashboard/", http.FileServer(http.FS(sub)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
}
