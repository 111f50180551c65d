package hardware

import (
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/hardware/dynamixel"
)

// A motor's health says, for a person, what its reads showed: unknown before its first answer,
// silent since when, the hardware errors it reports, unknown again while the bus is disconnected.
func TestMotorHealthSaysWhatTheReadsShowed(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := &dynamixel.Motor{MotorConfig: dynamixel.MotorConfig{Name: "stewart_1", ID: 11}}
	if h := health(m, true, true); h.State != "unknown" || h.Position != nil || h.Error != nil {
		t.Fatalf("before any answer: %+v", h)
	}
	m.Record(dynamixel.SyncResult{Data: dynamixel.PutInt32(2048)}, now)
	if h := health(m, true, true); h.State != "ok" || h.Error != nil || h.Position == nil || *h.Position != 0 || !h.LastSeen.Equal(now) {
		t.Fatalf("answering: %+v", h)
	}
	for range dynamixel.SilentAfter {
		m.Record(dynamixel.SyncResult{Err: dynamixel.ErrTimeout}, now.Add(time.Second))
	}
	if h := health(m, true, true); h.State != "silent" || h.Error == nil || *h.Error != "stopped answering at 2026-01-02T03:04:05Z" {
		t.Fatalf("silent: %+v", h)
	}
	m.Silent = false
	m.Record(dynamixel.SyncResult{Data: dynamixel.PutInt32(2100), Alert: true}, now)
	m.HardwareErrors = dynamixel.HardwareErrors(0x20)
	if h := health(m, true, true); h.State != "hardware_error" || *h.Error != "reports: overload error" || len(h.HardwareErrors) != 1 {
		t.Fatalf("alert: %+v", h)
	}
	if h := health(m, false, true); h.State != "unknown" || *h.Error != "the motor bus is not connected" {
		t.Fatalf("bus disconnected: %+v", h)
	}
}
