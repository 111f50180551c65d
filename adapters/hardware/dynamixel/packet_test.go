package dynamixel

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The examples of the Protocol 2.0 page of the Robotis e-manual, byte for byte.
var publishedPackets = []struct {
	name   string
	id     byte
	inst   byte
	params string
	bytes  string
}{
	{"ping id 1", 1, InstPing, "", "FF FF FD 00 01 03 00 01 19 4E"},
	{"ping status: model 1030, firmware 38", 1, InstStatus, "00 06 04 26", "FF FF FD 00 01 07 00 55 00 06 04 26 65 5D"},
	{"read present position (132, 4 bytes)", 1, InstRead, "84 00 04 00", "FF FF FD 00 01 07 00 02 84 00 04 00 1D 15"},
	{"read status: position 166", 1, InstStatus, "00 A6 00 00 00", "FF FF FD 00 01 08 00 55 00 A6 00 00 00 8C C0"},
	{"write goal position 512", 1, InstWrite, "74 00 00 02 00 00", "FF FF FD 00 01 09 00 03 74 00 00 02 00 00 CA 89"},
	{"write status", 1, InstStatus, "00", "FF FF FD 00 01 04 00 55 00 A1 0C"},
	{"sync read ids 1, 2 at 132", BroadcastID, InstSyncRead, "84 00 04 00 01 02", "FF FF FD 00 FE 09 00 82 84 00 04 00 01 02 CE FA"},
	{"sync read status id 2: position 2079", 2, InstStatus, "00 1F 08 00 00", "FF FF FD 00 02 08 00 55 00 1F 08 00 00 BA BE"},
	{"sync write 150 to id 1, 170 to id 2", BroadcastID, InstSyncWrite, "74 00 04 00 01 96 00 00 00 02 AA 00 00 00",
		"FF FF FD 00 FE 11 00 83 74 00 04 00 01 96 00 00 00 02 AA 00 00 00 82 87"},
	// Byte stuffing: FF FF FD in the parameters gets an extra FD, counted in the length; the CRC
	// (computed by hand with the bitwise algorithm) covers the stuffed bytes.
	{"write FF FF FD 00 (stuffed)", 1, InstWrite, "74 00 FF FF FD 00", "FF FF FD 00 01 0A 00 03 74 00 FF FF FD FD 00 21 E7"},
}

func TestPacketsMatchThePublishedExamples(t *testing.T) {
	for _, c := range publishedPackets {
		got := AppendPacket(nil, c.id, c.inst, unhex(t, c.params))
		if want := unhex(t, c.bytes); !bytes.Equal(got, want) {
			t.Errorf("%s: encoded % X, want % X", c.name, got, want)
		}
		p, n, err := Decode(unhex(t, c.bytes))
		if err != nil || n != len(unhex(t, c.bytes)) || p.ID != c.id || p.Instruction != c.inst {
			t.Errorf("%s: decoded %+v, %d bytes, %v", c.name, p, n, err)
			continue
		}
		params := p.Params
		if c.inst == InstStatus {
			params = append([]byte{byte(p.Err)}, params...)
		}
		if !bytes.Equal(params, unhex(t, c.params)) {
			t.Errorf("%s: decoded params % X, want %s", c.name, params, c.params)
		}
	}
}

func TestCRCCheckValue(t *testing.T) {
	// CRC-16 with polynomial 0x8005, no reflection, initial 0 (CRC-16/UMTS): the catalogue check
	// value of "123456789".
	if got := CRC16(0, []byte("123456789")); got != 0xFEE8 {
		t.Fatalf("CRC16(123456789) = %#04x, want 0xfee8", got)
	}
}

func TestDecodeResynchronises(t *testing.T) {
	good := unhex(t, "FF FF FD 00 01 08 00 55 00 A6 00 00 00 8C C0")
	damaged := append([]byte(nil), good...)
	damaged[10] ^= 0x01
	stream := append(append(append([]byte{0x00, 0xFF, 0x12}, damaged...), 0xFF), good...)
	var got []Packet
	var crcErrors int
	for len(stream) > 0 {
		p, n, err := Decode(stream)
		stream = stream[n:]
		switch {
		case errors.Is(err, ErrIncomplete):
			if n == 0 {
				t.Fatalf("stuck on % X", stream)
			}
		case errors.Is(err, ErrCRC):
			crcErrors++
		case err != nil:
			t.Fatal(err)
		default:
			got = append(got, p)
		}
	}
	if len(got) != 1 || crcErrors != 1 || Int32(got[0].Params) != 166 {
		t.Fatalf("decoded %+v with %d CRC errors, want one packet with position 166 and one CRC error", got, crcErrors)
	}
}

func TestDecodeWaitsForTheRest(t *testing.T) {
	pkt := unhex(t, "FF FF FD 00 01 08 00 55 00 A6 00 00 00 8C C0")
	for i := range len(pkt) {
		if _, n, err := Decode(pkt[:i]); !errors.Is(err, ErrIncomplete) || n != 0 {
			t.Fatalf("prefix of %d bytes: n=%d err=%v, want 0 bytes consumed and ErrIncomplete", i, n, err)
		}
	}
}

func TestDeviceErrors(t *testing.T) {
	if got := DeviceError(0x86).Error(); got != "data limit error (hardware error alert)" {
		t.Errorf("0x86: %q", got)
	}
	if got := HardwareErrors(0x24); strings.Join(got, ",") != "overheating error,overload error" {
		t.Errorf("hardware errors 0x24: %q", got)
	}
	if Radians(2048) != 0 || Ticks(Radians(3000)) != 3000 || Ticks(-3.141592653589793) != 0 {
		t.Errorf("tick conversions: %v %v %v", Radians(2048), Ticks(Radians(3000)), Ticks(-3.141592653589793))
	}
}

// FuzzDecode: any bytes from the line decode without panicking, always make progress, and a
// decoded packet encodes back to the bytes it was read from.
func FuzzDecode(f *testing.F) {
	for _, c := range publishedPackets {
		f.Add(unhex(f, c.bytes))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for len(data) > 0 {
			p, n, err := Decode(data)
			if n < 0 || n > len(data) {
				t.Fatalf("consumed %d of %d bytes", n, len(data))
			}
			if err == nil {
				params := p.Params
				if p.Instruction == InstStatus {
					params = append([]byte{byte(p.Err)}, params...)
				}
				again := AppendPacket(nil, p.ID, p.Instruction, params)
				if !bytes.HasSuffix(data[:n], again) {
					t.Fatalf("% X decoded to %+v, which encodes to % X", data[:n], p, again)
				}
			}
			if n == 0 {
				return // incomplete: wait for more bytes
			}
			data = data[n:]
		}
	})
}

// A refusal is found by its processing error whether or not the motor also raises its alert.
func TestDeviceErrorIsIgnoresTheAlert(t *testing.T) {
	err := fmt.Errorf("motor 17: %w", ErrAccess|AlertBit)
	if !errors.Is(err, ErrAccess) || errors.Is(err, ErrDataRange) {
		t.Fatalf("errors.Is on %v: want ErrAccess only", err)
	}
	if errors.Is(fmt.Errorf("motor 17: %w", ErrAccess), ErrAccess|AlertBit) {
		t.Fatal("an error without the alert matched a target with it")
	}
}
