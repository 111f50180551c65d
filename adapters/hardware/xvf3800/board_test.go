package xvf3800

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/hardware/usbdev"
)

// exchange is one control transfer as the board sees it, and its answer.
type exchange struct {
	requestType  uint8
	value, index uint16
	sent, answer []byte // sent: an OUT transfer's data; answer: an IN transfer's
	err          error
}

// recordedBoard plays a recorded conversation with an XVF3800, failing on any other request.
type recordedBoard struct {
	t     *testing.T
	steps []exchange
}

func (r *recordedBoard) Control(requestType, request uint8, value, index uint16, data []byte, _ time.Duration) (int, error) {
	r.t.Helper()
	if len(r.steps) == 0 {
		r.t.Fatalf("unexpected control transfer type %#x value %#x index %d", requestType, value, index)
	}
	want := r.steps[0]
	r.steps = r.steps[1:]
	if requestType != want.requestType || request != 0 || value != want.value || index != want.index {
		r.t.Fatalf("control transfer type %#x request %d value %#x index %d, want type %#x value %#x index %d",
			requestType, request, value, index, want.requestType, want.value, want.index)
	}
	if want.err != nil {
		return 0, want.err
	}
	if requestType&0x80 == 0 {
		if string(data) != string(want.sent) {
			r.t.Fatalf("wrote % x, want % x", data, want.sent)
		}
		return len(data), nil
	}
	return copy(data, want.answer), nil
}

func (r *recordedBoard) Close() error { return nil }

func f32s(status byte, vs ...float32) []byte {
	b := []byte{status}
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func TestDoAReadsTheDirectionOfArrival(t *testing.T) {
	// DOA_VALUE_RADIANS is resource 20, command 19 (read: 0x80|19), two floats after the status.
	board := &Board{pipe: &recordedBoard{t: t, steps: []exchange{
		{requestType: 0xC0, value: 0x93, index: 20, answer: []byte{statusRetry}}, // busy: ask again
		{requestType: 0xC0, value: 0x93, index: 20, answer: f32s(statusDone, math.Pi/2, 1)},
		{requestType: 0xC0, value: 0x93, index: 20, answer: f32s(statusDone, 0.25, 0)},
	}}, sleep: func(time.Duration) {}}
	angle, speech, err := board.DoA()
	if err != nil || math.Abs(angle-math.Pi/2) > 1e-6 || !speech {
		t.Fatalf("DoA = %v, %v, %v; want π/2 (front), speech", angle, speech, err)
	}
	if angle, speech, err = board.DoA(); err != nil || math.Abs(angle-0.25) > 1e-6 || speech {
		t.Fatalf("DoA = %v, %v, %v; want 0.25, no speech", angle, speech, err)
	}
}

func TestAudioBoardWritesAndRefusesWhatItCannot(t *testing.T) {
	gain := binary.LittleEndian.AppendUint32(nil, math.Float32bits(2.5))
	board := &Board{pipe: &recordedBoard{t: t, steps: []exchange{
		{requestType: 0x40, value: 0, index: 35, sent: gain},                    // AUDIO_MGR_MIC_GAIN = 2.5
		{requestType: 0x40, value: 15, index: 35, sent: []byte{3, 0}},           // AUDIO_MGR_OP_L = 3 0
		{requestType: 0xC0, value: 0x80, index: 48, answer: []byte{0, 2, 1, 0}}, // VERSION
		{requestType: 0xC0, value: 0x93, index: 20, answer: []byte{7}},          // an unknown status
		{requestType: 0xC0, value: 0x93, index: 20, err: errors.New("no such device")},
	}}, sleep: func(time.Duration) {}}
	if err := board.Write("AUDIO_MGR_MIC_GAIN", []float64{2.5}); err != nil {
		t.Fatal(err)
	}
	if err := board.Write("AUDIO_MGR_OP_L", []float64{3, 0}); err != nil {
		t.Fatal(err)
	}
	if v, err := board.Read("VERSION"); err != nil || v[0] != 2 || v[1] != 1 || v[2] != 0 {
		t.Fatalf("VERSION = %v, %v; want 2.1.0", v, err)
	}
	for _, c := range []struct {
		do   func() error
		want string
	}{
		{func() error { _, _, err := board.DoA(); return err }, "status 7"},
		{func() error { _, _, err := board.DoA(); return err }, "no such device"},
		{func() error { return board.Write("DOA_VALUE_RADIANS", []float64{0, 0}) }, "read-only"},
		{func() error { return board.Write("AUDIO_MGR_OP_L", []float64{3}) }, "takes 2 values, got 1"},
		{func() error { return board.Write("AUDIO_MGR_OP_L", []float64{3, 256}) }, "not an integer from 0 to 255"},
		{func() error { return board.Write("PP_AGCGAIN", []float64{math.NaN()}) }, "not a finite number"},
		{func() error { _, err := board.Read("SELF_DESTRUCT"); return err }, `unknown audio board parameter "SELF_DESTRUCT"`},
	} {
		if err := c.do(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error with %q", err, c.want)
		}
	}
}

func TestNoAudioBoardNamesWhatWasLookedFor(t *testing.T) {
	_, err := Open(usbdev.Sysfs(t.TempDir()))
	var nf *usbdev.NotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "38fb:1001") || !strings.Contains(err.Error(), "2886:001a") {
		t.Fatalf("no board: %v", err)
	}
}
