// Package hardware is the robot's hardware backend: the robot.Backend that drives the nine motors
// of its Dynamixel bus (adapters/hardware/dynamixel) in a 50 Hz control loop, with the head's pose
// from the platform's kinematics, and the hardware config that describes the bus. robot-daemon
// wires it; adapters/hardware/busemu emulates the motors for tests and --sim=bus.
package hardware

import (
	"cmp"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/robothub/robothub/adapters/hardware/dynamixel"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/core/robot/kinematics"
)

// Period is the period of the control loop: each tick sends the goals of every motor in one sync
// write and reads their positions in one sync read.
const Period = 20 * time.Millisecond

// Tuning of the hardware loop.
const (
	probeEvery        = time.Second            // how often a silent motor is pinged
	reopenEvery       = 500 * time.Millisecond // how often a vanished port is looked for
	stateEvery        = 10                     // ticks (200 ms) between reads of what the motors say (torque, errors)
	telemetryEvery    = 50                     // ticks (1 s) between reads of their load, voltage and temperature
	complianceCurrent = 150                    // mA: what a leg pushes with in gravity compensation
	complianceSlack   = 40                     // ticks (3.5°) a hand must move a joint before it follows
	statsWindow       = 3000                   // loop periods kept for the status: 60 s at 50 Hz
)

// Options configure New.
type Options struct {
	Port   string            // the serial port's path
	Config *dynamixel.Config // the motors (LoadConfig reads a hardware config file; DefaultConfig is the robot's)
	Log    *slog.Logger
	// Timeout is the slack a motor's answer gets on top of its wire time and the motor's return
	// delay (dynamixel.Bus.Timeout, default 5 ms); an emulated bus sharing a busy CPU needs more.
	Timeout time.Duration
}

// Hardware is the robot.Backend of the real robot: the motors on the Dynamixel bus, driven by a 50 Hz
// control loop, with the head's pose from the platform's kinematics. A motor that stops answering
// or reports a hardware error is reported in Status while the loop keeps driving the others; a
// port that vanishes (a USB cable pulled) is reopened.
type Hardware struct {
	path    string
	cfg     *dynamixel.Config
	log     *slog.Logger
	geom    *kinematics.Geometry
	timeout time.Duration

	robot.Commands // what the Robot asks: Command, SetMotorMode, SetTorque
	// mu guards what the API reads: below, up to the loop's own state.
	mu         sync.Mutex
	present    robot.Joints
	motors     []dynamixel.Motor // index order: MotorNames (body, six legs, right and left antennas)
	connected  bool
	portErr    *string // never changed in place, so Status shares it
	reconnects int
	periods    []time.Duration // ring of the last statsWindow loop periods
	ticks      uint64
	overruns   uint64
	warnings   []string
	// What the loop has applied, and when it last switched a motor's torque: a motor's own word on
	// its torque counts once it was read after the switch (ReportedTorque).
	appliedMode robot.MotorMode
	appliedLimp map[string]bool
	switchedAt  time.Time

	// The loop's own state.
	bus        *dynamixel.Bus
	applied    robot.MotorMode // "" until a mode is applied on this connection
	limpNow    map[string]bool // the limp motors as applied
	nextOpen   time.Time
	lastTick   time.Time
	n          uint64 // ticks of the loop
	stateDue   bool   // read what the motors say at the next tick: a torque or an alert changed
	ikWarnedAt time.Time
	ids        []byte

	quit, done chan struct{}
	closeOnce  sync.Once
}

// New opens the motor bus at opts.Port, reads where the motors are, and starts the control loop.
// The motors are left as they are until the Robot sets a mode.
func New(opts Options) (*Hardware, error) {
	h := &Hardware{path: opts.Port, cfg: opts.Config, log: cmp.Or(opts.Log, slog.New(slog.DiscardHandler)), geom: kinematics.Default(),
		timeout: opts.Timeout, quit: make(chan struct{}), done: make(chan struct{})}
	h.SetMotorMode(robot.MotorsDisabled)
	for _, name := range robot.MotorNames {
		m, ok := h.cfg.Motor(name)
		if !ok {
			return nil, fmt.Errorf("hardware config: motor %s is missing", name)
		}
		h.motors, h.ids = append(h.motors, dynamixel.Motor{MotorConfig: m}), append(h.ids, m.ID)
	}
	if err := h.connect(); err != nil {
		return nil, err
	}
	// No lock until the loop starts: nothing else has h yet.
	if !slices.ContainsFunc(h.motors, func(m dynamixel.Motor) bool { return m.Seen }) {
		err := fmt.Errorf("no motor answered on %s (ids %v at %d baud): is the robot powered on?", h.path, h.ids, h.cfg.Baud)
		// Motors with other ids answer a broadcast ping: say which, the likely mistake.
		if found, scanErr := h.bus.Scan(); scanErr == nil && len(found) > 0 {
			err = fmt.Errorf("no motor answered on %s at the ids of the hardware config %v; motors with ids %v did (%d baud): check the config's ids", h.path, h.ids, found, h.cfg.Baud)
		}
		h.disconnect(nil)
		return nil, err
	}
	h.Command(h.present)
	go h.loop()
	return h, nil
}

// loop ticks every Period until Close.
func (h *Hardware) loop() {
	defer close(h.done)
	t := time.NewTicker(Period)
	defer t.Stop()
	for {
		select {
		case <-h.quit:
			return
		case now := <-t.C:
			h.tick(now)
		}
	}
}

// Name implements robot.Backend.
func (h *Hardware) Name() string { return "hardware" }

// HoldsHead implements robot.HeadHolder: the legs' torque holds the head up, and Close turns it off.
func (h *Hardware) HoldsHead() {}

// Read implements robot.Backend: the pose the last tick read.
func (h *Hardware) Read(time.Time) robot.Joints {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.present
}

// Speak implements robot.Backend: this backend does not drive the robot's sound card.
func (h *Hardware) Speak([]float32) {}

// Listen implements robot.Backend: no microphone is wired to this backend, so it hears nothing.
func (h *Hardware) Listen(dst []float32, _ time.Time) []float32 { return dst }

// Close implements robot.Backend: it stops the loop, turns the torque off and closes the port.
func (h *Hardware) Close() error {
	h.closeOnce.Do(func() {
		close(h.quit)
		<-h.done
		if h.bus != nil {
			_ = h.bus.Torque(h.ids, false)
			h.disconnect(nil)
		}
	})
	return nil
}

// Leave implements robot.Leaver: it stops the loop and closes the port with the torque on, so the
// motors hold the head where it is while the next daemon starts (a daemon update).
func (h *Hardware) Leave() error {
	h.closeOnce.Do(func() {
		close(h.quit)
		<-h.done
		if h.bus != nil {
			h.disconnect(nil)
		}
	})
	return nil
}

// Validate implements robot.Validator: the motor bus must be connected (a target accepted while the
// port is gone would be a move the robot never makes: a fault.Unavailable naming the port), and j's
// head pose inside the platform's workspace with every leg within its limits.
func (h *Hardware) Validate(j robot.Joints) error {
	h.mu.Lock()
	connected, portErr := h.connected, h.portErr
	h.mu.Unlock()
	if !connected {
		why := "it is being opened"
		if portErr != nil {
			why = *portErr
		}
		return fault.Unavailablef("the motor bus on %s is not connected (%s): the robot cannot move until it is back; it is reopened every %s", h.path, why, reopenEvery)
	}
	_, err := h.legGoals(j)
	return err
}

// legGoals returns the goal ticks of the six legs for j.
func (h *Hardware) legGoals(j robot.Joints) ([6]int32, error) {
	var goals [6]int32
	p := j.Head
	angles, err := h.geom.Inverse(kinematics.Pose(p), j.BodyYaw)
	describe := func() string {
		return fmt.Sprintf("head pose (x=%.3f m, y=%.3f m, z=%.3f m, roll=%.1f°, pitch=%.1f°, yaw=%.1f°) with body_yaw %.1f° is out of the robot's reach",
			p.X, p.Y, p.Z, p.Roll*180/math.Pi, p.Pitch*180/math.Pi, p.Yaw*180/math.Pi, j.BodyYaw*180/math.Pi)
	}
	if err != nil {
		return goals, fault.Invalidf("%s: %v", describe(), err)
	}
	for i, a := range angles {
		m := h.motors[1+i].MotorConfig // not the motor: the loop writes its state
		t := dynamixel.Ticks(a)
		if t < m.Lower || t > m.Upper {
			return goals, fault.Invalidf("%s: leg %s would turn to %.1f°, beyond its limits [%.1f°, %.1f°]", describe(), m.Name,
				a*180/math.Pi, dynamixel.Radians(m.Lower)*180/math.Pi, dynamixel.Radians(m.Upper)*180/math.Pi)
		}
		goals[i] = t
	}
	return goals, nil
}

// connect opens the port, finds the motors, checks their setup and reads where they are.
func (h *Hardware) connect() error {
	bus, err := dynamixel.Open(h.path, h.cfg.Baud, h.timeout)
	if err != nil {
		h.setPortError(err)
		return err
	}
	h.bus, h.applied, h.stateDue = bus, "", true
	var warnings []string
	for i := range h.motors {
		m := &h.motors[i]
		w, err := h.bus.SetUp(m, &h.mu, false)
		warnings = append(warnings, w...)
		if err != nil {
			if dynamixel.IsPortError(err) {
				h.disconnect(err)
				return err
			}
			h.log.Warn("motor did not answer at connection", "motor", m.Name, "id", m.ID, "err", err)
		}
	}
	h.mu.Lock()
	h.connected, h.portErr, h.warnings = true, nil, warnings
	h.mu.Unlock()
	for _, w := range warnings {
		h.log.Warn("motor setup differs from the hardware config", "warning", w)
	}
	return h.readPresent(time.Now())
}

func (h *Hardware) setPortError(err error) {
	h.mu.Lock()
	h.connected, h.portErr = false, new(err.Error())
	h.mu.Unlock()
}

// disconnect closes a port that failed; the loop reopens it.
func (h *Hardware) disconnect(cause error) {
	if h.bus != nil {
		_ = h.bus.Close()
	}
	h.bus, h.applied = nil, ""
	h.switched("", nil)
	h.nextOpen = time.Now().Add(reopenEvery)
	if cause != nil {
		h.log.Error("motor bus lost; reopening it", "port", h.path, "err", cause)
		h.setPortError(cause)
	}
}

func (h *Hardware) tick(now time.Time) {
	h.record(now)
	if h.bus == nil {
		if now.Before(h.nextOpen) {
			return
		}
		if err := h.connect(); err != nil {
			h.nextOpen = now.Add(reopenEvery)
			return
		}
		h.mu.Lock()
		h.reconnects++
		h.mu.Unlock()
		h.log.Info("motor bus reopened", "port", h.path)
	}
	target, mode, limp := h.Commanded()
	err := h.applyMode(mode)
	if err == nil && mode != robot.MotorsDisabled {
		if err = h.applyTorque(limp); err == nil {
			err = h.sendGoals(target, mode)
		}
	}
	if err == nil {
		err = h.readPresent(now)
	}
	if err == nil {
		err = h.probe(now)
	}
	// What the motors say about themselves, on ticks of their own so that no tick carries both.
	h.n++
	if err == nil && (h.stateDue || h.n%stateEvery == 3) {
		err = h.readStates()
	}
	if err == nil && h.n%telemetryEvery == 7 {
		err = h.bus.ReadTelemetry(h.motors, &h.mu, now)
	}
	if err != nil {
		h.disconnect(err)
	}
	if d := time.Since(now); d > Period {
		h.mu.Lock()
		h.overruns++
		h.mu.Unlock()
	}
}

// record keeps the period since the previous tick for the loop's statistics.
func (h *Hardware) record(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ticks++
	if !h.lastTick.IsZero() {
		if len(h.periods) < statsWindow {
			h.periods = append(h.periods, now.Sub(h.lastTick))
		} else {
			h.periods[h.ticks%statsWindow] = now.Sub(h.lastTick)
		}
	}
	h.lastTick = now
}

// applyMode switches the motors to mode if they are not in it yet: torque off to change the
// operating mode, goals set to where the motors are so that nothing jumps, then torque on.
func (h *Hardware) applyMode(mode robot.MotorMode) error {
	if mode == h.applied {
		return nil
	}
	if err := h.bus.Torque(h.ids, false); err != nil {
		return err
	}
	if mode != robot.MotorsDisabled {
		for i := range h.motors {
			if err := h.prepare(i, mode); err != nil {
				return err
			}
		}
		if err := h.bus.Torque(h.ids, true); err != nil {
			return err
		}
	}
	h.applied, h.limpNow, h.stateDue = mode, nil, true
	h.switched(mode, nil)
	h.log.Info("motors switched", "mode", mode)
	return nil
}

// switched records what the loop has just applied, for ReportedTorque.
func (h *Hardware) switched(mode robot.MotorMode, limp map[string]bool) {
	h.mu.Lock()
	h.appliedMode, h.appliedLimp, h.switchedAt = mode, limp, time.Now()
	h.mu.Unlock()
}

// applyTorque switches single motors off or back on (set up like the others, from where they are).
func (h *Hardware) applyTorque(limp map[string]bool) error {
	for i := range h.motors {
		if name := h.motors[i].Name; limp[name] != h.limpNow[name] {
			if err := h.restart(i, limp[name]); err != nil {
				return err
			}
			h.stateDue = true
		}
	}
	if h.stateDue {
		h.switched(h.applied, limp)
	}
	h.limpNow = limp
	return nil
}

// restart turns motor i's torque off and, unless it is to stay limp, sets it up for the applied
// mode and turns it back on, alone.
func (h *Hardware) restart(i int, limp bool) error {
	id := []byte{h.motors[i].ID}
	err := h.bus.Torque(id, false)
	if err == nil && !limp {
		if err = h.prepare(i, h.applied); err == nil {
			err = h.bus.Torque(id, true)
		}
	}
	return err
}

// prepare sets motor i's operating mode for mode (with the torque off) and its goal to where it
// is. Only a port failure is returned: a motor that does not take it is logged and read as usual.
func (h *Hardware) prepare(i int, mode robot.MotorMode) error {
	m := &h.motors[i]
	op := m.OperatingMode
	if mode == robot.MotorsGravityCompensation && i > 0 {
		op = dynamixel.ModeCurrentBasedPosition // the legs and antennas yield to a hand
	}
	err := h.bus.Prepare(m, op, complianceCurrent)
	if err != nil && !dynamixel.IsPortError(err) {
		h.log.Warn("setting a motor's mode", "motor", m.Name, "err", err)
		return nil
	}
	return err
}

// sendGoals sends every motor's goal, clamped to its limits, in one sync write. An unreachable
// head pose (Validate refuses those before they become targets) keeps the legs' previous goals.
func (h *Hardware) sendGoals(target robot.Joints, mode robot.MotorMode) error {
	legs, err := h.legGoals(target)
	if err != nil && time.Since(h.ikWarnedAt) > time.Second {
		h.ikWarnedAt = time.Now()
		h.log.Warn("not sending an unreachable head pose", "err", err)
	}
	for i := range h.motors {
		m := &h.motors[i]
		switch {
		case h.limpNow[m.Name]:
			m.Goal = m.Present // a limp joint is where a hand leaves it
		case mode == robot.MotorsGravityCompensation && i > 0:
			// Follow the hand: a joint pushed beyond the slack stays where it was pushed.
			if max(m.Present-m.Goal, m.Goal-m.Present) > complianceSlack {
				m.Goal = m.Present
			}
		case i == 0:
			m.Goal = dynamixel.Ticks(target.BodyYaw)
		case i <= 6:
			if err == nil {
				m.Goal = legs[i-1]
			}
		default: // right (7), left (8); Antennas is [right, left]
			m.Goal = dynamixel.Ticks(target.Antennas[i-7])
		}
	}
	return h.bus.WriteGoals(h.motors)
}

// readPresent reads every answering motor's position in one sync read and computes the pose.
func (h *Hardware) readPresent(now time.Time) error {
	res, idx, err := h.bus.ReadPositions(h.motors)
	if err != nil || len(res) == 0 {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, r := range res {
		m := &h.motors[idx[k]]
		alert := m.Alert
		if m.Record(r, now) {
			h.log.Error("motor stopped answering; driving the others", "motor", m.Name, "id", m.ID, "err", r.Err)
		}
		h.stateDue = h.stateDue || m.Alert != alert
	}
	// The pose: body yaw and antennas are motor angles; the head comes from the legs.
	p := &h.present
	p.BodyYaw = dynamixel.Radians(h.motors[0].Present)
	p.Antennas = [2]float64{dynamixel.Radians(h.motors[7].Present), dynamixel.Radians(h.motors[8].Present)}
	var angles [6]float64
	for i := range angles {
		angles[i] = dynamixel.Radians(h.motors[1+i].Present)
	}
	head, err := h.geom.Forward(angles, p.BodyYaw, kinematics.Pose(p.Head))
	if err != nil {
		head, err = h.geom.Forward(angles, p.BodyYaw, kinematics.Pose{Yaw: p.BodyYaw})
	}
	if err == nil {
		p.Head = robot.HeadPose(head)
	}
	return nil
}

// probe pings silent motors, each at most once per probeEvery; a silent motor that answers again
// is set up and rejoins the loop.
func (h *Hardware) probe(now time.Time) error {
	for i := range h.motors {
		m := &h.motors[i]
		if !m.Silent || now.Sub(m.Probed) < probeEvery {
			continue
		}
		m.Probed = now
		if _, err := h.bus.SetUp(m, &h.mu, true); err != nil {
			if dynamixel.IsPortError(err) {
				return err
			}
			continue
		}
		h.log.Info("motor answers again", "motor", m.Name, "id", m.ID)
		h.stateDue = true
		// It may have lost power (and its torque): set it up like the others, alone.
		if h.applied != "" && h.applied != robot.MotorsDisabled && !h.limpNow[m.Name] {
			if err := h.restart(i, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// readStates reads what the motors say about themselves: whether their torque is on (a motor
// shuts itself down on a hardware error) and which hardware errors they report.
func (h *Hardware) readStates() error {
	changed, err := h.bus.ReadStates(h.motors, &h.mu, time.Now()) // after any switch of this tick
	if err != nil {
		return err
	}
	h.stateDue = false
	for _, i := range changed {
		m := &h.motors[i]
		if len(m.HardwareErrors) > 0 {
			h.log.Error("motor reports a hardware error", "motor", m.Name, "id", m.ID, "errors", m.HardwareErrors, "torque_on", m.TorqueOn)
		} else {
			h.log.Info("motor's hardware errors cleared", "motor", m.Name, "id", m.ID)
		}
	}
	return nil
}
