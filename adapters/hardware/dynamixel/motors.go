package dynamixel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"go.bug.st/serial"
)

// MotorConfig is one motor of the bus.
type MotorConfig struct {
	Name          string
	ID            byte
	Offset        int32 // Homing Offset, ticks
	Lower, Upper  int32 // position limits, ticks
	ReturnDelay   byte  // Return Delay Time, units of 2 µs
	Shutdown      byte
	OperatingMode byte
	PID           *[3]uint16
}

// Config is the motor bus: its baud rate and its motors.
type Config struct {
	Baud   int
	Motors []MotorConfig
}

// Motor returns the named motor's config.
func (c *Config) Motor(name string) (MotorConfig, bool) {
	i := slices.IndexFunc(c.Motors, func(m MotorConfig) bool { return m.Name == name })
	if i < 0 {
		return MotorConfig{}, false
	}
	return c.Motors[i], true
}

// Open opens the serial port at path at baud bits per second, 8N1, and returns a Bus on it with
// the given Timeout (0: NewBus's default).
func Open(path string, baud int, timeout time.Duration) (*Bus, error) {
	p, err := serial.Open(path, &serial.Mode{BaudRate: baud, DataBits: 8, Parity: serial.NoParity, StopBits: serial.OneStopBit})
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	b := NewBus(p, baud)
	if timeout > 0 {
		b.Timeout = timeout
	}
	return b, nil
}

// Close closes the Bus's port, if it is one that closes, once what was written to it is on the
// line (a last torque off must reach the motors, not die in the adapter's buffer).
func (b *Bus) Close() error {
	if d, ok := b.port.(interface{ Drain() error }); ok {
		_ = d.Drain() // a port already gone has nothing to drain
	}
	if c, ok := b.port.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// IsPortError reports whether err is (or wraps) a PortError.
func IsPortError(err error) bool {
	var pe *PortError
	return errors.As(err, &pe)
}

// ReadInt32 reads the 4-byte value at addr of device id.
func (b *Bus) ReadInt32(id byte, addr uint16) (int32, error) {
	data, err := b.Read(id, addr, 4)
	if err != nil {
		return 0, err
	}
	return Int32(data), nil
}

// eepromBlock is the part of the EEPROM that Configure checks, read in one READ: Return Delay
// Time (9) through Min Position Limit (52).
const (
	eepromStart = AddrReturnDelayTime
	eepromLen   = int(AddrMinPositionLimit) + 4 - int(AddrReturnDelayTime)
)

// Configure checks motor m's EEPROM settings against its config (written once by the setup tool,
// never here: EEPROM wears), tells the Bus its return delay, and writes its PID gains; the
// warnings name the settings that differ.
func (b *Bus) Configure(m MotorConfig) (warnings []string, err error) {
	eeprom, err := b.Read(m.ID, eepromStart, eepromLen)
	if err != nil {
		return nil, err
	}
	at := func(addr uint16) []byte { return eeprom[addr-eepromStart:] }
	b.SetReturnDelay(m.ID, at(AddrReturnDelayTime)[0])
	checks := []struct {
		what      string
		got, want int32
	}{
		{"return delay time", int32(at(AddrReturnDelayTime)[0]), int32(m.ReturnDelay)},
		{"homing offset", Int32(at(AddrHomingOffset)), m.Offset},
		{"min position limit", Int32(at(AddrMinPositionLimit)), m.Lower},
		{"max position limit", Int32(at(AddrMaxPositionLimit)), m.Upper},
	}
	for _, c := range checks {
		if c.got != c.want {
			warnings = append(warnings, fmt.Sprintf("%s (id %d): %s is %d, the hardware config says %d", m.Name, m.ID, c.what, c.got, c.want))
		}
	}
	if pid := m.PID; pid != nil {
		for k, addr := range []uint16{AddrPositionPGain, AddrPositionIGain, AddrPositionDGain} {
			if err := b.Write(m.ID, addr, binary.LittleEndian.AppendUint16(nil, pid[k])); err != nil {
				return warnings, err
			}
		}
	}
	return warnings, nil
}

// AnswerEverything sets device id's Status Return Level (a RAM item) to 2, so that it answers
// every instruction and a failed write is seen. A device at level 1 or 0 does not acknowledge this
// write: its acknowledgement is awaited, not required.
func (b *Bus) AnswerEverything(id byte) error {
	if err := b.send(id, InstWrite, []byte{byte(AddrStatusReturn), byte(AddrStatusReturn >> 8), 2}); err != nil {
		return err
	}
	deadline := time.Now().Add(b.wire(len(b.out)) + b.returnDelay[id] + b.wire(statusOverhead) + b.Timeout)
	p, err := b.await(deadline, func(p Packet) bool { return answers(p, id, 0) })
	switch {
	case IsPortError(err):
		return err
	case err == nil && p.Err.Code() != 0:
		return fmt.Errorf("motor %d: setting its status return level: %w", id, p.Err)
	}
	return nil
}

// Prepare sets m's Goal to where it is and, unless it is silent, writes its operating mode (its
// torque must be off), its goal current in mA when the mode is current-based position, and the goal.
func (b *Bus) Prepare(m *Motor, mode byte, current int16) error {
	m.Goal = m.Present
	if m.Silent {
		return nil
	}
	err := b.Write(m.ID, AddrOperatingMode, []byte{mode})
	if err == nil && mode == ModeCurrentBasedPosition {
		err = b.Write(m.ID, AddrGoalCurrent, binary.LittleEndian.AppendUint16(nil, uint16(current)))
	}
	if err == nil {
		err = b.Write(m.ID, AddrGoalPosition, PutInt32(m.Goal))
	}
	return err
}

// WriteGoals clamps the Goal of every motor of ms to its limits and writes them all with one sync
// write, built in one allocation.
func (b *Bus) WriteGoals(ms []Motor) error {
	params := binary.LittleEndian.AppendUint16(make([]byte, 0, 4+len(ms)*5), AddrGoalPosition)
	params = binary.LittleEndian.AppendUint16(params, 4)
	for i := range ms {
		m := &ms[i]
		m.Goal = min(max(m.Goal, m.Lower), m.Upper)
		params = binary.LittleEndian.AppendUint32(append(params, m.ID), uint32(m.Goal))
	}
	return b.send(BroadcastID, InstSyncWrite, params)
}

// Torque turns the torque of ids on or off with one sync write (no device answers it: the next
// reads show a motor that missed it).
func (b *Bus) Torque(ids []byte, on bool) error {
	v := byte(0)
	if on {
		v = 1
	}
	data := make([][]byte, len(ids))
	for i := range data {
		data[i] = []byte{v}
	}
	return b.SyncWrite(AddrTorqueEnable, ids, data)
}

// SilentAfter is how many reads in a row a motor may miss (100 ms at 50 Hz) before it is taken
// for silent.
const SilentAfter = 5

// Motor is one motor as a control loop sees it through its reads: where it is, whether it answers,
// and what it says about itself. Its methods do no I/O: call them holding the lock that the
// motor's readers take.
type Motor struct {
	MotorConfig
	Present  int32 // ticks, last read
	Goal     int32 // ticks, last written (gravity compensation follows a hand from it)
	Seen     bool
	LastSeen time.Time
	Silent   bool // it missed SilentAfter reads in a row, or a ping: only pings reach it
	Alert    bool // its last answer carried the hardware error alert
	Probed   time.Time
	// What it said about itself at StateAt (ReadStates; zero before): its Torque Enable and its
	// Hardware Error Status, decoded.
	StateAt        time.Time
	TorqueOn       bool
	HardwareErrors []string
	// Its load (Present Current, mA), Present Input Voltage (V) and Present Temperature (°C) at
	// TelemetryAt (ReadTelemetry; zero before).
	TelemetryAt time.Time
	Current     int16
	Voltage     float64
	Temperature int
	misses      int
}

// SetUp pings m (once when probing a silent motor, else with the Bus's retries), sets it to
// answer every instruction, checks and configures it (Configure) and reads its position; it
// records the outcome in m holding mu (found, or lost when the ping goes unanswered).
func (b *Bus) SetUp(m *Motor, mu sync.Locker, probing bool) (warnings []string, err error) {
	ping := b.Ping
	if probing {
		ping = b.Probe
	}
	if _, err := ping(m.ID); err != nil {
		mu.Lock()
		m.lost()
		mu.Unlock()
		return nil, err
	}
	if err := b.AnswerEverything(m.ID); err != nil {
		return nil, err
	}
	if warnings, err = b.Configure(m.MotorConfig); err != nil {
		if errors.Is(err, ErrTimeout) {
			err = fmt.Errorf("%w (it answers a ping but not a read)", err)
		}
		return warnings, err
	}
	pos, err := b.ReadInt32(m.ID, AddrPresentPosition)
	if err != nil {
		return warnings, err
	}
	mu.Lock()
	m.found(pos, time.Now())
	mu.Unlock()
	return warnings, nil
}

// listening returns the ids of the motors of ms that are not silent, and their index in ms.
func listening(ms []Motor) (ids []byte, idx []int) {
	for i, m := range ms {
		if !m.Silent {
			ids, idx = append(ids, m.ID), append(idx, i)
		}
	}
	return ids, idx
}

// ReadPositions reads the Present Position of every motor of ms that is not silent with one sync
// read. It returns the answers (for Motor.Record) and the index in ms of the motor of each; none
// when every motor is silent. Only a PortError is returned as err.
func (b *Bus) ReadPositions(ms []Motor) (res []SyncResult, idx []int, err error) {
	ids, idx := listening(ms)
	if len(ids) == 0 {
		return nil, nil, nil
	}
	res, err = b.SyncRead(AddrPresentPosition, 4, ids)
	return res, idx, err
}

// The state block: Torque Enable (64) through Hardware Error Status (70).
const stateLen = int(AddrHardwareError) + 1 - int(AddrTorqueEnable)

// ReadStates reads what every motor of ms that is not silent says about itself (its Torque
// Enable and Hardware Error Status) with one sync read, and records it at now holding mu. It
// returns the motors whose hardware errors changed. Only a PortError is returned as err.
func (b *Bus) ReadStates(ms []Motor, mu sync.Locker, now time.Time) (changed []int, err error) {
	ids, idx := listening(ms)
	if len(ids) == 0 {
		return nil, nil
	}
	res, err := b.SyncRead(AddrTorqueEnable, stateLen, ids)
	if err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	for k, r := range res {
		if r.Err != nil {
			continue
		}
		m := &ms[idx[k]]
		errs := HardwareErrors(r.Data[AddrHardwareError-AddrTorqueEnable])
		if !slices.Equal(errs, m.HardwareErrors) {
			changed = append(changed, idx[k])
		}
		m.StateAt, m.TorqueOn, m.HardwareErrors = now, r.Data[0] == 1, errs
	}
	return changed, nil
}

// The telemetry block: Present Current (126) through Present Temperature (146).
const telemetryLen = int(AddrPresentTemp) + 1 - int(AddrPresentCurrent)

// ReadTelemetry reads the load, input voltage and temperature of every motor of ms that is not
// silent with one sync read, and records them at now holding mu. Only a PortError is returned.
func (b *Bus) ReadTelemetry(ms []Motor, mu sync.Locker, now time.Time) error {
	ids, idx := listening(ms)
	if len(ids) == 0 {
		return nil
	}
	res, err := b.SyncRead(AddrPresentCurrent, telemetryLen, ids)
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	for k, r := range res {
		if r.Err != nil {
			continue
		}
		at := func(addr uint16) []byte { return r.Data[addr-AddrPresentCurrent:] }
		m := &ms[idx[k]]
		m.TelemetryAt = now
		m.Current = int16(binary.LittleEndian.Uint16(at(AddrPresentCurrent)))
		m.Voltage = float64(binary.LittleEndian.Uint16(at(AddrPresentVoltage))) / 10
		m.Temperature = int(at(AddrPresentTemp)[0])
	}
	return nil
}

// found records that m answered its setup at now, at position present.
func (m *Motor) found(present int32, now time.Time) {
	m.Present, m.Seen, m.LastSeen, m.Silent, m.misses = present, true, now, false, 0
}

// lost records that m did not answer a ping: it is silent at once.
func (m *Motor) lost() { m.Silent, m.misses = true, SilentAfter }

// Record takes m's answer r to a sync read of its position at now and reports whether m has just
// gone silent.
func (m *Motor) Record(r SyncResult, now time.Time) (silenced bool) {
	if r.Err != nil {
		m.misses++
		silenced = m.misses >= SilentAfter && !m.Silent
		if silenced {
			m.Silent = true
		}
		return silenced
	}
	m.Present, m.Seen, m.LastSeen, m.misses = Int32(r.Data), true, now, 0
	if r.Alert != m.Alert {
		m.Alert = r.Alert
		if !r.Alert {
			m.HardwareErrors = nil
		}
	}
	return false
}
