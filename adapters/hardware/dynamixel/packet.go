// Package dynamixel speaks Robotis' Dynamixel Protocol 2.0 on a half-duplex serial bus: instruction
// and status packets (CRC-16, byte stuffing, error bits), and a Bus that sends them with timeouts
// and bounded retries. It knows the control table of the XL330 motors the robot is built from,
// and the motors of a bus: their config, their setup (Bus.SetUp), the sync reads and writes a
// control loop drives them with, and their health as those reads see it (Motor).
//
// It lives in adapters/hardware, not core/: a motor vendor's wire protocol is not the robot domain,
// only the way the hardware backend (adapters/hardware) reaches the motors. Nobody outside this
// module needs it, and core/ keeps only what the domain is made of.
package dynamixel

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Instructions of Protocol 2.0.
const (
	InstPing      byte = 0x01
	InstRead      byte = 0x02
	InstWrite     byte = 0x03
	InstReboot    byte = 0x08
	InstStatus    byte = 0x55
	InstSyncRead  byte = 0x82
	InstSyncWrite byte = 0x83
)

// BroadcastID addresses every device on the bus.
const BroadcastID byte = 0xFE

var header = [4]byte{0xFF, 0xFF, 0xFD, 0x00}

// crcTable is the CRC-16 of every byte value for the polynomial x^16+x^15+x^2+1 (0x8005), MSB first,
// as Protocol 2.0 specifies; it is computed rather than transcribed so that it cannot hold a typo.
var crcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x8005
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// CRC16 continues the packet checksum crc over data (start with 0).
func CRC16(crc uint16, data []byte) uint16 {
	for _, b := range data {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^b]
	}
	return crc
}

// Packet is a decoded packet: an instruction, or a status (Instruction InstStatus, whose first
// parameter byte is the error field, split into Err).
type Packet struct {
	ID          byte
	Instruction byte
	Err         DeviceError // status packets only
	Params      []byte      // unstuffed; for a status, the data after the error byte
}

// AppendPacket appends the instruction packet (or, with InstStatus, a status packet whose error is
// params[0]) for id to dst: header, id, length, instruction, params with byte stuffing, CRC.
func AppendPacket(dst []byte, id, inst byte, params []byte) []byte {
	start := len(dst)
	dst = append(dst, header[:]...)
	dst = append(dst, id, 0, 0, inst)
	// Stuffing: any FF FF FD in the body is followed by an extra FD, so that it cannot be taken
	// for the start of a packet.
	for i, b := range params {
		dst = append(dst, b)
		if b == 0xFD && i >= 2 && params[i-1] == 0xFF && params[i-2] == 0xFF {
			dst = append(dst, 0xFD)
		}
	}
	// The length counts the instruction, the stuffed parameters and the CRC.
	binary.LittleEndian.PutUint16(dst[start+5:], uint16(len(dst)-start-7+2))
	crc := CRC16(0, dst[start:])
	return binary.LittleEndian.AppendUint16(dst, crc)
}

// Decoding errors. ErrIncomplete asks for more bytes; the others mean a damaged packet.
var (
	ErrIncomplete = errors.New("dynamixel: incomplete packet")
	ErrCRC        = errors.New("dynamixel: CRC mismatch")
	ErrMalformed  = errors.New("dynamixel: malformed packet")
)

// maxPacketLength bounds the length field: no packet this package sends or expects is longer,
// so a larger one is noise and must not make the reader wait for 64 KiB.
const maxPacketLength = 1024

// Decode finds the first packet in buf. It returns the packet and the number of bytes consumed.
// With ErrIncomplete, the n bytes before the start of a possible packet can be dropped and more
// bytes are needed; with ErrCRC or ErrMalformed, the n bytes of the damaged packet's start are to
// be dropped before decoding again.
func Decode(buf []byte) (p Packet, n int, err error) {
	start := indexHeader(buf)
	if start < 0 {
		// Keep a tail that may be the beginning of a header.
		keep := 0
		for k := min(3, len(buf)); k > 0; k-- {
			if string(buf[len(buf)-k:]) == string(header[:k]) {
				keep = k
				break
			}
		}
		return p, len(buf) - keep, ErrIncomplete
	}
	b := buf[start:]
	if len(b) < 8 {
		return p, start, ErrIncomplete
	}
	length := int(binary.LittleEndian.Uint16(b[5:7]))
	if length < 3 || length > maxPacketLength {
		return p, start + 1, ErrMalformed
	}
	total := 7 + length
	if len(b) < total {
		return p, start, ErrIncomplete
	}
	if CRC16(0, b[:total-2]) != binary.LittleEndian.Uint16(b[total-2:total]) {
		return p, start + 1, ErrCRC
	}
	p.ID, p.Instruction = b[4], b[7]
	body := b[8 : total-2]
	params := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		params = append(params, body[i])
		if body[i] == 0xFD && i >= 2 && body[i-1] == 0xFF && body[i-2] == 0xFF {
			if i+1 >= len(body) || body[i+1] != 0xFD {
				return p, start + 1, ErrMalformed // a sender always stuffs FF FF FD
			}
			i++ // the stuffed FD
		}
	}
	if p.Instruction == InstStatus {
		if len(params) < 1 {
			return p, start + 1, ErrMalformed
		}
		p.Err, params = DeviceError(params[0]), params[1:]
	}
	p.Params = params
	return p, start + total, nil
}

func indexHeader(buf []byte) int {
	for i := 0; i+4 <= len(buf); i++ {
		if buf[i] == 0xFF && buf[i+1] == 0xFF && buf[i+2] == 0xFD && buf[i+3] == 0x00 {
			return i
		}
	}
	return -1
}

// DeviceError is the error field of a status packet: bit 7 is the alert (the device has a
// hardware error: read its Hardware Error Status), bits 0-6 the processing error.
type DeviceError byte

// The processing errors of the error field.
const (
	ErrResultFail  DeviceError = 0x01
	ErrInstruction DeviceError = 0x02
	ErrCRCDevice   DeviceError = 0x03
	ErrDataRange   DeviceError = 0x04
	ErrDataLength  DeviceError = 0x05
	ErrDataLimit   DeviceError = 0x06
	ErrAccess      DeviceError = 0x07
	AlertBit       DeviceError = 0x80
)

// Alert reports the hardware-error alert bit.
func (e DeviceError) Alert() bool { return e&AlertBit != 0 }

// Code is the processing error, without the alert bit (0: none).
func (e DeviceError) Code() DeviceError { return e &^ AlertBit }

// Is lets errors.Is find a processing error whatever the alert bit says: a motor with a hardware
// error still refuses a write with ErrAccess. A target with the alert bit matches alerts only.
func (e DeviceError) Is(target error) bool {
	t, ok := target.(DeviceError)
	return ok && t.Code() == e.Code() && (!t.Alert() || e.Alert())
}

func (e DeviceError) Error() string {
	names := [8]string{"no processing error", "result fail", "instruction error", "CRC error (as received by the device)",
		"data range error", "data length error", "data limit error", "access error"}
	msg := fmt.Sprintf("error code %#x", byte(e.Code()))
	if e.Code() < 8 {
		msg = names[e.Code()]
	}
	if e.Alert() {
		msg += " (hardware error alert)"
	}
	return msg
}
