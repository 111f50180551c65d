package dynamixel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// Port is the serial line a Bus talks on. go.bug.st/serial's Port satisfies it. Read must return
// (0, nil) when the read timeout passes without data, and an error only when the line fails.
type Port interface {
	io.ReadWriter
	SetReadTimeout(t time.Duration) error
}

// ErrTimeout means that a device did not answer in time: it is silent, unpowered, or absent.
var ErrTimeout = errors.New("no answer")

// PortError is a failure of the serial line itself (a USB adapter unplugged): the Bus is unusable
// until the port is reopened.
type PortError struct{ Err error }

func (e *PortError) Error() string { return "serial port: " + e.Err.Error() }
func (e *PortError) Unwrap() error { return e.Err }

// MaxReturnDelay is the longest Return Delay Time a device can have (254 units of 2 µs): what the
// Bus allows a device whose own it has not been told.
const MaxReturnDelay = 254 * 2 * time.Microsecond

// statusOverhead is the length of a status packet without data: header (4), id, length (2),
// instruction, error, CRC (2).
const statusOverhead = 11

// Bus sends instructions and reads status packets on a Port. It is not safe for concurrent use:
// the bus is half duplex, so one transaction runs at a time.
//
// How long it waits for an answer follows the Dynamixel SDK's port handler
// (DynamixelSDK c++/src/dynamixel_sdk/port_handler_linux.cpp, PortHandlerLinux::setPacketTimeout:
// packet_timeout = tx_time_per_byte × packet_length + LATENCY_TIMER × 2 + 2.0 ms, with
// tx_time_per_byte = 1000 / baudrate × 10 ms, and packet_length the expected status length: data
// + 11 for a READ, 11 otherwise, (11 + data) × devices for a SYNC READ, in
// protocol2_packet_handler.cpp): the wire time of what is expected back at the line's baud rate,
// plus slack. Two differences, both measured against this robot: the wait also counts the
// instruction's own wire time and each answering device's Return Delay Time (the SDK's fixed 2 ms
// covers the factory 500 µs, our motors are set to 0), and the slack is Timeout (5 ms by default)
// instead of the SDK's 34 ms, which waits out a USB-serial adapter's 16 ms latency timer: the
// robot's adapter (1a86:55d3, cdc-acm) has none, and a 50 Hz loop has 20 ms a tick for all of it.
//
// An answer can still come after its wait: the Bus then waits out the line (until it has been
// quiet for Timeout) before it sends anything else, and takes a status only for the request it
// answers (its id, once, with the data length the instruction asked for), so that a late answer is
// never read as the answer to the next request.
type Bus struct {
	port Port
	// Timeout is the slack a device gets on top of the wire time of the instruction and of its
	// answer at Baud and its return delay.
	Timeout time.Duration
	// Retries is how many times a read, write or ping is sent again after a timeout or a damaged
	// answer. Sync instructions are not retried: the next control tick sends them again.
	Retries int
	Baud    int

	returnDelay [BroadcastID]time.Duration // by id: MaxReturnDelay until SetReturnDelay
	out, in     []byte
	chunk       [512]byte
}

// NewBus returns a Bus on port at baud (bits per second).
func NewBus(port Port, baud int) *Bus {
	b := &Bus{port: port, Timeout: 5 * time.Millisecond, Retries: 2, Baud: baud}
	for i := range b.returnDelay {
		b.returnDelay[i] = MaxReturnDelay
	}
	return b
}

// SetReturnDelay tells the Bus device id's Return Delay Time (its control table's value, in units
// of 2 µs), read from the device: its answers are awaited that much after the instruction.
func (b *Bus) SetReturnDelay(id, units byte) {
	if id < BroadcastID {
		b.returnDelay[id] = time.Duration(units) * 2 * time.Microsecond
	}
}

// wire is how long n bytes take on the line (10 bits a byte).
func (b *Bus) wire(n int) time.Duration {
	if b.Baud <= 0 {
		return 0
	}
	return time.Duration(n) * 10 * time.Second / time.Duration(b.Baud)
}

// send drops whatever is waiting on the line and sends an instruction.
func (b *Bus) send(id, inst byte, params []byte) error {
	b.in = b.in[:0]
	if err := b.port.SetReadTimeout(0); err != nil {
		return &PortError{err}
	}
	for {
		n, err := b.port.Read(b.chunk[:])
		if err != nil {
			return &PortError{err}
		}
		if n == 0 {
			break
		}
	}
	b.out = AppendPacket(b.out[:0], id, inst, params)
	if _, err := b.port.Write(b.out); err != nil {
		return &PortError{err}
	}
	return nil
}

// next returns the next status packet read before deadline. Bytes that are not packets (noise,
// the tail of an abandoned answer) are dropped. quiet, when not zero, ends the wait early once
// the line has said nothing for that long.
func (b *Bus) next(deadline time.Time, quiet time.Duration) (Packet, error) {
	for {
		for len(b.in) > 0 {
			p, n, err := Decode(b.in)
			b.in = b.in[n:]
			if errors.Is(err, ErrIncomplete) {
				break
			}
			if err == nil && p.Instruction == InstStatus {
				return p, nil
			}
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return Packet{}, ErrTimeout
		}
		if quiet > 0 {
			wait = min(wait, quiet)
		}
		if err := b.port.SetReadTimeout(wait); err != nil {
			return Packet{}, &PortError{err}
		}
		n, err := b.port.Read(b.chunk[:])
		if err != nil {
			return Packet{}, &PortError{err}
		}
		if n == 0 && quiet > 0 {
			return Packet{}, ErrTimeout // quiet for long enough
		}
		b.in = append(b.in, b.chunk[:n]...)
	}
}

// await reads status packets until one that want accepts arrives, or the line has been given
// until deadline and then waited out: after the deadline, whatever still comes is read until the
// line has been quiet for Timeout (at most 4 × Timeout), and a late answer to this request is
// still taken, since nothing else is outstanding. Packets want refuses (late answers to an earlier
// request, another device's) are dropped. It returns ErrTimeout when no answer came, or a
// PortError.
func (b *Bus) await(deadline time.Time, want func(Packet) bool) (Packet, error) {
	for {
		p, err := b.next(deadline, 0)
		if err != nil {
			if errors.Is(err, ErrTimeout) {
				break
			}
			return p, err
		}
		if want(p) {
			return p, nil
		}
	}
	end := time.Now().Add(4 * b.Timeout)
	for {
		p, err := b.next(end, b.Timeout)
		if err != nil {
			return p, err
		}
		if want(p) {
			return p, nil
		}
	}
}

// answers reports whether p is the answer of device id to an instruction that asked for n bytes
// back: from id, with n bytes of data, or with an error and none.
func answers(p Packet, id byte, n int) bool {
	return p.ID == id && (len(p.Params) == n || (p.Err.Code() != 0 && len(p.Params) == 0))
}

// transact sends one instruction to id and waits for its status, retrying lost or damaged
// answers. answer is the number of parameter bytes expected back.
func (b *Bus) transact(id, inst byte, params []byte, answer, attempts int) (Packet, error) {
	var err error
	for range attempts {
		if err = b.send(id, inst, params); err != nil {
			return Packet{}, err
		}
		deadline := time.Now().Add(b.wire(len(b.out)) + b.returnDelay[id] + b.wire(statusOverhead+answer) + b.Timeout)
		var p Packet
		p, err = b.await(deadline, func(p Packet) bool { return answers(p, id, answer) })
		if err == nil {
			if p.Err.Code() != 0 {
				return p, fmt.Errorf("motor %d: %w", id, p.Err)
			}
			return p, nil
		}
		if IsPortError(err) {
			return Packet{}, err
		}
	}
	return Packet{}, fmt.Errorf("motor %d: %w", id, err)
}

// Ping returns the model number of device id.
func (b *Bus) Ping(id byte) (model uint16, err error) {
	return b.ping(id, b.Retries+1)
}

// Probe pings device id once: a probe of a motor that went silent, which the next probe repeats.
func (b *Bus) Probe(id byte) (model uint16, err error) {
	return b.ping(id, 1)
}

func (b *Bus) ping(id byte, attempts int) (uint16, error) {
	p, err := b.transact(id, InstPing, nil, 3, attempts)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(p.Params), nil
}

// Read reads n bytes at addr of device id.
func (b *Bus) Read(id byte, addr uint16, n int) ([]byte, error) {
	p, err := b.transact(id, InstRead, []byte{byte(addr), byte(addr >> 8), byte(n), byte(n >> 8)}, n, b.Retries+1)
	if err != nil {
		return nil, err
	}
	return p.Params, nil
}

// Write writes data at addr of device id and waits for its acknowledgement.
func (b *Bus) Write(id byte, addr uint16, data []byte) error {
	params := append([]byte{byte(addr), byte(addr >> 8)}, data...)
	_, err := b.transact(id, InstWrite, params, 0, b.Retries+1)
	return err
}

// Reboot restarts device id, as turning its power off and on would: the only way to clear its
// hardware errors. It acknowledges, then hears nothing while it boots; its RAM items (torque,
// goals, gains) are back to their power-on values.
func (b *Bus) Reboot(id byte) error {
	_, err := b.transact(id, InstReboot, nil, 0, b.Retries+1)
	return err
}

// SyncWrite writes len(data[i]) bytes at addr of each device ids[i] in one broadcast packet; no
// device answers it. Every data[i] must have the same length.
func (b *Bus) SyncWrite(addr uint16, ids []byte, data [][]byte) error {
	if len(ids) != len(data) || len(ids) == 0 {
		return fmt.Errorf("dynamixel: sync write of %d ids with %d values", len(ids), len(data))
	}
	n := len(data[0])
	params := make([]byte, 0, 4+len(ids)*(1+n))
	params = append(params, byte(addr), byte(addr>>8), byte(n), byte(n>>8))
	for i, id := range ids {
		if len(data[i]) != n {
			return fmt.Errorf("dynamixel: sync write: motor %d gets %d bytes, want %d", id, len(data[i]), n)
		}
		params = append(params, id)
		params = append(params, data[i]...)
	}
	return b.send(BroadcastID, InstSyncWrite, params)
}

// SyncResult is one device's answer to a sync read.
type SyncResult struct {
	Data []byte
	Err  error // ErrTimeout when it did not answer; a DeviceError when it refused
	// Alert is the hardware-error alert of the answer's error field.
	Alert bool
}

// SyncRead reads n bytes at addr of every device of ids with one instruction; the devices answer
// one after the other, each after its return delay. A device that does not answer gets ErrTimeout
// without delaying the others beyond the common deadline. Only a PortError is returned as err.
func (b *Bus) SyncRead(addr uint16, n int, ids []byte) ([]SyncResult, error) {
	params := make([]byte, 0, 4+len(ids))
	params = append(params, byte(addr), byte(addr>>8), byte(n), byte(n>>8))
	params = append(params, ids...)
	if err := b.send(BroadcastID, InstSyncRead, params); err != nil {
		return nil, err
	}
	res := make([]SyncResult, len(ids))
	index := make(map[byte]int, len(ids))
	wait := b.wire(len(b.out)) + b.Timeout
	for i, id := range ids {
		index[id] = i
		res[i].Err = ErrTimeout
		wait += b.returnDelay[id] + b.wire(statusOverhead+n)
	}
	deadline := time.Now().Add(wait)
	for missing := len(ids); missing > 0; missing-- {
		p, err := b.await(deadline, func(p Packet) bool {
			i, ok := index[p.ID]
			return ok && res[i].Err == ErrTimeout && answers(p, p.ID, n)
		})
		switch {
		case IsPortError(err):
			return nil, err
		case err != nil:
			return res, nil // the silent ones keep ErrTimeout
		}
		r := &res[index[p.ID]]
		r.Alert = p.Err.Alert()
		if p.Err.Code() != 0 {
			r.Err = p.Err
		} else {
			r.Data, r.Err = p.Params, nil
		}
	}
	return res, nil
}

// Scan pings every device at once (a broadcast PING) and returns the ids that answered, in the
// order they did. It waits as the Dynamixel SDK's broadcastPing does (protocol2_packet_handler.cpp:
// 14-byte statuses of 252 ids at the line's speed, plus 3 ms an id and 16 ms): 0.8 s at 1 Mbaud.
func (b *Bus) Scan() ([]byte, error) {
	if err := b.send(BroadcastID, InstPing, nil); err != nil {
		return nil, err
	}
	const maxID = 252
	deadline := time.Now().Add(b.wire(14*maxID) + maxID*3*time.Millisecond + 16*time.Millisecond)
	var ids []byte
	for {
		p, err := b.next(deadline, 0)
		switch {
		case IsPortError(err):
			return nil, err
		case err != nil:
			return ids, nil
		case len(p.Params) == 3:
			ids = append(ids, p.ID)
		}
	}
}
