// Package busemu emulates the robot's motor bus for development and tests: Dynamixel XL330 motors
// answering Protocol 2.0 on a pseudo-terminal, so that the daemon's whole hardware path (serial
// port, protocol, kinematics, control loop) runs without a robot.
//
// It is as strict as the motors, so that the driver's mistakes show here rather than on a robot.
// It decodes and encodes packets with its own code, written from the spec (protocol.go), not the
// driver's. Each motor keeps the XL330's control table (table.go) and enforces it: whole items
// only, read-only and reserved addresses refused, EEPROM locked while the torque is on, values
// checked against their ranges and goals against the position limits. A motor answers after its
// Return Delay Time and the wire time of the packets at the line's baud rate, as its Status Return
// Level allows; broadcast PING, WRITE, SYNC WRITE and REBOOT reach every motor, and only PING is
// answered. A hardware error turns the torque off when its Shutdown bit says so and stays until a
// REBOOT, the only way to clear it. Goal and present position move under the velocity profile;
// present current (the load), voltage and temperature are reported and raise their errors.
//
// Faults are knobs: a motor can go silent, answer late (DelayAnswers), raise a hardware error,
// overheat or see its voltage sag, and the bus can be unplugged and plugged back in.
package busemu

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"

	"github.com/robothub/robothub/adapters/hardware/dynamixel"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/core/robot/kinematics"
)

// Options configure Start.
type Options struct {
	// Config gives the motors' ids, baud rate, homing offsets, limits, return delays and shutdown
	// masks (hardware.DefaultConfig is the robot's); required.
	Config *dynamixel.Config
	// Rest is where the motors are at start, in ticks by id (default 2048: every joint at 0).
	Rest map[byte]int32
	// Asleep starts the motors in the robot's sleep pose (RestingAt), as a robot switched off
	// rests; Rest, when given, wins.
	Asleep bool
	// Speed is the fastest a motor with its torque on moves toward its goal, in ticks per second
	// (default 6000, an XL330's 88 rpm under the robot's load); its profile may make it slower.
	Speed float64
	// Dir holds the stable path of the port (default: a new temporary directory).
	Dir string
	Log *slog.Logger
}

// Bus is a running emulated motor bus.
type Bus struct {
	opts Options
	link string // the stable path: a symlink to the current pty
	baud int    // the line's speed, bits per second

	mu           sync.Mutex
	motors       []*motor
	ptmx, tty    *os.File
	served       chan struct{}
	goalsRefused int
	instructions int

	writeMu sync.Mutex // one packet at a time on the line, late answers included
}

// Start creates the motors and plugs the bus in.
func Start(opts Options) (*Bus, error) {
	if opts.Config == nil {
		return nil, errors.New("busemu: Options.Config is required: the motors to emulate")
	}
	baudIndex := slices.Index(baudRates[:], opts.Config.Baud)
	if baudIndex < 0 {
		return nil, fmt.Errorf("busemu: an XL330 cannot run at %d baud (it runs at %v)", opts.Config.Baud, baudRates)
	}
	if opts.Asleep && opts.Rest == nil {
		rest, err := RestingAt(opts.Config, robot.SleepPose)
		if err != nil {
			return nil, fmt.Errorf("busemu: the sleep pose: %w", err)
		}
		opts.Rest = rest
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
	b := &Bus{opts: opts, link: filepath.Join(opts.Dir, "ttyDXL"), baud: opts.Config.Baud}
	now := time.Now()
	for _, c := range opts.Config.Motors {
		rest, ok := opts.Rest[c.ID]
		if !ok {
			rest = 2048
		}
		b.motors = append(b.motors, newMotor(c, byte(baudIndex), rest, now))
	}
	if err := b.Replug(); err != nil {
		return nil, err
	}
	return b, nil
}

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

// wire is how long n bytes take on the line: 10 bits a byte (start, 8 data, stop).
func (b *Bus) wire(n int) time.Duration {
	return time.Duration(n) * 10 * time.Second / time.Duration(b.baud)
}

// motor returns the motor whose ID is id, moved to now. Call with b.mu held.
func (b *Bus) motor(id byte, now time.Time) *motor {
	for _, m := range b.motors {
		if m.id() == id {
			m.advance(now, b.opts.Speed)
			return m
		}
	}
	panic(fmt.Sprintf("busemu: no motor %d", id))
}

// with runs f on motor id, moved to now, holding the bus's lock.
func (b *Bus) with(id byte, f func(m *motor)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f(b.motor(id, time.Now()))
}

// SetSilent cuts (or restores) motor id's data line: it hears and says nothing, and keeps its
// state.
func (b *Bus) SetSilent(id byte, silent bool) { b.with(id, func(m *motor) { m.silent = silent }) }

// RaiseHardwareError makes motor id detect the hardware errors bits (Hardware Error Status bits:
// 0x01 input voltage, 0x04 overheating, 0x08 motor encoder, 0x10 electrical shock, 0x20
// overload). Those in its Shutdown mask turn its torque off; all stay until a REBOOT.
func (b *Bus) RaiseHardwareError(id byte, bits byte) { b.with(id, func(m *motor) { m.raise(bits) }) }

// SetTemperature sets motor id's temperature in °C: at its Temperature Limit it overheats.
func (b *Bus) SetTemperature(id byte, celsius float64) {
	b.with(id, func(m *motor) { m.temperature = celsius; m.present(time.Now()) })
}

// SetVoltage sets motor id's input voltage: outside its voltage limits it raises an input voltage
// error.
func (b *Bus) SetVoltage(id byte, volts float64) {
	b.with(id, func(m *motor) { m.voltage = volts; m.present(time.Now()) })
}

// DelayAnswers makes motor id's answers come late, as a motor or an adapter that lags: after skip
// answers on time, the next ones come delays[0], delays[1], ... late. The bus meanwhile serves the
// next instructions: a late answer comes in the middle of another transaction.
func (b *Bus) DelayAnswers(id byte, skip int, delays ...time.Duration) {
	b.with(id, func(m *motor) { m.lateSkip, m.lateBy = skip, delays })
}

// Push displaces motor id by ticks, as a hand would; a motor with its torque on goes back.
func (b *Bus) Push(id byte, ticks int32) {
	b.with(id, func(m *motor) { m.position += float64(ticks); m.present(time.Now()) })
}

// Position is motor id's present position in ticks.
func (b *Bus) Position(id byte) (p int32) {
	b.with(id, func(m *motor) { p = int32(math.Round(m.position)) })
	return p
}

// Torque reports whether motor id's torque is on.
func (b *Bus) Torque(id byte) (on bool) {
	b.with(id, func(m *motor) { on = m.torqueOn() })
	return on
}

// OperatingMode is motor id's operating mode (address 11).
func (b *Bus) OperatingMode(id byte) (mode byte) {
	b.with(id, func(m *motor) { mode = m.table[addrOperatingMode] })
	return mode
}

// HardwareError is motor id's Hardware Error Status.
func (b *Bus) HardwareError(id byte) (bits byte) {
	b.with(id, func(m *motor) { bits = m.table[addrHardwareError] })
	return bits
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

// answer is a status packet and when its last byte is on the line.
type answer struct {
	packet []byte
	due    time.Time
	late   bool
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
		arrived := time.Now()
		buf = append(buf, chunk[:n]...)
		for {
			f, used, found := nextFrame(buf)
			buf = buf[used:]
			if !found {
				break
			}
			var onTime []byte
			var last time.Time
			for _, a := range b.handle(f, arrived) {
				if a.late {
					time.AfterFunc(time.Until(a.due), func() { b.write(ptmx, a.packet) })
					continue
				}
				onTime, last = append(onTime, a.packet...), a.due
			}
			if len(onTime) == 0 {
				continue
			}
			// One wait for all the answers of an instruction, until the last is on the line: one
			// sleep per answer would add the scheduler's delay each time.
			time.Sleep(time.Until(last))
			if !b.write(ptmx, onTime) {
				return
			}
		}
	}
}

func (b *Bus) write(ptmx *os.File, data []byte) bool {
	b.writeMu.Lock()
	defer b.writeMu.Unlock()
	_, err := ptmx.Write(data)
	return err == nil
}

// handle executes one instruction that finished arriving at arrived plus its wire time, and
// returns the status packets the motors send back, each with when it is complete on the line.
func (b *Bus) handle(f frame, arrived time.Time) []answer {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	heard := arrived.Add(b.wire(f.size)) // the motors have the whole instruction
	baud := byte(slices.Index(baudRates[:], b.baud))
	var listeners []*motor
	for _, m := range b.motors {
		m.advance(now, b.opts.Speed)
		if m.listening(baud, now) {
			listeners = append(listeners, m)
		}
	}
	slices.SortFunc(listeners, func(x, y *motor) int { return int(x.id()) - int(y.id()) })
	find := func(id byte) *motor {
		for _, m := range listeners {
			if m.id() == id {
				return m
			}
		}
		return nil
	}
	b.instructions++
	// Answers go one after the other: each motor waits its return delay after the line is free.
	var out []answer
	cursor := heard
	reply := func(m *motor, errField byte, data []byte) {
		if m.table[addrHardwareError] != 0 {
			errField |= alertBit
		}
		p := statusPacket(m.id(), errField, data)
		cursor = cursor.Add(m.returnDelay() + b.wire(len(p)))
		a := answer{packet: p, due: cursor}
		switch {
		case m.lateSkip > 0:
			m.lateSkip--
		case len(m.lateBy) > 0:
			a.due, a.late, m.lateBy = a.due.Add(m.lateBy[0]), true, m.lateBy[1:]
		}
		out = append(out, a)
	}
	// A status for every instruction but READ and PING is sent at Status Return Level 2 only; a
	// READ's at 1 and 2; a PING's always (e-manual, Status Return Level).
	level := func(m *motor) byte { return m.table[addrStatusReturn] }

	if f.damaged {
		if m := find(f.id); m != nil && level(m) == 2 {
			reply(m, errCRC, nil)
		}
		return out
	}
	if f.id == broadcastID {
		pings := b.broadcast(f, listeners, heard, now, reply) // a sync read's answers come through reply
		return append(out, pings...)
	}
	m := find(f.id)
	if m == nil {
		return nil
	}
	switch f.inst {
	case instPing:
		reply(m, 0, []byte{m.table[addrModelNumber], m.table[addrModelNumber+1], m.table[addrFirmwareVersion]})
	case instRead:
		if level(m) == 0 {
			return nil
		}
		if len(f.params) != 4 {
			reply(m, errDataLength, nil)
			break
		}
		data, e := m.read(int(f.params[0])|int(f.params[1])<<8, int(f.params[2])|int(f.params[3])<<8)
		reply(m, e, data)
	case instWrite:
		answer := level(m) == 2 // the level it had when the write came, even one the write changes
		e := errDataLength
		if len(f.params) >= 3 {
			e = b.write1(m, int(f.params[0])|int(f.params[1])<<8, f.params[2:])
		}
		if answer {
			reply(m, e, nil)
		}
	case instReboot:
		if level(m) == 2 {
			reply(m, 0, nil)
		}
		m.reboot(now)
	default:
		// REG WRITE, ACTION, FACTORY RESET, CLEAR and the bulk instructions are not emulated (the
		// driver sends none of them): this motor says it does not know them.
		if level(m) == 2 {
			reply(m, errInstruction, nil)
		}
	}
	return out
}

// broadcast executes an instruction sent to every motor: only PING (answered here) and SYNC READ
// (answered through reply) get answers.
func (b *Bus) broadcast(f frame, listeners []*motor, heard, now time.Time, reply func(*motor, byte, []byte)) []answer {
	var out []answer
	switch f.inst {
	case instPing:
		// Every motor answers in its own slot, by ID, so that motors that do not know of each
		// other never talk at once: a status of PING (14 bytes) plus the longest return delay.
		slot := b.wire(14) + 254*2*time.Microsecond
		for _, m := range listeners {
			p := statusPacket(m.id(), b.alert(m), []byte{m.table[addrModelNumber], m.table[addrModelNumber+1], m.table[addrFirmwareVersion]})
			out = append(out, answer{packet: p, due: heard.Add(time.Duration(m.id())*slot + m.returnDelay() + b.wire(len(p)))})
		}
		return out
	case instWrite:
		if len(f.params) >= 3 {
			for _, m := range listeners {
				b.write1(m, int(f.params[0])|int(f.params[1])<<8, f.params[2:])
			}
		}
	case instSyncWrite:
		if len(f.params) < 4 {
			return nil
		}
		addr, n := int(f.params[0])|int(f.params[1])<<8, int(f.params[2])|int(f.params[3])<<8
		for rest := f.params[4:]; n > 0 && len(rest) >= 1+n; rest = rest[1+n:] {
			for _, m := range listeners {
				if m.id() == rest[0] {
					b.write1(m, addr, rest[1:1+n])
				}
			}
		}
	case instSyncRead:
		if len(f.params) < 4 {
			return nil
		}
		addr, n := int(f.params[0])|int(f.params[1])<<8, int(f.params[2])|int(f.params[3])<<8
		// The motors answer in the order of the packet's IDs, each after the one before it; a
		// motor that is absent leaves no gap.
		for _, id := range f.params[4:] {
			for _, m := range listeners {
				if m.id() == id && m.table[addrStatusReturn] >= 1 {
					data, e := m.read(addr, n)
					reply(m, e, data)
				}
			}
		}
	case instReboot:
		for _, m := range listeners {
			m.reboot(now)
		}
	}
	return nil
}

func (b *Bus) alert(m *motor) byte {
	if m.table[addrHardwareError] != 0 {
		return alertBit
	}
	return 0
}

// write1 applies a WRITE (or one motor's part of a SYNC WRITE) to m and counts refused goals.
func (b *Bus) write1(m *motor, addr int, data []byte) byte {
	e, refused := m.write(addr, data)
	if refused {
		b.goalsRefused++
	}
	return e
}

// RestingAt returns the motors' positions, by id, that put the robot in pose j: where Options.Rest
// starts them (the sleep pose, for a robot that was switched off).
func RestingAt(cfg *dynamixel.Config, j robot.Joints) (map[byte]int32, error) {
	legs, err := kinematics.Default().Inverse(kinematics.Pose(j.Head), j.BodyYaw)
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
