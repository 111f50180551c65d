package robotd

import (
	"net/http"
	"strings"

	"github.com/robothub/robothub/robotd/httpapi"
)

func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, httpapi.StatusOK{Status: "ok"})
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
