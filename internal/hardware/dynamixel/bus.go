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

// Bus sends instructions and reads status packets on a Port. It is not safe for concurrent use:
// the bus is half duplex, so one transaction runs at a time.
type Bus struct {
	port Port
	// Timeout is how long a device gets to start answering, on top of the time the answer takes
	// on the wire at Baud.
	Timeout time.Duration
	// Retries is how many times a read, write or ping is sent again after a timeout or a damaged
	// answer. Sync instructions are not retried: the next control tick sends them again.
	Retries int
	Baud    int

	out, in []byte
	chunk   [512]byte
}

// NewBus returns a Bus on port at baud (bits per second).
func NewBus(port Port, baud int) *Bus {
	return &Bus{port: port, Timeout: 5 * time.Millisecond, Retries: 2, Baud: baud}
}

// wire is how long n bytes take on the line (10 bits a byte).
func (b *Bus) wire(n int) time.Duration {
	if b.Baud <= 0 {
		return 0
	}
	return time.Duration(n) * 10 * time.Second / time.Duration(b.Baud)
}

// send drops whatever is waiting on the line (late answers to an abandoned instruction would be
// taken for answers to this one) and sends an instruction.
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
// the tail of an abandoned answer) are dropped.
func (b *Bus) next(deadline time.Time) (Packet, error) {
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
		if err := b.port.SetReadTimeout(wait); err != nil {
			return Packet{}, &PortError{err}
		}
		n, err := b.port.Read(b.chunk[:])
		if err != nil {
			return Packet{}, &PortError{err}
		}
		b.in = append(b.in, b.chunk[:n]...)
	}
}

// receive reads status packets until the answer of id (answer bytes of data, or an error
// without data) arrives or the deadline passes. Late answers to an earlier, abandoned
// instruction, from id or another device, are dropped.
func (b *Bus) receive(id byte, answer int, deadline time.Time) (Packet, error) {
	for {
		p, err := b.next(deadline)
		if err != nil || (p.ID == id && (len(p.Params) == answer || p.Err.Code() != 0)) {
			return p, err
		}
	}
}

// transact sends one instruction to id and waits for its status, retrying lost or damaged
// answers. answer is the number of parameter bytes expected back.
func (b *Bus) transact(id, inst byte, params []byte, answer int) (Packet, error) {
	var err error
	for range b.Retries + 1 {
		if err = b.send(id, inst, params); err != nil {
			return Packet{}, err
		}
		var p Packet
		p, err = b.receive(id, answer, time.Now().Add(b.wire(len(b.out)+11+answer)+b.Timeout))
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
	p, err := b.transact(id, InstPing, nil, 3)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(p.Params), nil
}

// Read reads n bytes at addr of device id.
func (b *Bus) Read(id byte, addr uint16, n int) ([]byte, error) {
	p, err := b.transact(id, InstRead, []byte{byte(addr), byte(addr >> 8), byte(n), byte(n >> 8)}, n)
	if err != nil {
		return nil, err
	}
	return p.Params, nil
}

// Write writes data at addr of device id and waits for its acknowledgement.
func (b *Bus) Write(id byte, addr uint16, data []byte) error {
	params := append([]byte{byte(addr), byte(addr >> 8)}, data...)
	_, err := b.transact(id, InstWrite, params, 0)
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
// one after the other. A device that does not answer gets ErrTimeout without delaying the others
// beyond the common deadline. Only a PortError is returned as err.
func (b *Bus) SyncRead(addr uint16, n int, ids []byte) ([]SyncResult, error) {
	params := make([]byte, 0, 4+len(ids))
	params = append(params, byte(addr), byte(addr>>8), byte(n), byte(n>>8))
	params = append(params, ids...)
	if err := b.send(BroadcastID, InstSyncRead, params); err != nil {
		return nil, err
	}
	res := make([]SyncResult, len(ids))
	index := make(map[byte]int, len(ids))
	for i, id := range ids {
		index[id] = i
		res[i].Err = ErrTimeout
	}
	deadline := time.Now().Add(b.wire(len(b.out)+len(ids)*(11+n)) + b.Timeout)
	for missing := len(ids); missing > 0; {
		p, err := b.next(deadline)
		switch {
		case IsPortError(err):
			return nil, err
		case err != nil:
			return res, nil // the deadline: the silent ones keep ErrTimeout
		}
		i, ok := index[p.ID]
		if !ok || res[i].Err != ErrTimeout || (p.Err.Code() == 0 && len(p.Params) != n) {
			continue // a late answer to an earlier instruction
		}
		missing--
		r := &res[i]
		r.Alert = p.Err.Alert()
		if p.Err.Code() != 0 {
			r.Err = p.Err
		} else {
			r.Data, r.Err = p.Params, nil
		}
	}
	return res, nil
}
