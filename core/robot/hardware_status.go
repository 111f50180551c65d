package robot

import (
	"time"
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

// LoopStats describe a hardware control loop over its last minute.
type LoopStats struct {
	RateHz      float64 `json:"rate_hz"`
	Ticks       uint64  `json:"ticks"`
	Overruns    uint64  `json:"overruns"` // ticks whose bus traffic outlasted the period
	PeriodP50Ms float64 `json:"period_p50_ms"`
	PeriodP99Ms float64 `json:"period_p99_ms"`
	PeriodMaxMs float64 `json:"period_max_ms"`
	JitterMs    float64 `json:"jitter_ms"` // standard deviation of the period
}

// HardwareStatus is the motor bus's health, as a hardware backend reports it.
type HardwareStatus struct {
	Port           string        `json:"port"`
	Connected      bool          `json:"connected"`
	Error          *string       `json:"error"` // why the port is not connected
	Reconnects     int           `json:"reconnects"`
	ControlLoop    LoopStats     `json:"control_loop"`
	Motors         []MotorHealth `json:"motors"`
	ConfigWarnings []string      `json:"config_warnings"`
}

// MotorHealth is a motor's state as the hardware's reads last saw it.
type MotorHealth struct {
	Name  string `json:"name"`
	ID    int    `json:"id"`
	State string `json:"state"` // ok, silent, hardware_error, or unknown before its first answer
	// Error says what is wrong, for a person: null when the motor is fine.
	Error          *string    `json:"error"`
	HardwareErrors []string   `json:"hardware_errors"`
	Position       *float64   `json:"position"` // radians, last read
	LastSeen       *time.Time `json:"last_seen"`
}

// StatusReporter is implemented by backends with a motor bus (the hardware).
type StatusReporter interface {
	Status() HardwareStatus
}

// HardwareStatus reports the motor bus's health, or nil on a backend without one (the simulation).
func (r *Robot) HardwareStatus() *HardwareStatus {
	if h, ok := r.backend.(StatusReporter); ok {
		return new(h.Status())
	}
	return nil
}
