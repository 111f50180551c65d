package robotapi

import (
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/robothub/robothub/core/robot"

	"github.com/robothub/robothub/robotd/httpapi"
)

// The anchor SDK's motion calls that its daemon serves over its websocket protocol, served here as
// REST routes that robot_sdk calls: present state, look-at, motion recording, single motors,
// automatic body yaw, and the camera.

func (s *Handlers) PresentHeadPose(w http.ResponseWriter, r *http.Request) {
	matrix, err := httpapi.BoolQuery(r, "use_pose_matrix")
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	p := s.robot.State().HeadPose
	if matrix {
		httpapi.WriteJSON(w, http.StatusOK, matrixPose{p.Matrix()})
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, p)
}

func (s *Handlers) PresentBodyYaw(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, s.robot.State().BodyYaw)
}

func (s *Handlers) PresentAntennas(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, s.robot.State().Antennas)
}

type moveUUID struct {
	UUID string `json:"uuid"`
}

func (s *Handlers) RunningMoves(w http.ResponseWriter, r *http.Request) {
	out := []moveUUID{}
	if m := s.robot.State().Move; m != nil {
		out = append(out, moveUUID{m.UUID})
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

type lookAtAnswer struct {
	HeadPose robot.HeadPose `json:"head_pose"`
	M        [16]float64    `json:"m"`
	UUID     *string        `json:"uuid"`
}

func (s *Handlers) LookAtWorld(w http.ResponseWriter, r *http.Request) {
	var req struct {
		X, Y, Z         *float64
		Duration        *float64 `json:"duration"`
		PerformMovement *bool    `json:"perform_movement"`
	}
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if req.X == nil || req.Y == nil || req.Z == nil {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError("body: fields x, y and z are required: the point to look at, in metres (x forward, y left, z up)"))
		return
	}
	p, err := robot.LookAtWorld(*req.X, *req.Y, *req.Z)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	s.lookAt(w, r, p, req.Duration, req.PerformMovement)
}

func (s *Handlers) LookAtImage(w http.ResponseWriter, r *http.Request) {
	var req struct {
		U, V            *float64
		Duration        *float64 `json:"duration"`
		PerformMovement *bool    `json:"perform_movement"`
	}
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if req.U == nil || req.V == nil {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError("body: fields u and v are required: the pixel to look at, from the image's top left corner"))
		return
	}
	p, err := s.robot.LookAtImage(*req.U, *req.V)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	s.lookAt(w, r, p, req.Duration, req.PerformMovement)
}

func (s *Handlers) lookAt(w http.ResponseWriter, r *http.Request, p robot.HeadPose, duration *float64, perform *bool) {
	d := 1.0
	if duration != nil {
		d = *duration
	}
	if math.IsNaN(d) || d < 0 || d > 60 {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError("duration: must be 0 (at once) or more, at most 60 seconds"))
		return
	}
	out := lookAtAnswer{HeadPose: p, M: p.Matrix()}
	if perform == nil || *perform {
		t := robot.Target{Head: &p}
		if d == 0 {
			if err := s.robot.SetTarget(t); err != nil {
				httpapi.WriteError(w, r, s.log, err)
				return
			}
		} else {
			m, err := s.robot.Goto(t, time.Duration(d*float64(time.Second)), robot.MinJerk)
			if err != nil {
				httpapi.WriteError(w, r, s.log, err)
				return
			}
			out.UUID = &m.ID
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

func (s *Handlers) StartMotionRecording(w http.ResponseWriter, r *http.Request) {
	s.robot.StartMotionRecording()
	httpapi.WriteJSON(w, http.StatusOK, httpapi.StatusOK{Status: "recording"})
}

type motionFrames struct {
	Frames []robot.MotionFrame `json:"frames"`
}

func (s *Handlers) StopMotionRecording(w http.ResponseWriter, r *http.Request) {
	frames, err := s.robot.StopMotionRecording()
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, motionFrames{Frames: frames})
}

type torqueRequest struct {
	IDs []string `json:"ids"`
	On  *bool    `json:"on"`
}

type torqueStatus struct {
	Mode   robot.MotorMode `json:"mode"`
	Motors map[string]bool `json:"motors"`
}

func (s *Handlers) SetTorque(w http.ResponseWriter, r *http.Request) {
	var req torqueRequest
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if req.On == nil {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError(fmt.Sprintf("body: field on is required (true or false); ids names motors among %v, or all when left out", robot.MotorNames)))
		return
	}
	if err := s.robot.SetMotorTorque(req.IDs, *req.On); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, torqueStatus{Mode: s.robot.MotorMode(), Motors: s.robot.MotorTorque()})
}

func (s *Handlers) AutomaticBodyYaw(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Enabled *bool `json:"enabled"`
	}
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if req.Enabled == nil {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError("body: field enabled is required (true or false)"))
		return
	}
	s.robot.SetAutomaticBodyYaw(*req.Enabled)
	httpapi.WriteJSON(w, http.StatusOK, map[string]bool{"automatic_body_yaw": *req.Enabled})
}
