package hardware_test

import (
	"context"
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/hardware"
	"github.com/robothub/robothub/adapters/hardware/busemu"
	"github.com/robothub/robothub/adapters/hardware/dynamixel"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/robot"
)

// onBus starts an emulated bus with the robot asleep on it, and a Robot on the hardware backend.
func onBus(t *testing.T) (*robot.Robot, *hardware.Hardware, *busemu.Bus) {
	t.Helper()
	emu, err := busemu.Start(busemu.Options{Config: hardware.DefaultConfig(), Asleep: true, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	// The emulator shares this machine's CPU with the test (and, under go test ./..., with other
	// packages' tests): give it time to answer, or a loaded machine reads a motor as silent.
	hw, err := hardware.New(hardware.Options{Port: emu.Path(), Config: hardware.DefaultConfig(), Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r := robot.New(hw, nil)
	t.Cleanup(func() { r.Close() })
	return r, hw, emu
}

func poseNear(a, b robot.HeadPose, tol float64) bool {
	return math.Abs(a.X-b.X) < tol && math.Abs(a.Y-b.Y) < tol && math.Abs(a.Z-b.Z) < tol &&
		math.Abs(a.Roll-b.Roll) < tol && math.Abs(a.Pitch-b.Pitch) < tol && math.Abs(a.Yaw-b.Yaw) < tol
}

// waitFor polls cond every control period until it holds.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(hardware.Period)
	}
}

func motor(s robot.HardwareStatus, name string) robot.MotorHealth {
	for _, m := range s.Motors {
		if m.Name == name {
			return m
		}
	}
	return robot.MotorHealth{}
}

func TestHardwareWakesAndFollowsAGoto(t *testing.T) {
	r, hw, emu := onBus(t)
	// A tick is 0.09°: the pose read back from the motors is within a few of them.
	const tol = 3e-3
	if s := r.State(); !poseNear(s.HeadPose, robot.SleepPose.Head, tol) || s.Backend != "hardware" {
		t.Fatalf("asleep: head %+v on %q, want the sleep pose %+v read from the motors", s.HeadPose, s.Backend, robot.SleepPose.Head)
	}
	if emu.Torque(11) {
		t.Fatal("torque is on before the robot woke up")
	}
	<-r.WakeUp().Done()
	waitFor(t, 5*time.Second, "the head reaches the default pose", func() bool { return poseNear(r.State().HeadPose, robot.HeadPose{}, tol) })
	for id := byte(10); id <= 18; id++ {
		if !emu.Torque(id) {
			t.Errorf("motor %d: torque off after wake-up", id)
		}
	}

	head := robot.HeadPose{Z: 0.01, Roll: 0.15, Yaw: -0.3}
	antennas := [2]float64{0.5, -0.5}
	yaw := 0.4
	m, err := r.Goto(robot.Target{Head: &head, Antennas: &antennas, BodyYaw: &yaw}, 300*time.Millisecond, robot.MinJerk)
	if err != nil {
		t.Fatal(err)
	}
	<-m.Done()
	waitFor(t, 5*time.Second, "the motors reach the goto's pose", func() bool {
		s := r.State()
		return poseNear(s.HeadPose, head, tol) && math.Abs(s.BodyYaw-yaw) < tol && math.Abs(s.Antennas[0]-0.5) < tol
	})
	// Antennas are [right, left], as in the anchor SDK: motor 17 is the right antenna.
	if got := dynamixel.Radians(emu.Position(17)); math.Abs(got-0.5) > tol {
		t.Errorf("right antenna motor at %.4f rad, want 0.5", got)
	}
	if got := dynamixel.Radians(emu.Position(18)); math.Abs(got+0.5) > tol {
		t.Errorf("left antenna motor at %.4f rad, want -0.5", got)
	}
	st := hw.Status()
	if !st.Connected || st.ControlLoop.Ticks == 0 || st.ControlLoop.PeriodP50Ms < 15 || st.ControlLoop.PeriodP50Ms > 25 {
		t.Errorf("status %+v, want a connected bus and a loop at about 20 ms", st)
	}
	for _, mh := range st.Motors {
		if mh.State != "ok" || mh.Error != nil || mh.LastSeen == nil {
			t.Errorf("motor %s: %+v, want ok", mh.Name, mh)
		}
	}
	if n := emu.GoalsRefused(); n != 0 {
		t.Errorf("%d goals beyond a motor's limits reached the bus", n)
	}
}

func TestHardwareRefusesUnreachablePoses(t *testing.T) {
	r, _, emu := onBus(t)
	<-r.WakeUp().Done()
	before := emu.Instructions()
	for name, head := range map[string]robot.HeadPose{
		"3 cm up, 35° of roll":    {Z: 0.03, Roll: 0.6},
		"3 cm forward, 40° pitch": {X: 0.03, Pitch: 0.7},
	} {
		_, err := r.Goto(robot.Target{Head: &head}, time.Second, robot.MinJerk)
		if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), "out of the robot's reach") {
			t.Errorf("goto %s: err = %v, want an invalid-target error saying it is out of reach", name, err)
		}
		if err := r.SetTarget(robot.Target{Head: &head}); !errors.Is(err, fault.ErrInvalid) {
			t.Errorf("set_target %s: err = %v, want it refused", name, err)
		}
	}
	if s := r.State(); s.Move != nil || !poseNear(s.TargetHeadPose, robot.HeadPose{}, 1e-9) {
		t.Errorf("a refused target changed the robot: %+v", s)
	}
	// The loop went on (instructions flowed) and no goal beyond a limit was ever sent.
	waitFor(t, 5*time.Second, "the loop keeps running", func() bool { return emu.Instructions() > before+10 })
	if n := emu.GoalsRefused(); n != 0 {
		t.Errorf("%d goals beyond a motor's limits reached the bus", n)
	}
}

func TestHardwareSurvivesASilentMotorAndAHardwareError(t *testing.T) {
	r, hw, emu := onBus(t)
	<-r.WakeUp().Done()
	emu.SetSilent(13, true) // stewart_3
	waitFor(t, 5*time.Second, "stewart_3 is reported silent", func() bool { return motor(hw.Status(), "stewart_3").State == "silent" })
	if e := motor(hw.Status(), "stewart_3").Error; e == nil || !strings.Contains(*e, "stopped answering") {
		t.Errorf("silent motor's error: %v", e)
	}
	// The others are still driven.
	antennas := [2]float64{-0.7, 0.7}
	m, err := r.Goto(robot.Target{Antennas: &antennas}, 200*time.Millisecond, robot.Linear)
	if err != nil {
		t.Fatal(err)
	}
	<-m.Done()
	waitFor(t, 5*time.Second, "the antennas move with a leg silent", func() bool { return math.Abs(r.State().Antennas[0]+0.7) < 3e-3 })
	if got := motor(hw.Status(), "left_antenna"); got.State != "ok" {
		t.Errorf("left antenna: %+v", got)
	}

	// Back: it is set up again and holds.
	emu.SetSilent(13, false)
	waitFor(t, 5*time.Second, "stewart_3 answers again", func() bool { return motor(hw.Status(), "stewart_3").State == "ok" })
	waitFor(t, 5*time.Second, "stewart_3's torque is back on", func() bool { return emu.Torque(13) })

	emu.RaiseHardwareError(17, 0x20) // overload: in the shutdown mask, so its torque goes off
	waitFor(t, 5*time.Second, "the overload is reported", func() bool {
		mh := motor(hw.Status(), "right_antenna")
		return mh.State == "hardware_error" && len(mh.HardwareErrors) == 1 && mh.HardwareErrors[0] == "overload error"
	})
	// What the motor says, not what was asked: it turned its torque off.
	waitFor(t, 5*time.Second, "the right antenna reports its torque off", func() bool {
		mh := motor(hw.Status(), "right_antenna")
		return mh.TorqueEnabled != nil && !*mh.TorqueEnabled
	})
	if mh := motor(hw.Status(), "right_antenna"); mh.Error == nil || !strings.Contains(*mh.Error, "reports: overload error; it turned its torque off") {
		t.Errorf("right antenna's error: %v", mh.Error)
	}
	if on := r.MotorTorque(); on["right_antenna"] || !on["left_antenna"] || !on["stewart_1"] {
		t.Errorf("motors' torque %v: want the right antenna off as it says, the others on", on)
	}
	if mh := motor(hw.Status(), "left_antenna"); mh.State != "ok" || mh.TorqueEnabled == nil || !*mh.TorqueEnabled {
		t.Errorf("left antenna after the right one's error: %+v", mh)
	}
}

// The status carries what each motor says about itself: its torque, its load, voltage and
// temperature, and the hardware errors they raise.
func TestHardwareReportsWhatTheMotorsSay(t *testing.T) {
	r, hw, emu := onBus(t)
	waitFor(t, 5*time.Second, "every motor's telemetry", func() bool {
		for _, mh := range hw.Status().Motors {
			if mh.TemperatureC == nil || mh.TorqueEnabled == nil {
				return false
			}
		}
		return true
	})
	mh := motor(hw.Status(), "stewart_4")
	if *mh.TorqueEnabled || *mh.TemperatureC != 30 || *mh.VoltageV != 5.0 || *mh.CurrentMA != 0 {
		t.Errorf("stewart_4 asleep: %+v torque %v, %v °C, %v V, %v mA; want off, 30 °C, 5.0 V, 0 mA", mh, *mh.TorqueEnabled, *mh.TemperatureC, *mh.VoltageV, *mh.CurrentMA)
	}
	<-r.WakeUp().Done()
	emu.SetTemperature(14, 72) // beyond its 70 °C limit: overheating, in its shutdown mask
	waitFor(t, 5*time.Second, "stewart_4 reports overheating at 72 °C, its torque off", func() bool {
		mh := motor(hw.Status(), "stewart_4")
		return mh.State == "hardware_error" && slices.Equal(mh.HardwareErrors, []string{"overheating error"}) &&
			mh.TemperatureC != nil && *mh.TemperatureC == 72 && !*mh.TorqueEnabled
	})
	if on := r.MotorTorque(); on["stewart_4"] || !on["stewart_5"] {
		t.Errorf("torque %v: stewart_4 shut itself down, stewart_5 holds", on)
	}
}

func TestHardwareReopensAnUnpluggedPort(t *testing.T) {
	r, hw, emu := onBus(t)
	<-r.WakeUp().Done()
	emu.Unplug()
	waitFor(t, 5*time.Second, "the bus is reported disconnected", func() bool {
		s := hw.Status()
		return !s.Connected && s.Error != nil
	})
	// A move the robot cannot make is refused, naming the port, not accepted and lost.
	away := robot.HeadPose{Yaw: 0.3}
	if _, err := r.Goto(robot.Target{Head: &away}, 200*time.Millisecond, robot.MinJerk); !errors.Is(err, fault.ErrUnavailable) || !strings.Contains(err.Error(), emu.Path()) {
		t.Errorf("goto while unplugged: %v, want unavailable naming %s", err, emu.Path())
	}
	if err := r.SetTarget(robot.Target{Head: &away}); !errors.Is(err, fault.ErrUnavailable) {
		t.Errorf("set_target while unplugged: %v, want unavailable", err)
	}
	if s := r.State(); s.Move != nil || !poseNear(s.TargetHeadPose, robot.HeadPose{}, 1e-9) {
		t.Errorf("a refused target changed the robot: %+v", s)
	}
	if err := emu.Replug(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the bus is reopened", func() bool {
		s := hw.Status()
		return s.Connected && s.Reconnects == 1 && motor(s, "stewart_1").State == "ok"
	})
	head := robot.HeadPose{Pitch: -0.2}
	m, err := r.Goto(robot.Target{Head: &head}, 200*time.Millisecond, robot.MinJerk)
	if err != nil {
		t.Fatal(err)
	}
	<-m.Done()
	waitFor(t, 5*time.Second, "the head moves after the port came back", func() bool { return poseNear(r.State().HeadPose, head, 3e-3) })
}

func TestHardwareGravityCompensationYieldsToAHand(t *testing.T) {
	r, hw, emu := onBus(t)
	<-r.WakeUp().Done()
	if err := r.SetMotorMode(robot.MotorsGravityCompensation); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the antenna is compliant and on", func() bool {
		return emu.OperatingMode(18) == dynamixel.ModeCurrentBasedPosition && emu.Torque(18)
	})
	start := emu.Position(18)
	emu.Push(18, 300) // a hand turns the left antenna by 26°
	ticks := hw.Status().ControlLoop.Ticks
	waitFor(t, 5*time.Second, "ten control-loop ticks", func() bool { return hw.Status().ControlLoop.Ticks >= ticks+10 })
	// It may give back a little before the loop sees the push, not the whole of it.
	if got := emu.Position(18); got-start < 200 {
		t.Errorf("pushed antenna at %d, want it to stay about where the hand left it (%d)", got, start+300)
	}
	left := emu.Position(18)
	if err := r.SetMotorMode(robot.MotorsEnabled); err != nil {
		t.Fatal(err)
	}
	// Enabled, it holds where it was left, and pulls back when pushed.
	emu.Push(18, 300)
	waitFor(t, 5*time.Second, "an enabled antenna goes back to its goal", func() bool { return math.Abs(float64(emu.Position(18)-left)) < 5 })
}

func TestHardwareSwitchesSingleMotors(t *testing.T) {
	r, hw, emu := onBus(t)
	<-r.WakeUp().Done()
	// Where the awake left antenna is held: the default pose's angle (not the motor's centre).
	awakeTicks := hw.Status().ControlLoop.Ticks
	waitFor(t, 5*time.Second, "five control-loop ticks after waking", func() bool { return hw.Status().ControlLoop.Ticks >= awakeTicks+5 })
	held := emu.Position(18)
	if err := r.SetMotorTorque([]string{"left_antenna", "stewart_2"}, false); err != nil {
		t.Fatal(err)
	}
	// What was asked stands while the switch is on its way, and once the motors say it.
	if on := r.MotorTorque(); on["left_antenna"] || on["stewart_2"] || !on["right_antenna"] {
		t.Errorf("torque right after switching two motors off: %v", on)
	}
	waitFor(t, 5*time.Second, "the left antenna and stewart_2 go limp", func() bool { return !emu.Torque(18) && !emu.Torque(12) })
	for _, id := range []byte{10, 11, 13, 14, 15, 16, 17} {
		if !emu.Torque(id) {
			t.Errorf("motor %d went limp too", id)
		}
	}
	// A limp antenna stays where a hand puts it, through five ticks of the control loop.
	pushed := emu.Position(18) + 200
	emu.Push(18, 200)
	ticks := hw.Status().ControlLoop.Ticks
	waitFor(t, 5*time.Second, "five control-loop ticks", func() bool { return hw.Status().ControlLoop.Ticks >= ticks+5 })
	if got := emu.Position(18); got != pushed {
		t.Errorf("limp left antenna at %d, want %d where it was pushed", got, pushed)
	}
	if err := r.SetMotorTorque([]string{"left_antenna"}, true); err != nil {
		t.Fatal(err)
	}
	if on := r.MotorTorque(); !on["left_antenna"] || on["stewart_2"] {
		t.Errorf("torque right after switching the left antenna back on: %v", on)
	}
	// Back on, it tracks its target again, as on the simulation.
	waitFor(t, 5*time.Second, "the left antenna returns to its target", func() bool { return emu.Torque(18) && emu.Position(18) == held })
	waitFor(t, 5*time.Second, "the motors say what was asked", func() bool {
		st := hw.Status()
		leg, antenna := motor(st, "stewart_2").TorqueEnabled, motor(st, "left_antenna").TorqueEnabled
		return leg != nil && !*leg && antenna != nil && *antenna
	})
	if on := r.MotorTorque(); !on["left_antenna"] || on["stewart_2"] {
		t.Errorf("torque as the motors say it: %v", on)
	}
}

func TestHardwareNeedsMotors(t *testing.T) {
	emu, err := busemu.Start(busemu.Options{Config: hardware.DefaultConfig(), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	for id := byte(10); id <= 18; id++ {
		emu.SetSilent(id, true)
	}
	_, err = hardware.New(hardware.Options{Port: emu.Path(), Config: hardware.DefaultConfig()})
	if err == nil || !strings.Contains(err.Error(), "no motor answered on "+emu.Path()) || !strings.Contains(err.Error(), "is the robot powered on?") {
		t.Fatalf("err = %v, want no motor answered", err)
	}
	// Motors there, at other ids than the config's: the error says which ids answered.
	for id := byte(10); id <= 18; id++ {
		emu.SetSilent(id, false)
	}
	shifted := hardware.DefaultConfig()
	for i := range shifted.Motors {
		shifted.Motors[i].ID += 100
	}
	_, err = hardware.New(hardware.Options{Port: emu.Path(), Config: shifted})
	if err == nil || !strings.Contains(err.Error(), "motors with ids [10 11 12 13 14 15 16 17 18] did") {
		t.Fatalf("err = %v, want the ids that answered a broadcast ping", err)
	}
	_, err = hardware.New(hardware.Options{Port: t.TempDir() + "/ttyNone", Config: hardware.DefaultConfig()})
	if err == nil || !strings.Contains(err.Error(), "ttyNone") {
		t.Fatalf("err = %v, want the port named", err)
	}
}

// At start-up a motor answers one READ of its setup late (a lagging adapter, a busy motor): the
// daemon must still read its settings right, not take the late answer for the next item's and
// report a hardware config that differs (stewart_2's position limits were read as its homing
// offset).
func TestHardwareReadsTheSetupRightWhenAnAnswerIsLate(t *testing.T) {
	const timeout = 40 * time.Millisecond
	emu, err := busemu.Start(busemu.Options{Config: hardware.DefaultConfig(), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	// Its ping and the first answer after it go on time; the next ones come 1.5, 1 and 1.5 times
	// the timeout late: the first after the Bus stopped waiting for it, the second (to the request
	// sent again) in the middle of the wait of the request after, whose own answer is late.
	emu.DelayAnswers(12, 2, timeout*3/2, timeout, timeout*3/2)
	hw, err := hardware.New(hardware.Options{Port: emu.Path(), Config: hardware.DefaultConfig(), Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hw.Close() })
	st := hw.Status()
	if len(st.ConfigWarnings) != 0 {
		t.Errorf("config warnings %q: the motors are set up exactly as the config says", st.ConfigWarnings)
	}
	if mh := motor(st, "stewart_2"); mh.State != "ok" || mh.Position == nil || math.Abs(*mh.Position) > 1e-9 {
		t.Errorf("stewart_2: %+v, want ok at 0 rad", mh)
	}
}

// A motor left at Status Return Level 0 (it answers pings only) is set up like the others: the
// driver asks it to answer everything (a RAM item, not EEPROM).
func TestHardwareSetsUpAMotorThatAnswersOnlyPings(t *testing.T) {
	cfg := hardware.DefaultConfig()
	emu, err := busemu.Start(busemu.Options{Config: cfg, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	// The set-up write is not under test: a generous slack for a loaded machine.
	bus, err := dynamixel.Open(emu.Path(), cfg.Baud, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Write(15, dynamixel.AddrStatusReturn, []byte{0}); err != nil {
		t.Fatal(err)
	}
	bus.Close()
	hw, err := hardware.New(hardware.Options{Port: emu.Path(), Config: cfg, Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hw.Close() })
	if st := hw.Status(); len(st.ConfigWarnings) != 0 || motor(st, "stewart_5").State != "ok" {
		t.Fatalf("status %+v, want stewart_5 set up and ok", st)
	}
}

// Shut down while awake, the robot on the bus lies down before the motors' torque goes off: the
// motors end off, in the sleep pose.
func TestHardwareShutdownLaysTheHeadDown(t *testing.T) {
	r, _, emu := onBus(t)
	<-r.WakeUp().Done()
	rest, err := busemu.RestingAt(hardware.DefaultConfig(), robot.SleepPose)
	if err != nil {
		t.Fatal(err)
	}
	if laid, err := r.Shutdown(context.Background()); err != nil || !laid {
		t.Fatalf("shutdown: laid down %v, %v", laid, err)
	}
	// The last sync write is on the line; the emulated motors take it as they read it.
	waitFor(t, 5*time.Second, "every motor's torque is off", func() bool {
		return !slices.ContainsFunc(slices.Collect(maps.Keys(rest)), emu.Torque)
	})
	for id, want := range rest {
		if got := emu.Position(id); math.Abs(float64(got-want)) > 40 {
			t.Errorf("motor %d let go at %d, want its sleep position %d", id, got, want)
		}
	}
}
