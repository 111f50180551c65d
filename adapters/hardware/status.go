package hardware

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/robothub/robothub/adapters/hardware/dynamixel"
	"github.com/robothub/robothub/core/robot"
)

// Status implements robot.StatusReporter: the bus, the control loop and every motor.
func (h *Hardware) Status() robot.HardwareStatus {
	_, mode, limp := h.Commanded()
	h.mu.Lock()
	defer h.mu.Unlock()
	s := robot.HardwareStatus{Port: h.path, Connected: h.connected, Error: h.portErr, Reconnects: h.reconnects,
		ConfigWarnings: append([]string{}, h.warnings...), Motors: []robot.MotorHealth{}}
	for i := range h.motors { // by pointer, not a copy: the loop writes its own fields without the lock
		m := &h.motors[i]
		s.Motors = append(s.Motors, health(m, s.Connected, mode != robot.MotorsDisabled && !limp[m.Name]))
	}
	s.ControlLoop = loopStats(h.periods, h.ticks, h.overruns)
	return s
}

// ReportedTorque implements robot.TorqueReporter: the torque each motor said it has, for the
// motors whose state was read after the loop applied what the Robot asks now. While a switch is on
// its way (asked, not applied, or applied and not read back yet) it reports none: what was asked
// stands.
func (h *Hardware) ReportedTorque() map[string]bool {
	_, mode, limp := h.Commanded()
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]bool{}
	if !h.connected || mode != h.appliedMode {
		return out
	}
	for _, name := range robot.MotorNames {
		if limp[name] != h.appliedLimp[name] {
			return out
		}
	}
	for i := range h.motors {
		if m := &h.motors[i]; !m.Silent && m.StateAt.After(h.switchedAt) {
			out[m.Name] = m.TorqueOn
		}
	}
	return out
}

// health reports m's state, as it said it; every motor's is unknown while the bus is not
// connected. wantOn says whether the robot asks m to hold.
func health(m *dynamixel.Motor, connected, wantOn bool) robot.MotorHealth {
	mh := robot.MotorHealth{Name: m.Name, ID: int(m.ID), State: "ok", HardwareErrors: append([]string{}, m.HardwareErrors...)}
	if m.Seen {
		pos, seen := dynamixel.Radians(m.Present), m.LastSeen
		mh.Position, mh.LastSeen = &pos, &seen
	}
	if !m.StateAt.IsZero() {
		mh.TorqueEnabled = new(m.TorqueOn)
	}
	if !m.TelemetryAt.IsZero() {
		mh.CurrentMA, mh.VoltageV, mh.TemperatureC = new(int(m.Current)), new(m.Voltage), new(m.Temperature)
	}
	var msg string
	switch {
	case m.Silent && !m.Seen:
		mh.State, msg = "silent", "has not answered since the daemon started"
	case m.Silent:
		mh.State, msg = "silent", "stopped answering at "+m.LastSeen.UTC().Format(time.RFC3339)
	case !m.Seen:
		mh.State = "unknown"
	case m.Alert || len(m.HardwareErrors) > 0:
		mh.State, msg = "hardware_error", "reports a hardware error"
		if len(m.HardwareErrors) > 0 {
			msg = "reports: " + strings.Join(m.HardwareErrors, ", ")
		}
		if wantOn && !m.StateAt.IsZero() && !m.TorqueOn {
			msg += "; it turned its torque off (a reboot or a power cycle turns it back on)"
		}
	}
	if !connected {
		mh.State, msg = "unknown", "the motor bus is not connected"
	}
	if msg != "" {
		mh.Error = &msg
	}
	return mh
}

func loopStats(periods []time.Duration, ticks, overruns uint64) robot.LoopStats {
	st := robot.LoopStats{RateHz: float64(time.Second / Period), Ticks: ticks, Overruns: overruns}
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
