package robotd

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
)

// guard wraps the API with the daemon's request checks, in order:
//
//  1. Host: only IP literals, localhost and the robot's own names are served, so that a web page
//     cannot reach the daemon through DNS rebinding.
//  2. Cross-site: state-changing requests from a browser page of another origin are refused
//     (Sec-Fetch-Site, else Origin against Host), so a web page cannot start apps on the robot.
//  3. Token: with --api-token, /api/ requests need "Authorization: Bearer <token>" (or ?token= for
//     EventSource streams, which cannot set headers).
func (s *Server) guard(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.log.Warn("refused a cross-site request", "method", r.Method, "path", r.URL.Path, "origin", r.Header.Get("Origin"))
		writeJSON(w, http.StatusForbidden, detail{Detail: "Cross-site requests are refused: state-changing calls must come from the dashboard or a non-browser client"})
	}))
	tokenChecked := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.token != "" && strings.HasPrefix(r.URL.Path, "/api/") && !s.tokenOK(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="robot-daemon"`)
			writeJSON(w, http.StatusUnauthorized, detail{Detail: "Missing or invalid API token"})
			return
		}
		next.ServeHTTP(w, r)
	})
	protected := cop.Handler(tokenChecked)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r.Host) {
			writeJSON(w, http.StatusMisdirectedRequest, detail{Detail: "Host " + r.Host + " is not served by this daemon; use the robot's IP address or add --allowed-host"})
			return
		}
		protected.ServeHTTP(w, r)
	})
}

func (s *Server) tokenOK(r *http.Request) bool {
	got := ""
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		got = strings.TrimPrefix(h, "Bearer ")
	} else if r.Method == http.MethodGet {
		got = r.URL.Query().Get("token")
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1
}

func (s *Server) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" || net.ParseIP(host) != nil || host == "localhost" {
		return true
	}
	for _, h := range s.allowedHosts {
		if host == h {
			return true
		}
	}
	return false
}
