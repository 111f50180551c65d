package busemu_test

import (
	"errors"
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/hardware"
	"github.com/robothub/robothub/adapters/hardware/busemu"
	"github.com/robothub/robothub/adapters/hardware/dynamixel"
)

// The emulator answers as XL330s do, through a real serial port opened on its pty.
func TestEmulatedMotorsBehaveLikeXL330s(t *testing.T) {
	emu, err := busemu.Start(busemu.Options{Config: hardware.DefaultConfig(), Dir: t.TempDir(), Rest: map[byte]int32{11: 2300}})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	// A generous slack: this test is about the answers, and a loaded machine may pause the
	// emulator for more than the default 5 ms.
	bus, err := dynamixel.Open(emu.Path(), 1_000_000, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()

	if model, err := bus.Ping(11); err != nil || model != dynamixel.ModelXL330M288 {
		t.Fatalf("ping: model %d, %v", model, err)
	}
	b, err := bus.Read(11, dynamixel.AddrHomingOffset, 4)
	if err != nil || dynamixel.Int32(b) != 1024 {
		t.Fatalf("homing offset % X, %v; want 1024 from the hardware config", b, err)
	}
	// EEPROM is locked while the torque is on; a goal beyond the limits is refused.
	if err := bus.Write(11, dynamixel.AddrTorqueEnable, []byte{1}); err != nil {
		t.Fatal(err)
	}
	if err := bus.Write(11, dynamixel.AddrOperatingMode, []byte{5}); !errors.Is(err, dynamixel.ErrAccess) {
		t.Errorf("operating mode with the torque on: %v, want an access error", err)
	}
	if err := bus.Write(11, dynamixel.AddrGoalPosition, dynamixel.PutInt32(3500)); !errors.Is(err, dynamixel.ErrDataLimit) || emu.GoalsRefused() != 1 {
		t.Errorf("goal beyond the limit: %v (%d refused), want a data limit error", err, emu.GoalsRefused())
	}
	// A goal within them is reached at the motor's speed.
	if err := bus.SyncWrite(dynamixel.AddrGoalPosition, []byte{11}, [][]byte{dynamixel.PutInt32(2000)}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Second)
	for emu.Position(11) != 2000 {
		if time.Now().After(deadline) {
			t.Fatalf("motor 11 at %d, never reached 2000", emu.Position(11))
		}
		time.Sleep(10 * time.Millisecond)
	}
	res, err := bus.SyncRead(dynamixel.AddrPresentPosition, 4, []byte{10, 11})
	if err != nil || dynamixel.Int32(res[1].Data) != 2000 || dynamixel.Int32(res[0].Data) != 2048 {
		t.Fatalf("sync read: %+v, %v", res, err)
	}

	emu.SetSilent(10, true)
	emu.RaiseHardwareError(11, 0x04) // overheating: in the shutdown mask
	res, err = bus.SyncRead(dynamixel.AddrPresentPosition, 4, []byte{10, 11})
	if err != nil || !errors.Is(res[0].Err, dynamixel.ErrTimeout) || !res[1].Alert || emu.Torque(11) {
		t.Fatalf("silent 10, overheating 11: %+v, %v", res, err)
	}

	emu.Unplug()
	var pe *dynamixel.PortError
	if _, err := bus.Read(11, dynamixel.AddrPresentPosition, 4); !errors.As(err, &pe) {
		t.Fatalf("read on an unplugged bus: %v, want a port error", err)
	}
}
