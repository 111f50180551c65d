package robotapi

import (
	"net/http"

	"github.com/robothub/robothub/robotd/httpapi"
)

// What the daemon adds to the app's motion (core/robot's wobble.go and tracking.go): the speech
// wobble and head tracking, at the public daemon's media routes.

func (s *Handlers) Wobbling(on bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.robot.SetWobbling(on)
		state := "disabled"
		if on {
			state = "enabled"
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok", "wobbling": state})
	}
}

func (s *Handlers) TrackingEnable(w http.ResponseWriter, r *http.Request) {
	req := struct {
		Weight *float64 `json:"weight"`
	}{}
	if r.ContentLength != 0 {
		if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, true); err != nil {
			httpapi.WriteError(w, r, s.log, err)
			return
		}
	}
	weight := 1.0
	if req.Weight != nil {
		weight = *req.Weight
	}
	if err := s.robot.StartTracking(weight); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "enabled": true})
}

func (s *Handlers) TrackingDisable(w http.ResponseWriter, r *http.Request) {
	s.robot.StopTracking()
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "enabled": false})
}

func (s *Handlers) TrackedFace(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, s.robot.TrackedFace())
}
