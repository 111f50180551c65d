package dynamixel_test

import (
	"errors"
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/hardware"
	"github.com/robothub/robothub/adapters/hardware/busemu"
	"github.com/robothub/robothub/adapters/hardware/dynamixel"
)

// lateTimeout is the Bus's slack in these tests. The motor's answers come 1.5, 1 and 1.5 times it
// late, as from an adapter that lags: the first after the wait it missed, the second (to the
// request sent again) in the middle of the wait of the request after, whose own answer is late.
const lateTimeout = 20 * time.Millisecond

var lateBy = []time.Duration{lateTimeout * 3 / 2, lateTimeout, lateTimeout * 3 / 2}

// The driver against the motor-bus emulator, which is as strict as the motors.

func lateBus(t *testing.T) (*busemu.Bus, *dynamixel.Bus) {
	t.Helper()
	cfg := hardware.DefaultConfig()
	emu, err := busemu.Start(busemu.Options{Config: cfg, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	bus, err := dynamixel.Open(emu.Path(), cfg.Baud, lateTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Close() })
	return emu, bus
}

// A READ whose answer comes after the Bus stopped waiting: its answer must not be taken for the
// next READ's, which asks another item of the same length of the same motor (at start-up,
// stewart_2's position limits were read as its homing offset).
func TestALateAnswerIsNotTheNextRequestsAnswer(t *testing.T) {
	emu, bus := lateBus(t)
	if _, err := bus.Ping(12); err != nil {
		t.Fatal(err)
	}
	emu.DelayAnswers(12, 0, lateBy...)
	offset, err := bus.ReadInt32(12, dynamixel.AddrHomingOffset)
	if err != nil || offset != -1024 {
		t.Fatalf("homing offset %d, %v; want -1024 (late, or read again)", offset, err)
	}
	lower, err := bus.ReadInt32(12, dynamixel.AddrMinPositionLimit)
	if err != nil || lower != 1138 {
		t.Fatalf("min position limit %d, %v; want 1138, not the homing offset's late answer", lower, err)
	}
	upper, err := bus.ReadInt32(12, dynamixel.AddrMaxPositionLimit)
	if err != nil || upper != 2844 {
		t.Fatalf("max position limit %d, %v; want 2844", upper, err)
	}
}

// The same for sync reads: a motor's late answer to one sync read is not its answer to the next.
func TestALateSyncReadAnswerIsNotTheNextOnes(t *testing.T) {
	emu, bus := lateBus(t)
	ids := []byte{11, 12, 13}
	emu.DelayAnswers(12, 0, lateBy...)
	res, err := bus.SyncRead(dynamixel.AddrPresentPosition, 4, ids)
	if err != nil {
		t.Fatal(err)
	}
	if r := res[1]; r.Err == nil && dynamixel.Int32(r.Data) != 2048 {
		t.Fatalf("stewart_2's position %d; want 2048 or no answer", dynamixel.Int32(r.Data))
	} else if r.Err != nil && !errors.Is(r.Err, dynamixel.ErrTimeout) {
		t.Fatal(r.Err)
	}
	res, err = bus.SyncRead(dynamixel.AddrHomingOffset, 4, ids)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int32{1024, -1024, 1024} {
		if r := res[i]; r.Err != nil || dynamixel.Int32(r.Data) != want {
			t.Errorf("motor %d's homing offset: %+v, want %d", ids[i], r, want)
		}
	}
}

// A motor's hardware error stays until it is rebooted; a reboot clears it, and the motor comes back
// with its torque off.
func TestRebootClearsAHardwareError(t *testing.T) {
	emu, bus := lateBus(t)
	if err := bus.Write(17, dynamixel.AddrTorqueEnable, []byte{1}); err != nil {
		t.Fatal(err)
	}
	emu.RaiseHardwareError(17, 0x20) // overload
	if err := bus.Write(17, dynamixel.AddrTorqueEnable, []byte{1}); !errors.Is(err, dynamixel.ErrResultFail) {
		t.Fatalf("torque on after an overload: %v, want it refused", err)
	}
	if err := bus.Reboot(17); err != nil {
		t.Fatal(err)
	}
	// It boots: the first pings may go unanswered.
	deadline := time.Now().Add(2 * time.Second)
	for {
		if _, err := bus.Ping(17); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("motor 17 did not answer after its reboot")
		}
	}
	data, err := bus.Read(17, dynamixel.AddrTorqueEnable, 7)
	if err != nil || data[0] != 0 || data[6] != 0 {
		t.Fatalf("after the reboot: % X, %v; want the torque off and no hardware error", data, err)
	}
	if err := bus.Write(17, dynamixel.AddrTorqueEnable, []byte{1}); err != nil {
		t.Fatalf("torque on after the reboot: %v", err)
	}
}

// A broadcast ping finds every motor on the line, whatever their ids.
func TestScanFindsEveryMotor(t *testing.T) {
	_, bus := lateBus(t)
	ids, err := bus.Scan()
	if err != nil || string(ids) != string([]byte{10, 11, 12, 13, 14, 15, 16, 17, 18}) {
		t.Fatalf("scan: %v, %v; want ids 10 to 18", ids, err)
	}
}
