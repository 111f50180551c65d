package busemu_test

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"go.bug.st/serial"

	"github.com/robothub/robothub/adapters/hardware"
	"github.com/robothub/robothub/adapters/hardware/busemu"
	"github.com/robothub/robothub/adapters/hardware/dynamixel"
)

// host is a controller on the emulated line that sends raw instruction packets and reads raw
// status packets, to see exactly what the motors say.
type host struct {
	t    *testing.T
	port serial.Port
	in   []byte
	sent time.Time
}

func startBus(t *testing.T, opts busemu.Options) (*busemu.Bus, *host) {
	t.Helper()
	if opts.Config == nil {
		opts.Config = hardware.DefaultConfig()
	}
	opts.Dir = t.TempDir()
	emu, err := busemu.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	port, err := serial.Open(emu.Path(), &serial.Mode{BaudRate: opts.Config.Baud})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { port.Close() })
	return emu, &host{t: t, port: port}
}

// raw sends bytes as they are.
func (h *host) raw(b []byte) {
	h.t.Helper()
	h.sent = time.Now()
	if _, err := h.port.Write(b); err != nil {
		h.t.Fatal(err)
	}
}

// send sends an instruction packet, encoded by the driver's code (not the emulator's).
func (h *host) send(id, inst byte, params ...byte) {
	h.t.Helper()
	h.raw(dynamixel.AppendPacket(nil, id, inst, params))
}

// rawStatus returns the bytes of the next status packet on the line (waiting at most 2 s), and
// when it was complete.
func (h *host) rawStatus() ([]byte, time.Time) {
	h.t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	chunk := make([]byte, 256)
	for {
		if i := bytes.Index(h.in, []byte{0xFF, 0xFF, 0xFD, 0x00}); i >= 0 && len(h.in) >= i+7 {
			total := 7 + int(binary.LittleEndian.Uint16(h.in[i+5:]))
			if len(h.in) >= i+total {
				raw := append([]byte(nil), h.in[i:i+total]...)
				h.in = h.in[i+total:]
				return raw, time.Now()
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("no status packet within 2 s (have % X)", h.in)
		}
		h.port.SetReadTimeout(time.Until(deadline))
		n, err := h.port.Read(chunk)
		if err != nil {
			h.t.Fatal(err)
		}
		h.in = append(h.in, chunk[:n]...)
	}
}

// status returns the next status packet, decoded by the driver's code.
func (h *host) status() dynamixel.Packet {
	h.t.Helper()
	raw, _ := h.rawStatus()
	p, _, err := dynamixel.Decode(raw)
	if err != nil || p.Instruction != dynamixel.InstStatus {
		h.t.Fatalf("status % X: %v", raw, err)
	}
	return p
}

// nextIsPingOf proves that nothing was answered before: it pings id and the next status on the
// line must be that ping's.
func (h *host) nextIsPingOf(id byte, what string) {
	h.t.Helper()
	h.send(id, dynamixel.InstPing)
	if p := h.status(); p.ID != id || len(p.Params) != 3 {
		h.t.Fatalf("%s: the line carried a status from %d with % X before the ping's", what, p.ID, p.Params)
	}
}

func (h *host) read(id byte, addr uint16, n int) dynamixel.Packet {
	h.t.Helper()
	h.send(id, dynamixel.InstRead, byte(addr), byte(addr>>8), byte(n), byte(n>>8))
	return h.status()
}

func (h *host) write(id byte, addr uint16, data ...byte) dynamixel.Packet {
	h.t.Helper()
	h.send(id, dynamixel.InstWrite, append([]byte{byte(addr), byte(addr >> 8)}, data...)...)
	return h.status()
}

// What the driver has no name for.
const (
	addrStatusReturn   = 68  // Status Return Level
	addrPresentCurrent = 126 // Present Current
	instReboot         = 0x08
)

func le32(v int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }
func le16(v int16) []byte { return binary.LittleEndian.AppendUint16(nil, uint16(v)) }

// The e-manual's PING example, byte for byte: FF FF FD 00 01 03 00 01 19 4E to the device with id
// 1, and its status FF FF FD 00 01 07 00 55 00 <model> <firmware> <CRC>.
func TestEmulatorAnswersTheSpecsPingExample(t *testing.T) {
	cfg := hardware.DefaultConfig()
	cfg.Motors[0].ID = 1
	_, h := startBus(t, busemu.Options{Config: cfg})
	h.raw([]byte{0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x03, 0x00, 0x01, 0x19, 0x4E})
	got, _ := h.rawStatus()
	want := []byte{0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x07, 0x00, 0x55, 0x00, 0xB0, 0x04, 0x2E} // XL330-M288: model 1200, firmware 46
	want = binary.LittleEndian.AppendUint16(want, dynamixel.CRC16(0, want))
	if !bytes.Equal(got, want) {
		t.Fatalf("status % X, want % X", got, want)
	}
}

// A value whose bytes hold FF FF FD is stuffed on the way in and on the way back.
func TestEmulatorUnstuffsAndStuffs(t *testing.T) {
	_, h := startBus(t, busemu.Options{})
	offset := int32(-131073) // FF FF FD FF little-endian
	if p := h.write(11, dynamixel.AddrHomingOffset, le32(offset)...); p.Err != 0 {
		t.Fatalf("write: %v", p.Err)
	}
	h.send(11, dynamixel.InstRead, byte(dynamixel.AddrHomingOffset), 0, 4, 0)
	raw, _ := h.rawStatus()
	if !bytes.Contains(raw, []byte{0xFF, 0xFF, 0xFD, 0xFD, 0xFF}) || len(raw) != 11+4+1 {
		t.Fatalf("answer % X: want the data's FF FF FD stuffed with an FD (16 bytes)", raw)
	}
	if p, _, err := dynamixel.Decode(raw); err != nil || dynamixel.Int32(p.Params) != offset {
		t.Fatalf("answer decodes to % X, %v", p.Params, err)
	}
}

// Every write is checked as the firmware checks it, and a refused one changes nothing.
func TestEmulatorEnforcesTheControlTable(t *testing.T) {
	_, h := startBus(t, busemu.Options{})
	const id = 11 // stewart_1: limits [1502, 2958], current limit 1750
	for _, c := range []struct {
		what string
		addr uint16
		data []byte
		want dynamixel.DeviceError
	}{
		{"half of Homing Offset", dynamixel.AddrHomingOffset, []byte{1, 2}, dynamixel.ErrDataLength},
		{"from the middle of Homing Offset", dynamixel.AddrHomingOffset + 1, []byte{1}, dynamixel.ErrAccess},
		{"a reserved address (14)", 14, []byte{0}, dynamixel.ErrAccess},
		{"Present Position (read-only)", dynamixel.AddrPresentPosition, le32(2000), dynamixel.ErrAccess},
		{"Hardware Error Status (read-only)", dynamixel.AddrHardwareError, []byte{0}, dynamixel.ErrAccess},
		{"Operating Mode 7 (no such mode)", dynamixel.AddrOperatingMode, []byte{7}, dynamixel.ErrDataRange},
		{"Status Return Level 3", addrStatusReturn, []byte{3}, dynamixel.ErrDataRange},
		{"Position P Gain 20000", dynamixel.AddrPositionPGain, le16(20000), dynamixel.ErrDataRange},
		{"Current Limit 1000", 38, le16(1000), 0},
		{"Goal Current 1800, beyond what the item holds", dynamixel.AddrGoalCurrent, le16(1800), dynamixel.ErrDataRange},
		{"Goal Current 1200, beyond the Current Limit", dynamixel.AddrGoalCurrent, le16(1200), dynamixel.ErrDataLimit},
		{"Goal Position beyond Max Position Limit", dynamixel.AddrGoalPosition, le32(3000), dynamixel.ErrDataLimit},
		{"Goal Position below Min Position Limit", dynamixel.AddrGoalPosition, le32(1000), dynamixel.ErrDataLimit},
		{"past the end of the table", 147, []byte{0, 0}, dynamixel.ErrAccess},
	} {
		if p := h.write(id, c.addr, c.data...); p.Err.Code() != c.want {
			t.Errorf("write %s: error field %#x (%v), want %v", c.what, byte(p.Err), p.Err, c.want)
		}
	}
	if p := h.read(id, dynamixel.AddrHomingOffset, 4); dynamixel.Int32(p.Params) != 1024 {
		t.Errorf("a refused write changed the homing offset to %d", dynamixel.Int32(p.Params))
	}
	// Several whole items in one write are fine; EEPROM is locked once the torque is on.
	if p := h.write(id, dynamixel.AddrPositionDGain, append(le16(10), append(le16(20), le16(300)...)...)...); p.Err != 0 {
		t.Errorf("D, I and P gains in one write: %v", p.Err)
	}
	if p := h.write(id, dynamixel.AddrTorqueEnable, 1); p.Err != 0 {
		t.Fatalf("torque on: %v", p.Err)
	}
	if p := h.write(id, dynamixel.AddrOperatingMode, 5); p.Err.Code() != dynamixel.ErrAccess {
		t.Errorf("operating mode with the torque on: %v, want an access error", p.Err)
	}
	if p := h.write(id, dynamixel.AddrGoalPosition, le32(2100)...); p.Err != 0 {
		t.Errorf("goal within the limits: %v", p.Err)
	}
	// Reads may span reserved addresses (they read as 0), not the end of the table.
	if p := h.read(id, 12, 10); p.Err != 0 || len(p.Params) != 10 || !bytes.Equal(p.Params[2:8], make([]byte, 6)) {
		t.Errorf("read 12..21: % X, %v", p.Params, p.Err)
	}
	if p := h.read(id, 140, 10); p.Err.Code() != dynamixel.ErrAccess {
		t.Errorf("read past the table: %v, want an access error", p.Err)
	}
	// A damaged packet addressed to a motor gets a CRC error back.
	bad := dynamixel.AppendPacket(nil, id, dynamixel.InstPing, nil)
	bad[len(bad)-1] ^= 0x55
	h.raw(bad)
	if p := h.status(); p.ID != id || p.Err.Code() != dynamixel.ErrCRCDevice {
		t.Errorf("damaged ping: %+v, want a CRC error", p)
	}
}

// A motor waits its Return Delay Time before it answers, and the answer takes its wire time.
func TestEmulatorHonoursReturnDelayAndBaudRate(t *testing.T) {
	_, h := startBus(t, busemu.Options{})
	if p := h.write(12, dynamixel.AddrReturnDelayTime, 254); p.Err != 0 {
		t.Fatal(p.Err)
	}
	// The ping (10 bytes) and its status (14) at 1 Mbaud, and 508 µs of return delay: it cannot be
	// faster, whatever the machine.
	const least = 508*time.Microsecond + 24*10*time.Microsecond
	for range 5 {
		h.send(12, dynamixel.InstPing)
		if _, done := h.rawStatus(); done.Sub(h.sent) < least {
			t.Fatalf("ping answered after %v, before its return delay and wire time (%v)", done.Sub(h.sent), least)
		}
	}
	// A motor set to another baud rate no longer understands the line.
	if p := h.write(13, 8, 1); p.Err != 0 { // Baud Rate 1: 57,600
		t.Fatal(p.Err)
	}
	h.send(13, dynamixel.InstPing)
	h.nextIsPingOf(14, "a motor at 57,600 baud pinged at 1 Mbaud")
}

// Status Return Level 1 answers PING and READ only; 0, PING only.
func TestEmulatorStatusReturnLevel(t *testing.T) {
	_, h := startBus(t, busemu.Options{})
	if p := h.write(15, addrStatusReturn, 1); p.Err != 0 {
		t.Fatal(p.Err)
	}
	h.send(15, dynamixel.InstWrite, byte(dynamixel.AddrPositionPGain), 0, 100, 0)
	h.nextIsPingOf(15, "a write at level 1")
	if p := h.read(15, dynamixel.AddrPositionPGain, 2); p.ID != 15 || binary.LittleEndian.Uint16(p.Params) != 100 {
		t.Fatalf("read at level 1: %+v", p)
	}
	h.send(15, dynamixel.InstWrite, byte(addrStatusReturn), 0, 0)
	h.nextIsPingOf(16, "the write to level 0")
	h.send(15, dynamixel.InstRead, byte(dynamixel.AddrPresentPosition), 0, 4, 0)
	h.nextIsPingOf(15, "a read at level 0")
}

// A broadcast PING is answered by every motor, in the order of their ids; a broadcast WRITE reaches
// every motor and none answers it.
func TestEmulatorBroadcasts(t *testing.T) {
	_, h := startBus(t, busemu.Options{})
	h.send(dynamixel.BroadcastID, dynamixel.InstPing)
	for id := byte(10); id <= 18; id++ {
		if p := h.status(); p.ID != id || binary.LittleEndian.Uint16(p.Params) != dynamixel.ModelXL330M288 {
			t.Fatalf("broadcast ping: status %+v, want motor %d's", p, id)
		}
	}
	h.send(dynamixel.BroadcastID, dynamixel.InstWrite, 65, 0, 1) // LED on
	h.nextIsPingOf(10, "a broadcast write")
	for id := byte(10); id <= 18; id++ {
		if p := h.read(id, 65, 1); p.Params[0] != 1 {
			t.Errorf("motor %d: LED %d after a broadcast write", id, p.Params[0])
		}
	}
}

// A hardware error turns the torque off when the Shutdown mask says so, marks every status with
// the alert, keeps the torque off, and stays until a REBOOT.
func TestEmulatorHardwareErrorsLastUntilReboot(t *testing.T) {
	emu, h := startBus(t, busemu.Options{})
	const id = 17 // shutdown mask 52: overheating, electrical shock, overload
	h.write(id, dynamixel.AddrTorqueEnable, 1)
	emu.SetTemperature(id, 75) // its Temperature Limit is 70 °C
	if p := h.read(id, dynamixel.AddrTorqueEnable, 7); !p.Err.Alert() || p.Params[0] != 0 || p.Params[6] != 0x04 {
		t.Fatalf("overheated: %+v, want the alert, the torque off, Hardware Error Status 0x04", p)
	}
	emu.SetTemperature(id, 30)
	if p := h.write(id, dynamixel.AddrTorqueEnable, 1); p.Err.Code() != dynamixel.ErrResultFail || !p.Err.Alert() {
		t.Fatalf("torque on after cooling down: %v, want it refused until a reboot", p.Err)
	}
	emu.SetVoltage(id, 3.0) // below its Min Voltage Limit (3.5 V): recorded, not in the mask
	if p := h.read(id, dynamixel.AddrHardwareError, 1); p.Params[0] != 0x05 {
		t.Fatalf("Hardware Error Status %#x after a voltage sag, want 0x05", p.Params[0])
	}
	emu.SetVoltage(id, 5.0)
	h.write(id, addrStatusReturn, 1)
	h.send(id, dynamixel.InstWrite, byte(addrStatusReturn), 0, 2)
	h.nextIsPingOf(id, "the write back to level 2")

	h.send(id, instReboot)
	if p := h.status(); p.ID != id || p.Err.Code() != 0 {
		t.Fatalf("reboot: %+v", p)
	}
	// It boots, then answers again: errors gone, torque off, RAM at its power-on values.
	deadline := time.Now().Add(2 * time.Second)
	for emu.HardwareError(id) != 0 || !h.pingAnswered(id) {
		if time.Now().After(deadline) {
			t.Fatal("the motor did not come back from its reboot")
		}
	}
	if p := h.read(id, dynamixel.AddrTorqueEnable, 7); p.Err != 0 || p.Params[0] != 0 || p.Params[6] != 0 {
		t.Fatalf("after the reboot: %+v, want no alert, the torque off, no error", p)
	}
	if p := h.write(id, dynamixel.AddrTorqueEnable, 1); p.Err != 0 {
		t.Fatalf("torque on after the reboot: %v", p.Err)
	}
	// An overload (in the mask) on a motor that holds: its torque goes off, the alert comes.
	h.write(10, dynamixel.AddrTorqueEnable, 1)
	emu.RaiseHardwareError(10, 0x20)
	if p := h.read(10, dynamixel.AddrTorqueEnable, 7); !p.Err.Alert() || p.Params[0] != 0 || p.Params[6] != 0x20 {
		t.Fatalf("overload: %+v, want the alert, the torque off, Hardware Error Status 0x20", p)
	}
}

// pingAnswered pings id and reports whether the status that comes back is id's (a rebooting motor
// says nothing: another motor's ping, sent after, proves it).
func (h *host) pingAnswered(id byte) bool {
	h.t.Helper()
	other := byte(10)
	if id == other {
		other = 11
	}
	h.send(id, dynamixel.InstPing)
	h.send(other, dynamixel.InstPing)
	p := h.status()
	if p.ID == id {
		h.status() // the other's
		return true
	}
	return false
}

// A late answer comes after the answers to the instructions sent after it.
func TestEmulatorAnswersLate(t *testing.T) {
	emu, h := startBus(t, busemu.Options{})
	emu.DelayAnswers(11, 0, 30*time.Millisecond)
	h.send(11, dynamixel.InstRead, byte(dynamixel.AddrHomingOffset), 0, 4, 0)
	sent := h.sent
	if p := h.read(12, dynamixel.AddrHomingOffset, 4); p.ID != 12 || dynamixel.Int32(p.Params) != -1024 {
		t.Fatalf("the next read: %+v, want motor 12's homing offset, -1024", p)
	}
	raw, at := h.rawStatus()
	p, _, _ := dynamixel.Decode(raw)
	if p.ID != 11 || dynamixel.Int32(p.Params) != 1024 || at.Sub(sent) < 30*time.Millisecond {
		t.Fatalf("late answer %+v after %v, want motor 11's homing offset after 30 ms", p, at.Sub(sent))
	}
	if p := h.read(11, dynamixel.AddrHomingOffset, 4); p.ID != 11 {
		t.Fatalf("the answer after the late one: %+v", p)
	}
}

// Goal and present position move under the velocity profile; the load shows in Present Current.
func TestEmulatorMovesUnderAProfile(t *testing.T) {
	emu, h := startBus(t, busemu.Options{})
	const id = 10
	h.write(id, 112, le32(20)...) // Profile Velocity 20 × 0.229 rpm: 312 ticks/s
	h.write(id, dynamixel.AddrTorqueEnable, 1)
	h.write(id, dynamixel.AddrGoalPosition, le32(2048+300)...)
	// Cruising at the profile's velocity, moving, not there yet.
	deadline := time.Now().Add(3 * time.Second)
	for {
		p := h.read(id, 122, 14) // Moving (122) .. Present Position (132..135)
		moving, velocity := p.Params[0], int32(binary.LittleEndian.Uint32(p.Params[6:]))
		pos := dynamixel.Int32(p.Params[10:])
		if moving == 1 && velocity == 20 && pos > 2048 && pos < 2348 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("moving %d at velocity %d, position %d: want it cruising at 20 toward 2348", moving, velocity, pos)
		}
	}
	for emu.Position(id) != 2348 {
		if time.Now().After(deadline) {
			t.Fatalf("at %d, never reached 2348", emu.Position(id))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Current-based position with a small goal current: a hand's push shows as load, capped.
	h.write(id, dynamixel.AddrTorqueEnable, 0)
	h.write(id, dynamixel.AddrOperatingMode, 5)
	h.write(id, dynamixel.AddrGoalCurrent, le16(100)...)
	h.write(id, dynamixel.AddrTorqueEnable, 1)
	emu.Push(id, 300)
	if p := h.read(id, addrPresentCurrent, 2); int16(binary.LittleEndian.Uint16(p.Params)) != -100 {
		t.Fatalf("Present Current %d mA while pushed, want -100 (the goal current, against the push)", int16(binary.LittleEndian.Uint16(p.Params)))
	}
	if p := h.read(id, dynamixel.AddrPresentVoltage, 3); binary.LittleEndian.Uint16(p.Params) != 50 || p.Params[2] != 30 {
		t.Fatalf("voltage and temperature % X, want 5.0 V and 30 °C", p.Params)
	}
}
