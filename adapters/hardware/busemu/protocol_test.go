package busemu

import (
	"bytes"
	"testing"

	"github.com/robothub/robothub/adapters/hardware/dynamixel"
)

// The emulated motors read what the line carries from outside: any bytes. Whatever they are, the
// reader makes progress and never panics. And an instruction packet encoded by the driver's code
// (another implementation of the spec) reads back as the same id, instruction and parameters.
func FuzzNextFrame(f *testing.F) {
	f.Add([]byte{0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x03, 0x00, 0x01, 0x19, 0x4E}, byte(1), byte(1), []byte{})
	f.Add([]byte{0xFF, 0xFF, 0xFD, 0x00, 0xFF, 0xFF, 0xFD, 0xFD}, byte(11), byte(3), []byte{20, 0, 0xFF, 0xFF, 0xFD, 0xFF})
	f.Add([]byte{0x00, 0xFF, 0xFF, 0xFD, 0x00, 0x0B, 0xFF, 0xFF}, byte(0xFE), byte(0x82), []byte{132, 0, 4, 0, 10, 11, 12})
	f.Fuzz(func(t *testing.T, noise []byte, id, inst byte, params []byte) {
		for buf := noise; len(buf) > 0; {
			_, used, found := nextFrame(buf)
			if used < 0 || used > len(buf) || (found && used == 0) {
				t.Fatalf("used %d of %d bytes (found %v)", used, len(buf), found)
			}
			if used == 0 {
				break // the rest may begin a packet: it waits for more bytes
			}
			buf = buf[used:]
		}
		// The spec stuffs from the instruction on, the driver its parameters: the same for every
		// instruction there is (none is FF, which could begin the pattern).
		if inst == instStatus || inst == 0xFF || len(params) > 512 {
			return
		}
		packet := dynamixel.AppendPacket(nil, id, inst, params)
		fr, used, found := nextFrame(packet)
		if !found || used != len(packet) || fr.damaged || fr.id != id || fr.inst != inst || !bytes.Equal(fr.params, params) {
			t.Fatalf("driver packet % X read as %+v (used %d, found %v), want id %d inst %#x params % X", packet, fr, used, found, id, inst, params)
		}
	})
}
