package dynamixel

import (
	"errors"
	"io"
	"sync"
	"testing"
	"time"
)

// scriptedPort answers each packet written to it with what respond returns, as devices on a bus
// would; it fails every call once cut.
type scriptedPort struct {
	respond func(p Packet) [][]byte
	mu      sync.Mutex
	pending []byte
	ready   chan struct{}
	timeout time.Duration
	written [][]byte
	cut     bool
}

func newScriptedPort(respond func(p Packet) [][]byte) *scriptedPort {
	return &scriptedPort{respond: respond, ready: make(chan struct{}, 1)}
}

func (s *scriptedPort) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cut {
		return 0, io.ErrClosedPipe
	}
	s.written = append(s.written, append([]byte(nil), b...))
	p, _, err := Decode(b)
	if err != nil {
		return 0, err
	}
	for _, answer := range s.respond(p) {
		s.pending = append(s.pending, answer...)
	}
	select {
	case s.ready <- struct{}{}:
	default:
	}
	return len(b), nil
}

func (s *scriptedPort) Read(b []byte) (int, error) {
	timer := time.NewTimer(s.timeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		if s.cut {
			s.mu.Unlock()
			return 0, io.ErrClosedPipe
		}
		if len(s.pending) > 0 {
			n := copy(b, s.pending)
			s.pending = s.pending[n:]
			s.mu.Unlock()
			return n, nil
		}
		s.mu.Unlock()
		select {
		case <-s.ready:
		case <-timer.C:
			return 0, nil
		}
	}
}

func (s *scriptedPort) SetReadTimeout(t time.Duration) error { s.timeout = t; return nil }

func status(id byte, errField DeviceError, data ...byte) []byte {
	return AppendPacket(nil, id, InstStatus, append([]byte{byte(errField)}, data...))
}

func TestSyncReadServesTheMotorsThatAnswer(t *testing.T) {
	port := newScriptedPort(func(p Packet) [][]byte {
		if p.Instruction != InstSyncRead {
			return nil
		}
		return [][]byte{
			status(11, 0, PutInt32(2100)...),
			// 12 is silent
			status(13, AlertBit, PutInt32(1900)...),
			{0x00, 0x13}, // noise on the line
			status(14, ErrDataRange),
		}
	})
	bus := NewBus(port, 1_000_000)
	start := time.Now()
	res, err := bus.SyncRead(AddrPresentPosition, 4, []byte{11, 12, 13, 14})
	if err != nil {
		t.Fatal(err)
	}
	if Int32(res[0].Data) != 2100 || res[0].Err != nil || res[0].Alert {
		t.Errorf("motor 11: %+v", res[0])
	}
	if !errors.Is(res[1].Err, ErrTimeout) {
		t.Errorf("silent motor 12: %+v, want ErrTimeout", res[1])
	}
	if Int32(res[2].Data) != 1900 || !res[2].Alert {
		t.Errorf("motor 13 (alert): %+v", res[2])
	}
	if !errors.Is(res[3].Err, ErrDataRange) {
		t.Errorf("motor 14: %+v, want a data range error", res[3])
	}
	// One silent motor costs at most the sync read's own deadline.
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Errorf("sync read with a silent motor took %v", d)
	}
}

func TestReadRetriesThenReportsTheSilentMotor(t *testing.T) {
	attempts := 0
	port := newScriptedPort(func(p Packet) [][]byte {
		attempts++
		if attempts == 1 {
			// A damaged answer: the read is sent again.
			bad := status(p.ID, 0, 0x01)
			bad[len(bad)-1] ^= 0xFF
			return [][]byte{bad}
		}
		return [][]byte{status(p.ID, 0, 0x01)}
	})
	bus := NewBus(port, 1_000_000)
	data, err := bus.Read(10, AddrTorqueEnable, 1)
	if err != nil || len(data) != 1 || data[0] != 1 || attempts != 2 {
		t.Fatalf("read = % X, %v after %d attempts; want 01 after 2", data, err, attempts)
	}

	silent := newScriptedPort(func(Packet) [][]byte { return nil })
	bus = NewBus(silent, 1_000_000)
	if err := bus.Write(12, AddrTorqueEnable, []byte{1}); !errors.Is(err, ErrTimeout) {
		t.Fatalf("write to a silent motor: %v, want ErrTimeout", err)
	}
	if got := len(silent.written); got != bus.Retries+1 {
		t.Fatalf("sent %d times, want %d (bounded retries)", got, bus.Retries+1)
	}
}

func TestAPortFailureIsAPortError(t *testing.T) {
	port := newScriptedPort(func(Packet) [][]byte { return nil })
	port.cut = true
	bus := NewBus(port, 1_000_000)
	_, err := bus.SyncRead(AddrPresentPosition, 4, []byte{11})
	var pe *PortError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a PortError", err)
	}
	if _, err := bus.Ping(11); !errors.As(err, &pe) {
		t.Fatalf("ping: %v, want a PortError", err)
	}
}

func TestSyncWriteBytes(t *testing.T) {
	port := newScriptedPort(func(Packet) [][]byte { return nil })
	bus := NewBus(port, 1_000_000)
	if err := bus.SyncWrite(AddrGoalPosition, []byte{1, 2}, [][]byte{PutInt32(150), PutInt32(170)}); err != nil {
		t.Fatal(err)
	}
	want := "FF FF FD 00 FE 11 00 83 74 00 04 00 01 96 00 00 00 02 AA 00 00 00 82 87"
	if got := port.written[0]; string(got) != string(unhex(t, want)) {
		t.Fatalf("sync write sent % X, want %s", got, want)
	}
	if err := bus.SyncWrite(AddrGoalPosition, []byte{1, 2}, [][]byte{PutInt32(1), {1}}); err == nil {
		t.Fatal("a sync write with values of different lengths was sent")
	}
}

// WriteGoals sends the sync write of SyncWrite, with each goal clamped to its motor's limits.
func TestWriteGoalsClampsAndSendsOneSyncWrite(t *testing.T) {
	port := newScriptedPort(func(Packet) [][]byte { return nil })
	bus := NewBus(port, 1_000_000)
	ms := []Motor{
		{MotorConfig: MotorConfig{ID: 1, Lower: 100, Upper: 4000}, Goal: 150},
		{MotorConfig: MotorConfig{ID: 2, Lower: 0, Upper: 170}, Goal: 900},
	}
	if err := bus.WriteGoals(ms); err != nil || ms[1].Goal != 170 {
		t.Fatalf("err %v, goals %d %d; want the second clamped to 170", err, ms[0].Goal, ms[1].Goal)
	}
	want := "FF FF FD 00 FE 11 00 83 74 00 04 00 01 96 00 00 00 02 AA 00 00 00 82 87"
	if got := port.written[0]; string(got) != string(unhex(t, want)) {
		t.Fatalf("sent % X, want %s", got, want)
	}
}

// A motor goes silent after SilentAfter missed reads, answers again with its position, and
// carries the hardware-error alert of its answers; its errors are forgotten when the alert clears.
func TestMotorRecordsItsAnswers(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := &Motor{MotorConfig: MotorConfig{Name: "stewart_1", ID: 11}}
	if m.Record(SyncResult{Data: PutInt32(2048)}, now) || !m.Seen || m.Present != 2048 || !m.LastSeen.Equal(now) {
		t.Fatalf("answer: %+v", m)
	}
	for k := 1; k <= SilentAfter; k++ {
		if silenced := m.Record(SyncResult{Err: ErrTimeout}, now.Add(time.Second)); silenced != (k == SilentAfter) {
			t.Fatalf("miss %d: silenced %v", k, silenced)
		}
	}
	if !m.Silent || !m.LastSeen.Equal(now) {
		t.Fatalf("silent: %+v", m)
	}
	m.found(2100, now)
	m.Record(SyncResult{Data: PutInt32(2100), Alert: true}, now)
	if m.Silent || !m.Alert {
		t.Fatalf("alert: %+v", m)
	}
	m.HardwareErrors = HardwareErrors(0x20)
	m.Record(SyncResult{Data: PutInt32(2100)}, now)
	if m.Alert || m.HardwareErrors != nil {
		t.Fatalf("alert cleared: %+v", m)
	}
}
