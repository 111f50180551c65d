package hardware

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/internal/hardware/dynamixel"
)

// Status implements robot.StatusReporter: the bus, the control loop and every motor.
func (h *Hardware) Status() robot.HardwareStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := robot.HardwareStatus{Port: h.path, Connected: h.connected, Error: h.portErr, Reconnects: h.reconnects,
		ConfigWarnings: append([]string{}, h.warnings...), Motors: []robot.MotorHealth{}}
	for i := range h.motors { // by pointer, not a copy: the loop writes its own fields without the lock
		s.Motors = append(s.Motors, health(&h.motors[i], s.Connected))
	}
	s.ControlLoop = loopStats(h.periods, h.ticks, h.overruns)
	return s
}

// health reports m's state; every motor's is unknown while the bus is not connected.
func health(m *dynamixel.Motor, connected bool) robot.MotorHealth {
	mh := robot.MotorHealth{Name: m.Name, ID: int(m.ID), State: "ok", HardwareErrors: append([]string{}, m.HardwareErrors...)}
	if m.Seen {
		pos, seen := dynamixel.Radians(m.Present), m.LastSeen
		mh.Position, mh.LastSeen = &pos, &seen
	}
	var msg string
	switch {
	case m.Silent && !m.Seen:
		mh.State, msg = "silent", "has not answered since the daemon started"
	case m.Silent:
		mh.State, msg = "silent", "stopped answering at "+m.LastSeen.UTC().Format(time.RFC3339)
	case !m.Seen:
		mh.State = "unknown"
	case m.Alert:
		mh.State, msg = "hardware_error", "reports a hardware error"
		if len(m.HardwareErrors) > 0 {
			msg = "reports: " + strings.Join(m.HardwareErrors, ", ")
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
