// Package busemu emulates the robot's motor bus for development and tests: nine Dynamixel XL330
// motors answering Protocol 2.0 on a pseudo-terminal, so that the daemon's whole hardware path
// (serial port, protocol, kinematics, control loop) runs without a robot. Each motor has a control
// table, moves toward its goal at a motor's speed while its torque is on, refuses EEPROM writes
// with the torque on and goals beyond its limits, and can be made to go silent or report a
// hardware error; the bus can be unplugged and plugged back in.
package busemu

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"

	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/core/robot/kinematics"
	"github.com/robothub/robothub/internal/hardware/dynamixel"
)

// Options configure Start.
type Options struct {
	// Config gives the motors' ids, homing offsets and limits (hardware.DefaultConfig is the
	// robot's); required.
	Config *dynamixel.Config
	// Rest is where the motors are at start, in ticks by id (default 2048: every joint at 0).
	Rest map[byte]int32
	// Latency is the delay each answer adds: the motor's return delay plus the wire time (an
	// instruction's answers are sent together after the sum).
	Latency time.Duration
	// Speed is how fast a motor with its torque on moves toward its goal, in ticks per second
	// (default 6000, an unloaded XL330's 88 rpm).
	Speed float64
	// Dir holds the stable path of the port (default: a new temporary directory).
	Dir string
	Log *slog.Logger
}

// motor is one emulated XL330.
type motor struct {
	id       byte
	table    [dynamixel.ControlTableSize]byte
	position float64 // ticks, exact; the table holds it rounded
	moved    time.Time
	silent   bool
}

func (m *motor) u8(addr uint16) byte        { return m.table[addr] }
func (m *motor) i32(addr uint16) int32      { return dynamixel.Int32(m.table[addr : addr+4]) }
func (m *motor) put32(addr uint16, v int32) { copy(m.table[addr:], dynamixel.PutInt32(v)) }

// advance moves the motor toward its goal for the time since it last moved.
func (m *motor) advance(now time.Time, speed float64) {
	dt := now.Sub(m.moved).Seconds()
	m.moved = now
	if m.u8(dynamixel.AddrTorqueEnable) == 1 && dt > 0 {
		goal := float64(m.i32(dynamixel.AddrGoalPosition))
		if m.u8(dynamixel.AddrOperatingMode) == dynamixel.ModeCurrentBasedPosition {
			// Its goal current caps its torque: against a hand it barely moves (1750 mA is the
			// XL330-M288's current limit).
			current := float64(int16(uint16(m.table[dynamixel.AddrGoalCurrent]) | uint16(m.table[dynamixel.AddrGoalCurrent+1])<<8))
			speed *= math.Min(1, math.Abs(current)/1750)
		}
		step := speed * dt
		if d := goal - m.position; math.Abs(d) <= step {
			m.position = goal
		} else {
			m.position += math.Copysign(step, d)
		}
	}
	m.put32(dynamixel.AddrPresentPosition, int32(math.Round(m.position)))
}

// Bus is a running emulated motor bus.
type Bus struct {
	opts Options
	link string // the stable path: a symlink to the current pty

	mu           sync.Mutex
	motors       map[byte]*motor
	ptmx, tty    *os.File
	served       chan struct{}
	goalsRefused int
	instructions int
}

// Start creates the motors and plugs the bus in.
func Start(opts Options) (*Bus, error) {
	if opts.Config == nil {
		return nil, errors.New("busemu: Options.Config is required: the motors to emulate")
	}
	if opts.Speed <= 0 {
		opts.Speed = 6000
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Dir == "" {
		dir, err := os.MkdirTemp("", "busemu-")
		if err != nil {
			return nil, err
		}
		opts.Dir = dir
	}
	b := &Bus{opts: opts, link: filepath.Join(opts.Dir, "ttyDXL"), motors: map[byte]*motor{}}
	now := time.Now()
	for _, c := range opts.Config.Motors {
		m := &motor{id: c.ID, moved: now, position: 2048}
		if r, ok := opts.Rest[c.ID]; ok {
			m.position = float64(r)
		}
		binaryPut16(m.table[dynamixel.AddrModelNumber:], dynamixel.ModelXL330M288)
		m.table[6] = 46 // firmware version
		m.table[7] = c.ID
		m.table[8] = 3 // 1 Mbaud
		m.table[dynamixel.AddrReturnDelayTime] = c.ReturnDelay
		m.table[dynamixel.AddrOperatingMode] = c.OperatingMode
		m.put32(dynamixel.AddrHomingOffset, c.Offset)
		m.put32(dynamixel.AddrMaxPositionLimit, c.Upper)
		m.put32(dynamixel.AddrMinPositionLimit, c.Lower)
		m.table[dynamixel.AddrShutdown] = c.Shutdown
		m.put32(dynamixel.AddrGoalPosition, int32(m.position))
		m.put32(dynamixel.AddrPresentPosition, int32(m.position))
		binaryPut16(m.table[dynamixel.AddrPresentVoltage:], 50)
		m.table[dynamixel.AddrPresentTemp] = 30
		b.motors[c.ID] = m
	}
	if err := b.Replug(); err != nil {
		return nil, err
	}
	return b, nil
}

func binaryPut16(dst []byte, v uint16) { dst[0], dst[1] = byte(v), byte(v>>8) }

// Path is the port's path; it stays the same across Unplug and Replug, as a udev link does.
func (b *Bus) Path() string { return b.link }

// Replug plugs the bus in (again): a new pseudo-terminal behind Path.
func (b *Bus) Replug() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ptmx != nil {
		return errors.New("busemu: already plugged in")
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		return fmt.Errorf("busemu: opening a pseudo-terminal: %w", err)
	}
	// A non-blocking copy of the pty's master goes through Go's poller, so that Unplug's Close
	// ends a Read that waits on it (a blocking read would wait for the next byte forever).
	fd, err := syscall.Dup(int(ptmx.Fd()))
	ptmx.Close()
	if err == nil {
		err = syscall.SetNonblock(fd, true)
	}
	if err != nil {
		tty.Close()
		return fmt.Errorf("busemu: the pseudo-terminal's master: %w", err)
	}
	ptmx = os.NewFile(uintptr(fd), "ptmx")
	// Raw, so that the line discipline passes every byte through untouched. The emulator keeps its
	// own handle on the terminal side so the pty lives between the daemon's opens.
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil {
		ptmx.Close()
		tty.Close()
		return fmt.Errorf("busemu: raw mode: %w", err)
	}
	tmp := b.link + ".new"
	_ = os.Remove(tmp)
	err = os.Symlink(tty.Name(), tmp)
	if err == nil {
		err = os.Rename(tmp, b.link)
	}
	if err != nil {
		ptmx.Close()
		tty.Close()
		return fmt.Errorf("busemu: linking %s: %w", b.link, err)
	}
	b.ptmx, b.tty, b.served = ptmx, tty, make(chan struct{})
	go b.serve(ptmx, b.served)
	b.opts.Log.Info("motor bus plugged in", "path", b.link, "pty", tty.Name())
	return nil
}

// Unplug pulls the cable: the pty closes (the daemon's reads fail) and Path disappears.
func (b *Bus) Unplug() {
	b.mu.Lock()
	ptmx, tty, served := b.ptmx, b.tty, b.served
	b.ptmx, b.tty = nil, nil
	b.mu.Unlock()
	if ptmx == nil {
		return
	}
	_ = os.Remove(b.link)
	ptmx.Close()
	tty.Close()
	<-served
	b.opts.Log.Info("motor bus unplugged")
}

// Close unplugs the bus and removes its files.
func (b *Bus) Close() error {
	b.Unplug()
	return os.RemoveAll(b.opts.Dir)
}

// SetSilent makes motor id stop (or resume) answering, as an unpowered or disconnected motor.
func (b *Bus) SetSilent(id byte, silent bool) {
	b.mu.Lock()
	b.motors[id].silent = silent
	b.mu.Unlock()
}

// SetHardwareError sets motor id's Hardware Error Status; bits in its Shutdown mask turn its
// torque off, as the motor's firmware does. 0 clears it (a reboot, on a real motor).
func (b *Bus) SetHardwareError(id byte, bits byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.motors[id]
	m.advance(time.Now(), b.opts.Speed)
	m.table[dynamixel.AddrHardwareError] = bits
	if bits&m.table[dynamixel.AddrShutdown] != 0 {
		m.table[dynamixel.AddrTorqueEnable] = 0
	}
}

// Push displaces motor id by ticks, as a hand would; a motor with its torque on goes back.
func (b *Bus) Push(id byte, ticks int32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.motors[id]
	m.advance(time.Now(), b.opts.Speed)
	m.position += float64(ticks)
}

// Position is motor id's present position in ticks.
func (b *Bus) Position(id byte) int32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.motors[id]
	m.advance(time.Now(), b.opts.Speed)
	return int32(math.Round(m.position))
}

// Torque reports whether motor id's torque is on.
func (b *Bus) Torque(id byte) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.motors[id].u8(dynamixel.AddrTorqueEnable) == 1
}

// OperatingMode is motor id's operating mode (address 11).
func (b *Bus) OperatingMode(id byte) byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.motors[id].u8(dynamixel.AddrOperatingMode)
}

// GoalsRefused counts goal positions beyond a motor's limits that the bus received (and, as the
// motor does, did not apply).
func (b *Bus) GoalsRefused() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.goalsRefused
}

// Instructions counts the instruction packets the bus received.
func (b *Bus) Instructions() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.instructions
}

// serve reads instruction packets from the pty and answers them until it closes.
func (b *Bus) serve(ptmx *os.File, served chan struct{}) {
	defer close(served)
	buf := make([]byte, 0, 4096)
	chunk := make([]byte, 4096)
	for {
		n, err := ptmx.Read(chunk)
		if err != nil {
			return
		}
		buf = append(buf, chunk[:n]...)
		for len(buf) > 0 {
			p, used, err := dynamixel.Decode(buf)
			buf = buf[used:]
			if errors.Is(err, dynamixel.ErrIncomplete) {
				break
			}
			if err != nil || p.Instruction == dynamixel.InstStatus {
				continue // damaged: a real motor ignores it too
			}
			answers := b.handle(p)
			if len(answers) == 0 {
				continue
			}
			// One wait for all the answers: one sleep per answer would add the scheduler's
			// delay each time.
			if b.opts.Latency > 0 {
				time.Sleep(time.Duration(len(answers)) * b.opts.Latency)
			}
			if _, err := ptmx.Write(bytes.Join(answers, nil)); err != nil {
				return
			}
		}
	}
}

// handle executes one instruction and returns the status packets the motors send back.
func (b *Bus) handle(p dynamixel.Packet) [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.instructions++
	now := time.Now()
	for _, m := range b.motors {
		m.advance(now, b.opts.Speed)
	}
	status := func(m *motor, errCode dynamixel.DeviceError, data []byte) []byte {
		if m.table[dynamixel.AddrHardwareError] != 0 {
			errCode |= dynamixel.AlertBit
		}
		return dynamixel.AppendPacket(nil, m.id, dynamixel.InstStatus, append([]byte{byte(errCode)}, data...))
	}
	switch p.Instruction {
	case dynamixel.InstSyncWrite:
		if len(p.Params) < 4 {
			return nil
		}
		addr, n := uint16(p.Params[0])|uint16(p.Params[1])<<8, int(p.Params[2])|int(p.Params[3])<<8
		for rest := p.Params[4:]; n > 0 && len(rest) >= 1+n; rest = rest[1+n:] {
			if m := b.motors[rest[0]]; m != nil && !m.silent {
				b.write(m, addr, rest[1:1+n])
			}
		}
		return nil
	case dynamixel.InstSyncRead:
		if len(p.Params) < 4 {
			return nil
		}
		addr, n := uint16(p.Params[0])|uint16(p.Params[1])<<8, int(p.Params[2])|int(p.Params[3])<<8
		var out [][]byte
		for _, id := range p.Params[4:] {
			m := b.motors[id]
			if m == nil || m.silent {
				continue
			}
			if int(addr)+n > len(m.table) {
				out = append(out, status(m, dynamixel.ErrDataRange, nil))
				continue
			}
			out = append(out, status(m, 0, m.table[addr:int(addr)+n]))
		}
		return out
	}
	m := b.motors[p.ID]
	if m == nil || m.silent {
		return nil
	}
	switch p.Instruction {
	case dynamixel.InstPing:
		return [][]byte{status(m, 0, []byte{m.table[0], m.table[1], m.table[6]})}
	case dynamixel.InstRead:
		if len(p.Params) != 4 {
			return [][]byte{status(m, dynamixel.ErrDataLength, nil)}
		}
		addr, n := int(p.Params[0])|int(p.Params[1])<<8, int(p.Params[2])|int(p.Params[3])<<8
		if addr+n > len(m.table) {
			return [][]byte{status(m, dynamixel.ErrDataRange, nil)}
		}
		return [][]byte{status(m, 0, m.table[addr:addr+n])}
	case dynamixel.InstWrite:
		if len(p.Params) < 3 {
			return [][]byte{status(m, dynamixel.ErrDataLength, nil)}
		}
		return [][]byte{status(m, b.write(m, uint16(p.Params[0])|uint16(p.Params[1])<<8, p.Params[2:]), nil)}
	}
	return [][]byte{status(m, dynamixel.ErrInstruction, nil)}
}

// write applies a write to the control table as an XL330 does, and returns its error code.
func (b *Bus) write(m *motor, addr uint16, data []byte) dynamixel.DeviceError {
	end := int(addr) + len(data)
	switch {
	case end > len(m.table):
		return dynamixel.ErrDataRange
	case addr < dynamixel.AddrTorqueEnable && m.u8(dynamixel.AddrTorqueEnable) == 1:
		return dynamixel.ErrAccess // EEPROM is locked while the torque is on
	case addr >= 122 || (addr <= dynamixel.AddrHardwareError && end > int(dynamixel.AddrHardwareError)):
		return dynamixel.ErrAccess // read-only items
	case addr == dynamixel.AddrGoalPosition && len(data) == 4:
		goal := dynamixel.Int32(data)
		if goal < m.i32(dynamixel.AddrMinPositionLimit) || goal > m.i32(dynamixel.AddrMaxPositionLimit) {
			b.goalsRefused++
			return dynamixel.ErrDataLimit
		}
	case addr == dynamixel.AddrTorqueEnable && data[0] == 1 && m.table[dynamixel.AddrHardwareError]&m.table[dynamixel.AddrShutdown] != 0:
		return dynamixel.ErrResultFail // a motor in shutdown keeps its torque off until rebooted
	}
	copy(m.table[addr:], data)
	return 0
}

// RestingAt returns the motors' positions, by id, that put the robot in pose j: where Options.Rest
// starts them (the sleep pose, for a robot that was switched off).
func RestingAt(cfg *dynamixel.Config, j robot.Joints) (map[byte]int32, error) {
	legs, err := kinematics.Default.Inverse(kinematics.Pose(j.Head), j.BodyYaw)
	if err != nil {
		return nil, err
	}
	angles := map[string]float64{"body_rotation": j.BodyYaw, "right_antenna": j.Antennas[0], "left_antenna": j.Antennas[1]}
	for i, a := range legs {
		angles[fmt.Sprintf("stewart_%d", i+1)] = a
	}
	rest := map[byte]int32{}
	for _, m := range cfg.Motors {
		if a, ok := angles[m.Name]; ok {
			rest[m.ID] = dynamixel.Ticks(a)
		}
	}
	return rest, nil
}
