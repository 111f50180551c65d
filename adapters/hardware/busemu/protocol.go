package busemu

// The emulator's own reading of Protocol 2.0 (Robotis e-manual, "DYNAMIXEL Protocol 2.0"),
// written from the spec rather than shared with the driver (adapters/hardware/dynamixel), so that
// a mistake in the driver's packet code shows up as a motor that does not understand it:
//
//	FF FF FD 00 | ID | LEN_L LEN_H | INST | PARAM ... | CRC_L CRC_H
//
// LEN counts the bytes after it: the instruction, the parameters as sent (stuffed) and the CRC.
// Byte stuffing: wherever FF FF FD appears from the instruction on, the sender adds an FD after it,
// and the receiver drops it. The CRC is CRC-16 with polynomial x^16 + x^15 + x^2 + 1 (0x8005),
// initial value 0, not reflected, over every byte from the header to the last parameter, sent
// little-endian.

// Instructions and the status (Protocol 2.0, "Instruction").
const (
	instPing      byte = 0x01
	instRead      byte = 0x02
	instWrite     byte = 0x03
	instRegWrite  byte = 0x04
	instAction    byte = 0x05
	instReset     byte = 0x06
	instReboot    byte = 0x08
	instClear     byte = 0x10
	instStatus    byte = 0x55
	instSyncRead  byte = 0x82
	instSyncWrite byte = 0x83
	instBulkRead  byte = 0x92
	instBulkWrite byte = 0x93
)

// broadcastID addresses every device: none answers, except to PING.
const broadcastID byte = 0xFE

// The error field of a status packet (Protocol 2.0, "Status Packet", Error).
const (
	errResultFail  byte = 0x01
	errInstruction byte = 0x02
	errCRC         byte = 0x03
	errDataRange   byte = 0x04
	errDataLength  byte = 0x05
	errDataLimit   byte = 0x06
	errAccess      byte = 0x07
	alertBit       byte = 0x80
)

// maxFrameLength bounds LEN: a longer one is noise, not a packet to wait for.
const maxFrameLength = 1024

// crc16 is the spec's CRC, bit by bit: slow, and unlike the driver's table, obviously the spec.
func crc16(data []byte) uint16 {
	var crc uint16
	for _, b := range data {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x8005
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// stuff appends body (instruction and parameters) to dst with an FD after every FF FF FD.
func stuff(dst, body []byte) []byte {
	for i, b := range body {
		dst = append(dst, b)
		if i >= 2 && b == 0xFD && body[i-1] == 0xFF && body[i-2] == 0xFF {
			dst = append(dst, 0xFD)
		}
	}
	return dst
}

// unstuff drops the FD that follows every FF FF FD; ok is false when one is missing.
func unstuff(body []byte) (out []byte, ok bool) {
	out = make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		out = append(out, body[i])
		if i >= 2 && body[i] == 0xFD && body[i-1] == 0xFF && body[i-2] == 0xFF {
			if i+1 == len(body) || body[i+1] != 0xFD {
				return nil, false
			}
			i++
		}
	}
	return out, true
}

// statusPacket encodes the status of device id: its error field, then data.
func statusPacket(id, errField byte, data []byte) []byte {
	body := append([]byte{instStatus, errField}, data...)
	p := []byte{0xFF, 0xFF, 0xFD, 0x00, id, 0, 0}
	p = stuff(p, body)
	n := len(p) - 7 + 2
	p[5], p[6] = byte(n), byte(n>>8)
	crc := crc16(p)
	return append(p, byte(crc), byte(crc>>8))
}

// frame is an instruction packet as a device reads it off the line.
type frame struct {
	id, inst byte
	params   []byte // unstuffed
	damaged  bool   // its CRC (or stuffing) is wrong: the device answers a CRC error, nothing else
	size     int    // bytes on the wire
}

// nextFrame finds the first packet in buf: the frame, the bytes consumed, and whether one was
// found. Without one, used says how many leading bytes cannot begin a packet.
func nextFrame(buf []byte) (f frame, used int, found bool) {
	start := -1
	for i := 0; i+4 <= len(buf); i++ {
		if buf[i] == 0xFF && buf[i+1] == 0xFF && buf[i+2] == 0xFD && buf[i+3] == 0x00 {
			start = i
			break
		}
	}
	if start < 0 {
		keep := 0 // a tail that may begin a header
		for k := min(3, len(buf)); k > 0; k-- {
			if string(buf[len(buf)-k:]) == string([]byte{0xFF, 0xFF, 0xFD}[:k]) {
				keep = k
				break
			}
		}
		return f, len(buf) - keep, false
	}
	b := buf[start:]
	if len(b) < 7 {
		return f, start, false
	}
	n := int(b[5]) | int(b[6])<<8
	if n < 3 || n > maxFrameLength {
		return f, start + 1, false // not a packet: look for the next header
	}
	if len(b) < 7+n {
		return f, start, false
	}
	f = frame{id: b[4], inst: b[7], size: 7 + n}
	body, ok := unstuff(b[7 : 7+n-2])
	crc := uint16(b[7+n-2]) | uint16(b[7+n-1])<<8
	if !ok || crc16(b[:7+n-2]) != crc {
		f.damaged = true
		return f, start + 7 + n, true
	}
	f.params = body[1:]
	return f, start + 7 + n, true
}
