package robotd

import "net/http"

// What the daemon adds to the app's motion (core/robot's wobble.go and tracking.go): the speech
// wobble and head tracking, at the public daemon's media routes.

func (s *Server) handleWobbling(on bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.robot.SetWobbling(on)
		state := "disabled"
		if on {
			state = "enabled"
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "wobbling": state})
	}
}

func (s *Server) handleTrackingEnable(w http.ResponseWriter, r *http.Request) {
	req := struct {
		Weight *float64 `json:"weight"`
	}{}
	if r.ContentLength != 0 {
		if err := decodeBody(w, r, &req, maxBodyBytes, true); err != nil {
			writeError(w, r, s.log, err)
			return
		}
	}
	weight := 1.0
	if req.Weight != nil {
		weight = *req.Weight
	}
	if err := s.robot.StartTracking(weight); err != nil {
		writeError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "enabled": true})
}

func (s *Server) handleTrackingDisable(w http.ResponseWriter, r *http.Request) {
	s.robot.StopTracking()
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "enabled": false})
}

func (s *Server) handleTrackedFace(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.robot.TrackedFace())
}
