package busemu

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/robothub/robothub/adapters/hardware/dynamixel"
)

// Physics of the emulated XL330-M288 (e-manual, "Specifications" and the control table's units).
const (
	rpmUnit       = 0.229   // Velocity Limit, Profile Velocity, Present Velocity: rev/min per unit
	accelUnit     = 214.577 // Profile Acceleration: rev/min² per unit
	ticksPerRev   = 4096
	mAPerTickGain = 1.0 / 100 // Present Current per tick of position error and unit of P gain
	overloadAfter = time.Second
	bootTime      = 50 * time.Millisecond // a rebooted motor hears nothing meanwhile
	motionStep    = time.Millisecond      // the motion's integration step
)

// motor is one emulated XL330: its control table and the physics behind its Present items.
type motor struct {
	table       [tableSize]byte
	position    float64 // ticks, exact, as Present Position reports it; the table holds it rounded
	velocity    float64 // ticks/s
	moved       time.Time
	silent      bool            // its data line is cut: it hears and says nothing
	bootUntil   time.Time       // rebooting: deaf until then
	lateSkip    int             // answers to send on time before the late ones
	lateBy      []time.Duration // how late the next answers come
	saturated   time.Time       // since when its current has been at the Current Limit (zero: it is not)
	voltage     float64         // V
	temperature float64         // °C
	start       time.Time
}

// newMotor is a motor as the robot's setup tool leaves it: the factory table with c's EEPROM
// settings written, at rest at position ticks, listening at baud index baud.
func newMotor(c dynamixel.MotorConfig, baud byte, position int32, now time.Time) *motor {
	m := &motor{position: float64(position), moved: now, voltage: 5.0, temperature: 30, start: now}
	for _, it := range table {
		if it.addr < eepromEnd {
			m.put(it.addr, it.size, it.init)
		}
	}
	m.table[addrID] = c.ID
	m.table[addrBaudRate] = baud
	m.table[addrReturnDelayTime] = c.ReturnDelay
	m.table[addrOperatingMode] = c.OperatingMode
	m.table[addrShutdown] = c.Shutdown
	m.put(addrHomingOffset, 4, int64(c.Offset))
	m.put(addrMaxPositionLimit, 4, int64(c.Upper))
	m.put(addrMinPositionLimit, 4, int64(c.Lower))
	m.powerOn(now)
	return m
}

// powerOn sets the RAM items to their power-on values, as at power-up or after a reboot; the goal
// is where the motor is, so that enabling the torque holds it there.
func (m *motor) powerOn(now time.Time) {
	for _, it := range table {
		if it.addr >= eepromEnd {
			m.put(it.addr, it.size, it.init)
		}
	}
	m.velocity, m.saturated = 0, time.Time{}
	m.put(addrGoalPosition, 4, int64(math.Round(m.position)))
	m.present(now)
}

func (m *motor) id() byte { return m.table[addrID] }

// get reads an item's value (sign-extended for signed items).
func (m *motor) get(addr, size int) int64 {
	b := m.table[addr : addr+size]
	switch size {
	case 1:
		return int64(b[0])
	case 2:
		if it := itemAt[addr]; it != nil && it.signed {
			return int64(int16(binary.LittleEndian.Uint16(b)))
		}
		return int64(binary.LittleEndian.Uint16(b))
	default:
		if it := itemAt[addr]; it != nil && it.signed {
			return int64(int32(binary.LittleEndian.Uint32(b)))
		}
		return int64(binary.LittleEndian.Uint32(b))
	}
}

func (m *motor) put(addr, size int, v int64) {
	b := m.table[addr : addr+size]
	switch size {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	default:
		binary.LittleEndian.PutUint32(b, uint32(v))
	}
}

func (m *motor) torqueOn() bool { return m.table[addrTorqueEnable] == 1 }

// listening reports whether the motor hears the line at baud index baud at now.
func (m *motor) listening(baud byte, now time.Time) bool {
	return !m.silent && !now.Before(m.bootUntil) && m.table[addrBaudRate] == baud
}

// returnDelay is how long the motor waits before it answers (Return Delay Time, 2 µs a unit).
func (m *motor) returnDelay() time.Duration {
	return time.Duration(m.table[addrReturnDelayTime]) * 2 * time.Microsecond
}

// raise records hardware errors; those in the Shutdown mask turn the torque off. Only a reboot
// clears them.
func (m *motor) raise(bits byte) {
	m.table[addrHardwareError] |= bits
	if bits&m.table[addrShutdown] != 0 {
		m.table[addrTorqueEnable] = 0
	}
}

// reboot restarts the motor: its hardware errors are cleared, its RAM takes its power-on values,
// and it hears nothing for bootTime.
func (m *motor) reboot(now time.Time) {
	m.table[addrHardwareError] = 0
	m.powerOn(now)
	m.bootUntil = now.Add(bootTime)
}

// currentLimit is what the motor's output is capped at, in mA: its Goal Current in current-based
// position control, else its Current Limit.
func (m *motor) currentLimit() float64 {
	limit := float64(m.get(addrCurrentLimit, 2))
	if m.table[addrOperatingMode] == modeCurrentBasedPosition {
		limit = math.Min(limit, math.Abs(float64(m.get(addrGoalCurrent, 2))))
	}
	return limit
}

// advance moves the motor for the time since it last moved: toward its goal under the velocity
// profile (Profile Velocity and Profile Acceleration; 0 is as fast as it can) while its torque is
// on in a position mode; then it updates the Present items and the errors they raise.
func (m *motor) advance(now time.Time, topSpeed float64) {
	dt := now.Sub(m.moved)
	m.moved = now
	mode := m.table[addrOperatingMode]
	positionMode := mode == modePosition || mode == modeExtendedPosition || mode == modeCurrentBasedPosition
	if !m.torqueOn() || !positionMode {
		m.velocity = 0
	} else if dt > 0 {
		vmax := topSpeed * math.Min(1, m.currentLimit()/1750) // a capped current barely moves it against a hand
		if lim := float64(m.get(addrVelocityLimit, 4)) * rpmUnit / 60 * ticksPerRev; lim < vmax {
			vmax = lim
		}
		if pv := m.get(addrProfileVelocity, 4); pv > 0 {
			vmax = math.Min(vmax, float64(pv)*rpmUnit/60*ticksPerRev)
		}
		accel := math.Inf(1)
		if pa := m.get(addrProfileAccel, 4); pa > 0 {
			accel = float64(pa) * accelUnit / 3600 * ticksPerRev
		}
		goal := float64(m.get(addrGoalPosition, 4))
		for left := dt; left > 0 && (m.position != goal || m.velocity != 0); left -= motionStep {
			h := min(left, motionStep).Seconds()
			d := goal - m.position
			want := vmax // the speed it may have: what still lets it stop at the goal
			if !math.IsInf(accel, 1) {
				want = math.Min(vmax, math.Sqrt(2*accel*math.Abs(d)))
			}
			want = math.Copysign(want, d)
			if math.IsInf(accel, 1) {
				m.velocity = want
			} else {
				m.velocity += math.Max(-accel*h, math.Min(accel*h, want-m.velocity))
			}
			next := m.position + m.velocity*h
			if (goal-next)*d <= 0 { // reached (or would pass) the goal
				m.position, m.velocity = goal, 0
				break
			}
			m.position = next
		}
	}
	m.present(now)
}

// present writes the Present items from the motor's state, and raises the hardware errors they
// show: input voltage outside its limits, overheating, an output held at its limit (overload).
func (m *motor) present(now time.Time) {
	m.put(addrPresentPosition, 4, int64(math.Round(m.position)))
	m.put(addrPresentVelocity, 4, int64(math.Round(m.velocity/ticksPerRev*60/rpmUnit)))
	m.put(addrRealtimeTick, 2, now.Sub(m.start).Milliseconds()%32768)
	current := 0.0
	if m.torqueOn() {
		limit := m.currentLimit()
		current = (float64(m.get(addrGoalPosition, 4)) - m.position) * float64(m.get(addrPositionPGain, 2)) * mAPerTickGain
		current = math.Max(-limit, math.Min(limit, current))
		atLimit := limit > 0 && math.Abs(current) >= float64(m.get(addrCurrentLimit, 2))
		switch {
		case !atLimit:
			m.saturated = time.Time{}
		case m.saturated.IsZero():
			m.saturated = now
		case now.Sub(m.saturated) >= overloadAfter:
			m.raise(hwOverload)
		}
	}
	m.put(addrPresentCurrent, 2, int64(math.Round(current)))
	moving := math.Abs(float64(m.get(addrGoalPosition, 4))-m.position) > float64(m.get(addrMovingThreshold, 4)) || m.velocity != 0
	m.table[addrMoving] = 0
	if moving && m.torqueOn() {
		m.table[addrMoving] = 1
	}
	m.put(addrPresentVoltage, 2, int64(math.Round(m.voltage*10)))
	m.table[addrPresentTemp] = byte(math.Max(0, math.Min(255, math.Round(m.temperature))))
	if v := m.get(addrPresentVoltage, 2); v > m.get(addrMaxVoltageLimit, 2) || v < m.get(addrMinVoltageLimit, 2) {
		m.raise(hwInputVoltage)
	}
	if int64(m.table[addrPresentTemp]) >= int64(m.table[addrTemperatureLimit]) {
		m.raise(hwOverheating)
	}
}

// read answers a READ of n bytes at addr: reserved addresses read as 0.
func (m *motor) read(addr, n int) ([]byte, byte) {
	if n == 0 {
		return nil, errDataLength
	}
	if addr+n > tableSize {
		return nil, errAccess // beyond the items this model has
	}
	return append([]byte(nil), m.table[addr:addr+n]...), 0
}

// write applies a WRITE of data at addr as the firmware does: whole items only, each writable,
// EEPROM only with the torque off, each value within its range and its limits. Nothing is
// written unless all of it is accepted. goalRefused reports a goal position beyond the limits.
func (m *motor) write(addr int, data []byte) (errField byte, goalRefused bool) {
	end := addr + len(data)
	if len(data) == 0 || end > tableSize {
		return errAccess, false
	}
	staged := m.table
	for a := addr; a < end; {
		it := itemAt[a]
		if it == nil {
			return errAccess, false // not the start of an item: reserved, or inside one
		}
		if a+it.size > end {
			return errDataLength, false // part of an item
		}
		if !it.writable || (a < eepromEnd && m.torqueOn()) {
			return errAccess, false
		}
		copy(staged[a:], data[a-addr:a-addr+it.size])
		v := (&motor{table: staged}).get(a, it.size)
		switch {
		case v < it.lo || v > it.hi:
			return errDataRange, false
		case a == addrOperatingMode && !validOperatingMode(v):
			return errDataRange, false
		case a == addrGoalPosition && staged[addrOperatingMode] == modePosition &&
			(v < m.get(addrMinPositionLimit, 4) || v > m.get(addrMaxPositionLimit, 4)):
			return errDataLimit, true
		case a == addrGoalCurrent && math.Abs(float64(v)) > float64(m.get(addrCurrentLimit, 2)):
			return errDataLimit, false
		case a == addrTorqueEnable && v == 1 && m.table[addrHardwareError]&m.table[addrShutdown] != 0:
			return errResultFail, false // shut down: the torque stays off until a reboot
		}
		a += it.size
	}
	m.table = staged
	return 0, false
}
