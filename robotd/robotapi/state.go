package robotapi

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/robothub/robothub/core/robot"

	"github.com/robothub/robothub/robotd/httpapi"
)

// MaxStreamFrequency is the highest state stream rate, in Hz.
const MaxStreamFrequency = 50.0

// fullState is the robot's state; with ?use_pose_matrix=true the head poses are {"m": [16]}, as
// the anchor's use_pose_matrix gives them.
type fullState struct {
	robot.State
	HeadPose       any  `json:"head_pose"`
	TargetHeadPose any  `json:"target_head_pose"`
	AutoBodyYaw    bool `json:"automatic_body_yaw"`
}

type matrixPose struct {
	M [16]float64 `json:"m"`
}

func (s *Handlers) FullState(w http.ResponseWriter, r *http.Request) {
	matrix, err := httpapi.BoolQuery(r, "use_pose_matrix")
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	st := s.robot.State()
	out := fullState{State: st, HeadPose: st.HeadPose, TargetHeadPose: st.TargetHeadPose, AutoBodyYaw: s.robot.AutomaticBodyYaw()}
	if matrix {
		out.HeadPose, out.TargetHeadPose = matrixPose{st.HeadPose.Matrix()}, matrixPose{st.TargetHeadPose.Matrix()}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// StateStream streams the full state as server-sent events at ?frequency= Hz (default 10,
// at most 50). Each event's state is read when the event is sent.
func (s *Handlers) StateStream(w http.ResponseWriter, r *http.Request) {
	freq := 10.0
	if v := r.URL.Query().Get("frequency"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || f <= 0 || f > MaxStreamFrequency {
			httpapi.WriteError(w, r, s.log, httpapi.BodyError(fmt.Sprintf("frequency: must be a number more than 0 and at most %g", MaxStreamFrequency)))
			return
		}
		freq = f
	}
	release, ok := s.clients.AcquireStream(w, r)
	if !ok {
		return
	}
	defer release()
	stream := httpapi.StartStream(w)
	ticker := time.NewTicker(time.Duration(float64(time.Second) / freq))
	defer ticker.Stop()
	for {
		data, _ := json.Marshal(s.robot.State())
		if err := stream.Send("", data); err != nil {
			return
		}
		select {
		case <-ticker.C:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}

// pose is a head pose in a request, in either of the anchor's shapes: {"x", "y", "z", "roll",
// "pitch", "yaw"} (metres, radians; missing fields are 0) or {"m": [16 numbers]}, a row-major 4×4
// homogeneous matrix. Anything else is refused by name, never read as the zero pose.
type pose robot.HeadPose

func (p *pose) UnmarshalJSON(data []byte) error {
	err := p.unmarshal(data)
	if err != nil {
		return httpapi.ValueError("pose: " + err.Error())
	}
	return nil
}

func (p *pose) unmarshal(data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return fmt.Errorf("a pose is a JSON object: {x, y, z, roll, pitch, yaw} or {m: [16 numbers]}")
	}
	if raw, ok := fields["m"]; ok {
		if len(fields) > 1 {
			return fmt.Errorf("a pose has either m (a 4x4 matrix) or x, y, z, roll, pitch, yaw, not both")
		}
		var m []float64
		if err := json.Unmarshal(raw, &m); err != nil || len(m) != 16 {
			return fmt.Errorf("m: expected 16 numbers, a 4x4 homogeneous matrix row by row")
		}
		hp, err := robot.PoseFromMatrix([16]float64(m))
		if err != nil {
			return err
		}
		*p = pose(hp)
		return nil
	}
	var v robot.HeadPose
	known := map[string]*float64{"x": &v.X, "y": &v.Y, "z": &v.Z, "roll": &v.Roll, "pitch": &v.Pitch, "yaw": &v.Yaw}
	for k, raw := range fields {
		dst, ok := known[k]
		if !ok {
			return fmt.Errorf("unknown pose field %q: a pose is {x, y, z, roll, pitch, yaw} in metres and radians, or {m: [16 numbers]}", httpapi.Truncate(k))
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return fmt.Errorf("%s: expected a number", k)
		}
	}
	*p = pose(v)
	return nil
}

// target builds a robot.Target from the optional parts of a request, checking the antennas.
func target(head *pose, antennas []float64, bodyYaw *float64, antennasField string) (robot.Target, error) {
	var t robot.Target
	if head != nil {
		hp := robot.HeadPose(*head)
		t.Head = &hp
	}
	if antennas != nil {
		if len(antennas) != 2 {
			return t, httpapi.BodyError(fmt.Sprintf("%s: expected 2 angles in radians [right, left], got %d", antennasField, len(antennas)))
		}
		t.Antennas = &[2]float64{antennas[0], antennas[1]}
	}
	t.BodyYaw = bodyYaw
	return t, nil
}

type setTargetRequest struct {
	Head     *pose     `json:"target_head_pose"`
	Antennas []float64 `json:"target_antennas"`
	BodyYaw  *float64  `json:"target_body_yaw"`
}

func (s *Handlers) SetTarget(w http.ResponseWriter, r *http.Request) {
	var req setTargetRequest
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	t, err := target(req.Head, req.Antennas, req.BodyYaw, "target_antennas")
	if err == nil {
		err = s.robot.SetTarget(t)
	}
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.StatusOK{Status: "ok"})
}

type gotoRequest struct {
	Head          *pose     `json:"head_pose"`
	Antennas      []float64 `json:"antennas"`
	BodyYaw       *float64  `json:"body_yaw"`
	Duration      *float64  `json:"duration"`
	Interpolation string    `json:"interpolation"`
}

type moveStarted struct {
	UUID     string  `json:"uuid"`
	Duration float64 `json:"duration"`
}

func (s *Handlers) Goto(w http.ResponseWriter, r *http.Request) {
	var req gotoRequest
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if req.Duration == nil {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError("body: field duration is required (seconds)"))
		return
	}
	interp, err := robot.ParseInterpolation(req.Interpolation)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	t, err := target(req.Head, req.Antennas, req.BodyYaw, "antennas")
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	d := *req.Duration
	if math.IsNaN(d) || d <= 0 || d > 60 {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError("duration: must be more than 0 and at most 60 seconds"))
		return
	}
	m, err := s.robot.Goto(t, time.Duration(d*float64(time.Second)), interp)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, moveStarted{UUID: m.ID, Duration: d})
}

func (s *Handlers) WakeUp(w http.ResponseWriter, r *http.Request) {
	m := s.robot.WakeUp()
	httpapi.WriteJSON(w, http.StatusOK, moveStarted{UUID: m.ID, Duration: m.Duration().Seconds()})
}

// GotoSleep lays the robot down; its motors go limp at the end, as the public daemon's do,
// unless ?disable_motors=false (what the SDK's goto_sleep asks: the public SDK's leaves them on).
func (s *Handlers) GotoSleep(w http.ResponseWriter, r *http.Request) {
	keep, err := httpapi.BoolQuery(r, "disable_motors")
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	disable := keep || r.URL.Query().Get("disable_motors") == ""
	m := s.robot.GotoSleep(disable)
	httpapi.WriteJSON(w, http.StatusOK, moveStarted{UUID: m.ID, Duration: m.Duration().Seconds()})
}

func (s *Handlers) StopMove(w http.ResponseWriter, r *http.Request) {
	var req struct {
		UUID string `json:"uuid"`
	}
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, true); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if err := s.robot.StopMove(req.UUID); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.StatusOK{Status: "stopped"})
}

type motorStatus struct {
	Mode robot.MotorMode `json:"mode"`
}

func (s *Handlers) MotorStatus(w http.ResponseWriter, r *http.Request) {
	st := struct {
		torqueStatus
		// Health is each motor's state on the hardware; null on the simulation.
		Health []robot.MotorHealth `json:"health"`
	}{torqueStatus: torqueStatus{Mode: s.robot.MotorMode(), Motors: s.robot.MotorTorque()}}
	if hw := s.robot.HardwareStatus(); hw != nil {
		st.Health = hw.Motors
	}
	httpapi.WriteJSON(w, http.StatusOK, st)
}

func (s *Handlers) SetMotorMode(w http.ResponseWriter, r *http.Request) {
	mode, err := robot.ParseMotorMode(r.PathValue("mode"))
	if err == nil {
		err = s.robot.SetMotorMode(mode)
	}
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, motorStatus{Mode: mode})
}

func (s *Handlers) AntennaTouch(w http.ResponseWriter, r *http.Request) {
	req := struct {
		Antenna string   `json:"antenna"`
		Delta   *float64 `json:"delta"`
	}{}
	if err := httpapi.DecodeBody(w, r, &req, httpapi.MaxBodyBytes, false); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	index := map[string]int{"right": 0, "left": 1}
	i, ok := index[req.Antenna]
	if !ok {
		httpapi.WriteError(w, r, s.log, httpapi.BodyError("antenna: must be left or right"))
		return
	}
	delta := 0.5
	if req.Delta != nil {
		delta = *req.Delta
	}
	if err := s.robot.PushAntenna(i, delta); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.StatusOK{Status: "pushed"})
}
