package robot

import (
	"math"
	"slices"
	"time"

	"github.com/robothub/robothub/internal/hardware/dynamixel"
)

// Validator is implemented by backends that refuse targets they cannot reach (the hardware: a
// head pose outside the platform's workspace). The Robot asks it before accepting a target, so
// that the caller gets the error and nothing is sent.
type Validator interface {
	Validate(j Joints) error
}

// validateMove checks the end of a move from from to to and points along the way (the cartoon
// interpolation overshoots the end).
func (r *Robot) validateMove(from, to Joints, interp Interpolation) error {
	v, ok := r.backend.(Validator)
	if !ok {
		return nil
	}
	if err := v.Validate(to); err != nil || from == to {
		return err
	}
	for k := 1; k < 16; k++ {
		if err := v.Validate(between(from, to, interp.progress(float64(k)/16))); err != nil {
			return err
		}
	}
	return nil
}

// LoopStats describe the control loop over its last minute.
type LoopStats struct {
	RateHz      float64 `json:"rate_hz"`
	Ticks       uint64  `json:"ticks"`
	Overruns    uint64  `json:"overruns"` // ticks whose bus traffic outlasted the period
	PeriodP50Ms float64 `json:"period_p50_ms"`
	PeriodP99Ms float64 `json:"period_p99_ms"`
	PeriodMaxMs float64 `json:"period_max_ms"`
	JitterMs    float64 `json:"jitter_ms"` // standard deviation of the period
}

// HardwareStatus is the motor bus's health.
type HardwareStatus struct {
	Port           string                  `json:"port"`
	Connected      bool                    `json:"connected"`
	Error          *string                 `json:"error"` // why the port is not connected
	Reconnects     int                     `json:"reconnects"`
	ControlLoop    LoopStats               `json:"control_loop"`
	Motors         []dynamixel.MotorHealth `json:"motors"`
	ConfigWarnings []string                `json:"config_warnings"`
}

// Status reports the bus, the control loop and every motor.
func (h *Hardware) Status() HardwareStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := HardwareStatus{Port: h.path, Connected: h.connected, Error: h.portErr, Reconnects: h.reconnects,
		ConfigWarnings: append([]string{}, h.warnings...), Motors: []dynamixel.MotorHealth{}}
	for i := range h.motors { // by pointer, not a copy: the loop writes its own fields without the lock
		s.Motors = append(s.Motors, h.motors[i].Health(s.Connected))
	}
	s.ControlLoop = loopStats(h.periods, h.ticks, h.overruns)
	return s
}

func loopStats(periods []time.Duration, ticks, overruns uint64) LoopStats {
	st := LoopStats{RateHz: float64(time.Second / HardwarePeriod), Ticks: ticks, Overruns: overruns}
	if len(periods) == 0 {
		return st
	}
	sorted := slices.Clone(periods)
	slices.Sort(sorted)
	ms := func(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }
	st.PeriodP50Ms = ms(sorted[len(sorted)/2])
	st.PeriodP99Ms = ms(sorted[min(len(sorted)-1, len(sorted)*99/100)])
	st.PeriodMaxMs = ms(sorted[len(sorted)-1])
	var sum, sq float64
	for _, p := range periods {
		sum += float64(p)
	}
	mean := sum / float64(len(periods))
	for _, p := range periods {
		sq += (float64(p) - mean) * (float64(p) - mean)
	}
	st.JitterMs = math.Round(math.Sqrt(sq/float64(len(periods)))/1e3) / 1e3
	return st
}

// HardwareStatus reports the motor bus's health, or nil on a backend without one (the simulation).
func (r *Robot) HardwareStatus() *HardwareStatus {
	if h, ok := r.backend.(interface{ Status() HardwareStatus }); ok {
		return new(h.Status())
	}
	return nil
}
