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

// MotorHealth is a motor's state as the hardware's reads last saw it: what the motor itself says.
// The pointers are null until the motor has said it.
type MotorHealth struct {
	Name  string `json:"name"`
	ID    int    `json:"id"`
	State string `json:"state"` // ok, silent, hardware_error, or unknown before its first answer
	// Error says what is wrong, for a person: null when the motor is fine.
	Error *string `json:"error"`
	// HardwareErrors decodes its Hardware Error Status; TorqueEnabled is its Torque Enable, which a
	// motor turns off itself on some hardware errors.
	HardwareErrors []string   `json:"hardware_errors"`
	TorqueEnabled  *bool      `json:"torque_enabled"`
	Position       *float64   `json:"position"` // radians, last read
	LastSeen       *time.Time `json:"last_seen"`
	CurrentMA      *int       `json:"current_ma"` // its load: Present Current, mA
	VoltageV       *float64   `json:"voltage_v"`
	TemperatureC   *int       `json:"temperature_c"`
}

// StatusReporter is implemented by backends with a motor bus (the hardware).
type StatusReporter interface {
	Status() HardwareStatus
}

// TorqueReporter is implemented by backends whose motors say whether their torque is on (the
// hardware: a motor turns it off itself on some hardware errors). It returns the motors that said
// so, by name; the Robot reports what it asked for the others.
type TorqueReporter interface {
	ReportedTorque() map[string]bool
}

// HardwareStatus reports the motor bus's health, or nil on a backend without one (the simulation).
func (r *Robot) HardwareStatus() *HardwareStatus {
	if h, ok := r.backend.(StatusReporter); ok {
		return new(h.Status())
	}
	return nil
}
