package robot_test

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robothub/robothub/internal/testkit/wait"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/robot"
)

// The simulated robot's tests run in a testing/synctest bubble: the control loop's
// ticker and every sleep and timeout of a test use the bubble's clock, which moves
// only when all goroutines wait. A "nothing happens for 100 ms" check is then a
// deterministic statement about five control ticks, not a race with the machine's
// load, and the tests take milliseconds instead of seconds.
func newSimRobot(t *testing.T) *robot.Robot {
	t.Helper()
	r := robot.New(robot.NewSim(), nil)
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func waitMove(t *testing.T, m *robot.Move) {
	t.Helper()
	select {
	case <-m.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("move %s did not end", m.Kind)
	}
	if !m.Completed() {
		t.Fatalf("move %s ended without completing", m.Kind)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-3 }

func TestStartsAsleepThenWakesAndSleeps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newSimRobot(t)
		s := r.State()
		if s.Awake || s.ControlMode != robot.MotorsDisabled || s.Backend != "sim" {
			t.Fatalf("initial state: awake=%v mode=%s backend=%s, want asleep, disabled, sim", s.Awake, s.ControlMode, s.Backend)
		}
		if !near(s.Antennas[0], robot.SleepPose.Antennas[0]) || !near(s.HeadPose.Pitch, robot.SleepPose.Head.Pitch) {
			t.Fatalf("initial pose %+v %v is not the sleep pose", s.HeadPose, s.Antennas)
		}

		woke := make(chan struct{}, 1)
		r.OnWake(func() { woke <- struct{}{} })
		r.StartRecording()
		start := time.Now()
		m := r.WakeUp()
		if r.State().Move == nil || r.State().Move.Kind != "wake_up" {
			t.Fatalf("state during wake-up shows no wake_up move: %+v", r.State().Move)
		}
		// The public robot's wake-up: 2 s to the init pose, then the sound and a 20° roll of the
		// head and back, 2.5 s in all.
		if d := m.Duration(); d != 2500*time.Millisecond {
			t.Fatalf("wake-up lasts %s, want 2.5 s", d)
		}
		maxRoll := 0.0
		for done := false; !done; {
			select {
			case <-m.Done():
				done = true
			case <-time.After(robot.ControlPeriod):
				maxRoll = math.Max(maxRoll, r.State().TargetHeadPose.Roll)
			}
		}
		if el := time.Since(start); el < 2500*time.Millisecond || el > 2600*time.Millisecond {
			t.Fatalf("wake-up ended after %s, want 2.5 s", el)
		}
		if math.Abs(maxRoll-20*math.Pi/180) > 0.01 {
			t.Fatalf("the head rolled at most %.3f rad during wake-up, want 20° (0.349)", maxRoll)
		}
		select {
		case <-woke:
		case <-time.After(time.Second):
			t.Fatal("OnWake callback did not run")
		}
		wait.For(t, time.Second, "the init pose", func() bool {
			s := r.State()
			return near(s.Antennas[0], -0.1745) && near(s.Antennas[1], 0.1745) && near(s.HeadPose.Pitch, 0) && near(s.HeadPose.Z, 0) && near(s.HeadPose.Roll, 0)
		})
		if s := r.State(); !s.Awake || s.ControlMode != robot.MotorsEnabled || s.Move != nil {
			t.Fatalf("after wake-up: awake=%v mode=%s move=%v", s.Awake, s.ControlMode, s.Move)
		}
		heard, _ := r.AudioSample(0)
		if loudest(heard) < 0.1 {
			t.Fatalf("the wake-up sound was not played: loudest sample %.3f", loudest(heard))
		}
		if m := r.WakeUp(); m.Duration() != 0 {
			t.Fatalf("a second wake-up at the init pose lasts %s: it should stand down", m.Duration())
		}

		// The daemon's own route lays the robot down and lets the motors go limp.
		waitMove(t, r.GotoSleep(true))
		s = r.State()
		if s.Awake || s.ControlMode != robot.MotorsDisabled || !near(s.Antennas[1], robot.SleepPose.Antennas[1]) {
			t.Fatalf("after sleep: awake=%v mode=%s antennas=%v", s.Awake, s.ControlMode, s.Antennas)
		}
		if r.ReturnToDefault() {
			t.Fatal("ReturnToDefault moved an asleep robot")
		}
	})
}

// The SDK's goto_sleep leaves the motors on, as the public SDK's does: an app that sleeps and then
// moves gets its motion.
func TestGotoSleepKeepingTheMotorsOnThenMove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newSimRobot(t)
		waitMove(t, r.WakeUp())
		if _, err := r.Goto(robot.Target{Head: &robot.HeadPose{Yaw: 0.6}}, time.Second, robot.MinJerk); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1100 * time.Millisecond)
		m := r.GotoSleep(false)
		// Far from the init pose (34° of yaw): back to it in 1 s, a pause, 2 s to the sleep pose, 2 s of rest.
		if m.Duration() != 5200*time.Millisecond {
			t.Fatalf("going to sleep from a turned head lasts %s, want 5.2 s", m.Duration())
		}
		waitMove(t, m)
		s := r.State()
		if s.Awake || s.ControlMode != robot.MotorsEnabled || !near(s.HeadPose.Pitch, robot.SleepPose.Head.Pitch) {
			t.Fatalf("after goto_sleep keeping the motors on: awake=%v mode=%s pitch=%.3f", s.Awake, s.ControlMode, s.HeadPose.Pitch)
		}
		if _, err := r.Goto(robot.Target{Antennas: &[2]float64{0.5, -0.5}}, 200*time.Millisecond, robot.Linear); err != nil {
			t.Fatal(err)
		}
		wait.For(t, time.Second, "the antennas move after sleeping", func() bool {
			a := r.State().Antennas
			return near(a[0], 0.5) && near(a[1], -0.5)
		})
	})
}

func loudest(samples []float32) float64 {
	m := 0.0
	for _, v := range samples {
		m = math.Max(m, math.Abs(float64(v)))
	}
	return m
}

func TestSetTargetClampsAndRejectsNonFinite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newSimRobot(t)
		waitMove(t, r.WakeUp())
		yaw := 0.5
		if err := r.SetTarget(robot.Target{Head: &robot.HeadPose{Pitch: 2, Yaw: 0.3}, Antennas: &[2]float64{0.4, -0.4}, BodyYaw: &yaw}); err != nil {
			t.Fatal(err)
		}
		s := r.State()
		if !near(s.TargetHeadPose.Pitch, 0.7) || !near(s.TargetHeadPose.Yaw, 0.3) || !near(s.TargetBodyYaw, 0.5) {
			t.Fatalf("target %+v body %v: pitch should clamp to 0.7, yaw 0.3, body 0.5", s.TargetHeadPose, s.TargetBodyYaw)
		}
		wait.For(t, time.Second, "present to reach target", func() bool {
			s := r.State()
			return near(s.Antennas[0], 0.4) && near(s.HeadPose.Pitch, 0.7) && near(s.BodyYaw, 0.5)
		})

		err := r.SetTarget(robot.Target{Antennas: &[2]float64{math.NaN(), 0}})
		if !errors.Is(err, fault.ErrInvalid) || err.Error() != "antennas[0] must be a finite number" {
			t.Fatalf("NaN antenna: got %v, want invalid naming antennas[0]", err)
		}
		if s := r.State(); !near(s.TargetAntennas[0], 0.4) {
			t.Fatalf("rejected target changed the state: %v", s.TargetAntennas)
		}
	})
}

func TestGotoInterpolatesAndStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newSimRobot(t)
		waitMove(t, r.WakeUp())
		m, err := r.Goto(robot.Target{Antennas: &[2]float64{1, -1}}, 400*time.Millisecond, robot.Linear)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		mid := r.State().TargetAntennas[0]
		if mid < 0.2 || mid > 0.8 {
			t.Fatalf("halfway through a linear move the target is %v, want about 0.5", mid)
		}
		waitMove(t, m)
		if s := r.State(); !near(s.TargetAntennas[0], 1) || !near(s.TargetAntennas[1], -1) {
			t.Fatalf("after goto the target is %v", s.TargetAntennas)
		}

		m, _ = r.Goto(robot.Target{Antennas: &[2]float64{0, 0}}, 2*time.Second, robot.MinJerk)
		time.Sleep(300 * time.Millisecond)
		if err := r.StopMove("not-a-move"); !errors.Is(err, fault.ErrNotFound) {
			t.Fatalf("stopping an unknown move: %v, want not found", err)
		}
		if err := r.StopMove(m.ID); err != nil {
			t.Fatal(err)
		}
		<-m.Done()
		if m.Completed() {
			t.Fatal("a stopped move reports completed")
		}
		stoppedAt := r.State().TargetAntennas[0]
		time.Sleep(100 * time.Millisecond)
		if got := r.State().TargetAntennas[0]; got != stoppedAt || got <= 0 || got >= 1 {
			t.Fatalf("target moved after stop or stopped outside the path: %v then %v", stoppedAt, got)
		}

		for _, tc := range []struct {
			d      time.Duration
			interp robot.Interpolation
		}{{0, robot.MinJerk}, {-time.Second, robot.Linear}, {time.Hour, robot.Linear}, {time.Second, "bouncy"}} {
			if _, err := r.Goto(robot.Target{}, tc.d, tc.interp); !errors.Is(err, fault.ErrInvalid) {
				t.Errorf("Goto(%v, %q) = %v, want invalid", tc.d, tc.interp, err)
			}
		}
	})
}

func TestAntennaTouchWhileAsleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newSimRobot(t)
		touches := make(chan struct{}, 10)
		r.OnAntennaTouch(func() { touches <- struct{}{} })
		time.Sleep(600 * time.Millisecond) // let the detector settle on the resting pose

		if err := r.PushAntenna(0, 0.1); err != nil {
			t.Fatal(err)
		}
		select {
		case <-touches:
			t.Fatal("a 0.1 rad nudge counted as a touch")
		case <-time.After(100 * time.Millisecond):
		}
		if err := r.PushAntenna(1, -0.5); err != nil {
			t.Fatal(err)
		}
		select {
		case <-touches:
		case <-time.After(time.Second):
			t.Fatal("a 0.5 rad push on a limp antenna was not detected")
		}
		select {
		case <-touches:
			t.Fatal("one push fired two touches")
		case <-time.After(200 * time.Millisecond):
		}

		// Commanded motion is not a touch.
		waitMove(t, r.WakeUp())
		select {
		case <-touches:
			t.Fatal("the wake-up move fired a touch")
		case <-time.After(700 * time.Millisecond):
		}
		// Awake, enabled motors pull the antenna back: each push is one touch.
		for i := range 2 {
			if err := r.PushAntenna(0, 0.6); err != nil {
				t.Fatal(err)
			}
			select {
			case <-touches:
			case <-time.After(time.Second):
				t.Fatalf("push %d on an awake robot not detected", i+1)
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err := r.PushAntenna(2, 1); !errors.Is(err, fault.ErrInvalid) {
			t.Fatalf("push on antenna 2: %v, want invalid", err)
		}
	})
}

// A hand still holding one antenna away from rest does not blind the detector to the other.
func TestAntennaTouchOfOneAntennaWhileTheOtherIsHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newSimRobot(t)
		touches := make(chan struct{}, 10)
		r.OnAntennaTouch(func() { touches <- struct{}{} })
		time.Sleep(600 * time.Millisecond) // let the detector settle on the resting pose

		for i, push := range []struct {
			antenna int
			delta   float64
		}{{1, -0.5}, {0, 0.5}} { // asleep, limp: the left stays where the hand left it
			if err := r.PushAntenna(push.antenna, push.delta); err != nil {
				t.Fatal(err)
			}
			select {
			case <-touches:
			case <-time.After(time.Second):
				t.Fatalf("touch %d (antenna %d) not detected", i+1, push.antenna)
			}
		}
	})
}

func TestMotorModes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newSimRobot(t)
		if err := r.SetMotorMode("turbo"); !errors.Is(err, fault.ErrInvalid) {
			t.Fatalf("unknown mode: %v", err)
		}
		if err := r.SetMotorMode(robot.MotorsGravityCompensation); err != nil {
			t.Fatal(err)
		}
		if got := r.State().ControlMode; got != robot.MotorsGravityCompensation {
			t.Fatalf("mode %s", got)
		}
		// The simulation follows targets in every mode, as the anchor's simulators do.
		want := [2]float64{0.3, -0.3}
		_ = r.SetTarget(robot.Target{Antennas: &want})
		time.Sleep(time.Second)
		if got := r.State().Antennas; got != want {
			t.Fatalf("antennas at %v in gravity compensation, want the target %v", got, want)
		}
		// A hand's push stays while the motors only hold against gravity, until the next target.
		if err := r.PushAntenna(0, 0.4); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		if got := r.State().Antennas[0]; math.Abs(got-0.7) > 1e-9 {
			t.Fatalf("the pushed antenna is at %v, want where the push left it (0.7)", got)
		}
		// Motors off: the robot is asleep, even one that was awake.
		waitMove(t, r.WakeUp())
		if !r.State().Awake {
			t.Fatal("not awake after the wake-up")
		}
		if err := r.SetMotorMode(robot.MotorsDisabled); err != nil {
			t.Fatal(err)
		}
		if s := r.State(); s.Awake || s.ControlMode != robot.MotorsDisabled {
			t.Fatalf("motors off: awake=%v mode=%s, want asleep with the motors disabled", s.Awake, s.ControlMode)
		}
	})
}

func TestAudioLoopback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newSimRobot(t)
		if _, err := r.AudioSample(0); !errors.Is(err, fault.ErrRefused) {
			t.Fatalf("reading before start_recording: %v, want refused", err)
		}
		r.StartRecording()
		tone := make([]float32, robot.SampleRate/10*robot.Channels) // 100 ms: 440 Hz on the left, silence on the right
		for i := 0; i < len(tone); i += robot.Channels {
			tone[i] = float32(0.5 * math.Sin(2*math.Pi*440*float64(i/robot.Channels)/robot.SampleRate))
		}
		if err := r.PushAudio(tone); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		got, err := r.AudioSample(0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) < robot.SampleRate/5*robot.Channels || len(got)%robot.Channels != 0 {
			t.Fatalf("300 ms of recording gave %d samples, want at least 200 ms of stereo frames", len(got))
		}
		var loudLeft, loudRight int
		for i, s := range got {
			if math.Abs(float64(s)) > 0.4 {
				if i%2 == 0 {
					loudLeft++
				} else {
					loudRight++
				}
			}
		}
		if loudLeft < 100 || loudRight != 0 {
			t.Fatalf("the pushed tone on the left was recorded with %d loud samples on the left and %d on the right", loudLeft, loudRight)
		}
		if err := r.PushAudio([]float32{float32(math.Inf(1)), 0}); !errors.Is(err, fault.ErrInvalid) {
			t.Fatalf("pushing +Inf: %v", err)
		}
		if err := r.PushAudio([]float32{0.1, 0.2, 0.3}); !errors.Is(err, fault.ErrInvalid) {
			t.Fatalf("pushing half a stereo frame: %v", err)
		}
	})
}

// wav builds a 16-bit PCM WAV file.
func wav(rate, channels int, frames [][]int16) []byte {
	data := make([]byte, 0, len(frames)*channels*2)
	for _, f := range frames {
		for _, s := range f {
			data = binary.LittleEndian.AppendUint16(data, uint16(s))
		}
	}
	b := []byte("RIFF")
	b = binary.LittleEndian.AppendUint32(b, uint32(36+len(data)))
	b = append(b, "WAVEfmt "...)
	b = binary.LittleEndian.AppendUint32(b, 16)
	b = binary.LittleEndian.AppendUint16(b, 1)
	b = binary.LittleEndian.AppendUint16(b, uint16(channels))
	b = binary.LittleEndian.AppendUint32(b, uint32(rate))
	b = binary.LittleEndian.AppendUint32(b, uint32(rate*channels*2))
	b = binary.LittleEndian.AppendUint16(b, uint16(channels*2))
	b = binary.LittleEndian.AppendUint16(b, 16)
	b = append(b, "data"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

func TestPlaySound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newSimRobot(t)
		dir := t.TempDir()
		frames := make([][]int16, 8000) // 1 s of stereo at 8 kHz: 0.5 on the left, -0.25 on the right
		for i := range frames {
			frames[i] = []int16{16384, -8192}
		}
		path := filepath.Join(dir, "beep.wav")
		if err := os.WriteFile(path, wav(8000, 2, frames), 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := r.PlaySound(path)
		if err != nil {
			t.Fatal(err)
		}
		if d != time.Second {
			t.Fatalf("duration %v, want 1s", d)
		}
		samples, err := robot.DecodeWAV(wav(8000, 2, frames))
		if err != nil || len(samples) != robot.SampleRate*robot.Channels || math.Abs(float64(samples[100])-0.5) > 1e-3 || math.Abs(float64(samples[101])+0.25) > 1e-3 {
			t.Fatalf("decoded %d samples (first %v), err %v; want 16000 frames of (0.5, -0.25)", len(samples), samples[:2], err)
		}
		mono, err := robot.DecodeWAV(wav(16000, 1, [][]int16{{16384}, {-16384}}))
		if err != nil || len(mono) != 4 || mono[0] != mono[1] || mono[2] != mono[3] || mono[0] != 0.5 {
			t.Fatalf("a mono file decodes to %v, %v; want each sample on both channels", mono, err)
		}

		if _, err := r.PlaySound(filepath.Join(dir, "missing.wav")); !errors.Is(err, fault.ErrNotFound) {
			t.Fatalf("missing file: %v", err)
		}
		junk := filepath.Join(dir, "junk.wav")
		_ = os.WriteFile(junk, []byte("not a wav file at all"), 0o644)
		if _, err := r.PlaySound(junk); !errors.Is(err, fault.ErrInvalid) {
			t.Fatalf("junk file: %v", err)
		}
	})
}

func FuzzDecodeWAV(f *testing.F) {
	f.Add(wav(16000, 1, [][]int16{{1}, {2}, {3}}))
	f.Add(wav(44100, 2, [][]int16{{-1, 1}}))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEdata\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		samples, err := robot.DecodeWAV(data)
		if err != nil {
			return
		}
		for i, s := range samples {
			if s < -1 || s > 1 || s != s {
				t.Fatalf("sample %d = %v is outside [-1, 1]", i, s)
			}
		}
	})
}
