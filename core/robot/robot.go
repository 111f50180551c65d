// Package robot is the robot the daemon serves to apps: its state (head pose, antennas, body yaw,
// motor mode, awake or asleep), immediate targets and timed moves, audio, and the Backend that a
// real robot or the in-process simulation implements.
package robot

import (
	"cmp"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/robot/kinematics"
)

// ControlPeriod is the period of the control loop that advances moves and reads the joints.
const ControlPeriod = 10 * time.Millisecond

// GotoSleepDuration is the length of the move that lays the head down when the daemon stops.
const GotoSleepDuration = time.Second

// Antenna touch detection: a touch is a displacement of an antenna of at least touchPress radians
// from where it settled; the detector re-arms once the antenna is back within touchRelease.
// Commanded motion (and touchSettle after it) is never a touch.
const (
	touchPress   = 0.25
	touchRelease = 0.10
	touchSettle  = 500 * time.Millisecond
)

// State is a snapshot of the robot.
type State struct {
	HeadPose       HeadPose   `json:"head_pose"`
	Antennas       [2]float64 `json:"antennas_position"`
	BodyYaw        float64    `json:"body_yaw"`
	TargetHeadPose HeadPose   `json:"target_head_pose"`
	TargetAntennas [2]float64 `json:"target_antennas_position"`
	TargetBodyYaw  float64    `json:"target_body_yaw"`
	// HeadJoints are the head's seven joint angles in radians, [body yaw, stewart_1 … stewart_6], as
	// the platform's inverse kinematics gives them for the present pose; null when it has none.
	HeadJoints  []float64 `json:"head_joints"`
	ControlMode MotorMode `json:"control_mode"`
	Awake       bool      `json:"awake"`
	Move        *MoveInfo `json:"move"`
	Recording   bool      `json:"recording"`
	Backend     string    `json:"backend"`
	Timestamp   time.Time `json:"timestamp"`
}

// MoveInfo describes a running move.
type MoveInfo struct {
	UUID     string  `json:"uuid"`
	Kind     string  `json:"kind"`
	Duration float64 `json:"duration"`
	Elapsed  float64 `json:"elapsed"`
}

// Move is a handle on a timed move: one step (a goto), or several played one after the other
// (the named moves: wake up, go to sleep).
type Move struct {
	ID   string
	Kind string

	steps     []Step
	step      int       // the step playing
	stepStart time.Time // when it started
	from      Joints    // where it started from
	start     time.Time
	dur       time.Duration  // of all the steps
	onDone    func(r *Robot) // runs with r.mu held when the move reaches its end
	done      chan struct{}
	completed bool
}

// Step is one part of a move: reach To over Duration with Interp, after playing Sound (a sound
// PlaySound takes) as the step starts. A step whose To is where the previous one ended holds still.
type Step struct {
	To       Joints
	Duration time.Duration
	Interp   Interpolation
	Sound    string
}

// Done is closed when the move ends, completed or not.
func (m *Move) Done() <-chan struct{} { return m.done }

// Duration is the move's length, all of its steps.
func (m *Move) Duration() time.Duration { return m.dur }

// Completed reports, once Done is closed, whether the move reached its end (rather than being
// stopped or replaced).
func (m *Move) Completed() bool {
	select {
	case <-m.done:
		return m.completed
	default:
		return false
	}
}

// Robot controls a Backend: it owns the targets, runs timed moves in a fixed-rate control loop,
// records audio and detects antenna touches. Its methods are safe for concurrent use.
type Robot struct {
	backend Backend
	media   Media // the sound and camera, when not the backend's (UseMedia)
	log     *slog.Logger

	mu              sync.Mutex
	target          Joints
	present         Joints
	mode            MotorMode
	awake           bool
	move            *Move
	targetAt        time.Time // when the target last changed by command
	touchRef        *[2]float64
	touchArmed      [2]bool // per antenna: right, left
	recording       bool
	recorded        []float32
	micScratch      []float32
	torque          map[string]bool // per-motor torque while enabled; nil: all as the mode says
	manualBodyYaw   bool            // automatic body yaw off (SetAutomaticBodyYaw)
	recordingMotion bool
	wob             wobble
	track           tracking
	motionRec       []MotionFrame
	onTouch         []func()
	onWake          []func()
	close           func() error // Close, once
	leaving         bool         // Hold: the backend is left with its motors holding
	quit, ended     chan struct{}
}

const maxRecordedSamples = 30 * SampleRate * Channels

// New starts a Robot on backend. The robot starts asleep, in whatever pose the backend reports,
// with its motors disabled; call WakeUp to wake it.
func New(backend Backend, log *slog.Logger) *Robot {
	r := &Robot{
		backend: backend,
		log:     cmp.Or(log, slog.New(slog.DiscardHandler)),
		mode:    MotorsDisabled,
		quit:    make(chan struct{}),
		ended:   make(chan struct{}),
	}
	r.present = backend.Read(time.Now())
	r.target = r.present
	backend.SetMotorMode(MotorsDisabled)
	backend.Command(r.target)
	r.start()
	return r
}

// start starts the control loop, which Close stops.
func (r *Robot) start() {
	r.close = sync.OnceValue(func() error {
		close(r.quit)
		<-r.ended
		if l, ok := r.backend.(Leaver); ok && r.leaving {
			return l.Leave()
		}
		return r.backend.Close()
	})
	go r.loop()
}

// UseMedia makes the robot speak, listen and look through m instead of its backend. Call it
// before the robot is used.
func (r *Robot) UseMedia(m Media) {
	r.mu.Lock()
	r.media = m
	r.mu.Unlock()
}

// Close stops the control loop and closes the backend.
func (r *Robot) Close() error { return r.close() }

func (r *Robot) loop() {
	defer close(r.ended)
	every(ControlPeriod, r.quit, r.tick)
	r.mu.Lock()
	r.endMove(false)
	r.mu.Unlock()
}

// every calls tick every period until quit is closed.
func every(period time.Duration, quit <-chan struct{}, tick func(time.Time)) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case now := <-t.C:
			tick(now)
		}
	}
}

// tick advances the running move, sends the target, reads the joints and the microphone, and
// looks for antenna touches.
func (r *Robot) tick(now time.Time) {
	var fire []func()
	var sounds []string
	r.mu.Lock()
	moving := r.move != nil
	if m := r.move; m != nil {
		sounds = r.advance(m, now)
		if m.step >= len(m.steps) {
			if m.onDone != nil {
				m.onDone(r)
			}
			r.endMove(true)
			if m.Kind == "wake_up" {
				fire = append(fire, r.onWake...)
			}
		}
		r.targetAt = now
	}
	if moving || r.wob.on || r.track.active() || r.wob.levels != nil || r.track.release {
		r.backend.Command(r.wobbled(r.tracked(r.target), now))
		if !r.wob.on && !r.track.active() {
			r.wob.levels = nil // back on the target: nothing more to add
		}
		r.track.release = false
	}
	r.recordMotion(now)
	r.present = r.backend.Read(now)
	if r.media != nil {
		r.micScratch = r.media.Listen(r.micScratch[:0], now)
	} else {
		r.micScratch = r.backend.Listen(r.micScratch[:0], now)
	}
	if r.recording {
		r.recorded = append(r.recorded, r.micScratch...)
		if over := len(r.recorded) - maxRecordedSamples; over > 0 {
			r.recorded = append(r.recorded[:0], r.recorded[over:]...)
		}
	}
	if r.detectTouch(now) {
		r.log.Info("antenna touch detected", "antennas", r.present.Antennas, "awake", r.awake)
		fire = append(fire, r.onTouch...)
	}
	r.mu.Unlock()
	for _, name := range sounds {
		if _, err := r.PlaySound(name); err != nil {
			r.log.Warn("a move's sound did not play", "sound", name, "err", err)
		}
	}
	for _, f := range fire {
		go f()
	}
}

// advance sets the target where move m is at now, moving on through the steps that have ended
// (each from the exact end of the one before, so that a long move does not drift), and returns
// the sounds of the steps that started. Call with r.mu held.
func (r *Robot) advance(m *Move, now time.Time) (sounds []string) {
	for m.step < len(m.steps) {
		st := m.steps[m.step]
		end := m.stepStart.Add(st.Duration)
		if now.Before(end) {
			frac := float64(now.Sub(m.stepStart)) / float64(st.Duration)
			r.target = between(m.from, st.To, st.Interp.progress(frac))
			return sounds
		}
		r.target = st.To
		m.from, m.stepStart = st.To, end
		m.step++
		if m.step < len(m.steps) && m.steps[m.step].Sound != "" {
			sounds = append(sounds, m.steps[m.step].Sound)
		}
	}
	return sounds
}

// detectTouch reports a new antenna touch. Each antenna arms and fires on its own, so a touch of
// one antenna is seen while the other is still held away from rest. Call with r.mu held.
func (r *Robot) detectTouch(now time.Time) bool {
	if r.move != nil || now.Sub(r.targetAt) < touchSettle {
		r.touchRef, r.touchArmed = nil, [2]bool{}
		return false
	}
	a := r.present.Antennas
	if r.touchRef == nil {
		r.touchRef, r.touchArmed = &a, [2]bool{true, true}
		return false
	}
	touched := false
	for i := range a {
		dev := math.Abs(a[i] - r.touchRef[i])
		switch {
		case !r.touchArmed[i] && dev <= touchRelease:
			r.touchArmed[i] = true
		case r.touchArmed[i] && dev >= touchPress:
			r.touchArmed[i] = false
			touched = true
		}
	}
	return touched
}

// endMove ends the running move. Call with r.mu held.
func (r *Robot) endMove(completed bool) {
	if r.move == nil {
		return
	}
	r.move.completed = completed
	close(r.move.done)
	r.move = nil
}

// State returns a snapshot of the robot, with joints read at the time of the call.
func (r *Robot) State() State {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.present = r.backend.Read(now)
	s := State{
		HeadPose: r.present.Head, Antennas: r.present.Antennas, BodyYaw: r.present.BodyYaw,
		TargetHeadPose: r.target.Head, TargetAntennas: r.target.Antennas, TargetBodyYaw: r.target.BodyYaw,
		ControlMode: r.mode, Awake: r.awake, Recording: r.recording, Backend: r.backend.Name(),
		Timestamp: now, HeadJoints: headJoints(r.present),
	}
	if m := r.move; m != nil {
		s.Move = &MoveInfo{UUID: m.ID, Kind: m.Kind, Duration: m.dur.Seconds(), Elapsed: now.Sub(m.start).Seconds()}
	}
	return s
}

// Awake reports whether the robot is awake.
func (r *Robot) Awake() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.awake
}

// SetTarget sets targets immediately, ending any running move.
func (r *Robot) SetTarget(t Target) error {
	if err := t.check(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	to := r.yawRule(t.applyTo(r.target))
	if err := r.validateMove(to, to, Linear); err != nil { // a jump: only where it lands matters
		return err
	}
	r.endMove(false)
	r.target = to
	r.targetAt = time.Now()
	r.backend.Command(r.target)
	return nil
}

// Goto starts a move from the current target to t over duration, replacing any running move.
func (r *Robot) Goto(t Target, duration time.Duration, interp Interpolation) (*Move, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if duration <= 0 || duration.Seconds() > maxMoveSeconds {
		return nil, fault.Invalidf("duration must be more than 0 and at most %g seconds", maxMoveSeconds)
	}
	if _, err := ParseInterpolation(string(interp)); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	to := r.yawRule(t.applyTo(r.target))
	if err := r.validateMove(r.target, to, interp); err != nil {
		return nil, err
	}
	return r.startMove("goto", to, duration, interp, nil), nil
}

// startMove replaces the running move with one step. Call with r.mu held.
func (r *Robot) startMove(kind string, to Joints, dur time.Duration, interp Interpolation, onDone func(*Robot)) *Move {
	return r.startSequence(kind, []Step{{To: to, Duration: dur, Interp: interp}}, onDone)
}

// startSequence replaces the running move with steps played one after the other. The sound of the
// first step plays when the move starts. Call with r.mu held.
func (r *Robot) startSequence(kind string, steps []Step, onDone func(*Robot)) *Move {
	r.endMove(false)
	now := time.Now()
	m := &Move{
		ID: uuid.NewString(), Kind: kind, steps: steps, from: r.target, start: now, stepStart: now,
		onDone: onDone, done: make(chan struct{}),
	}
	for _, st := range steps {
		m.dur += st.Duration
	}
	if len(steps) > 0 && steps[0].Sound != "" {
		name := steps[0].Sound
		go func() { _, _ = r.PlaySound(name) }()
	}
	r.move = m
	r.targetAt = now
	return m
}

// The named moves of the public robot: waking up goes to the init pose (antennas 10° off the
// vertical, which keeps them from shaking) in 2 s, says hello with a sound and a 20° roll of the
// head, and comes back; going to sleep passes by the init pose when far from it, sighs, folds in 2 s
// and rests 2 s before the motors go limp.
var (
	initAntennas    = DefaultPose.Antennas
	wakeUpRoll      = 20 * math.Pi / 180
	sleepSettleTime = 2 * time.Second
)

// WakeUp enables the motors and plays the wake-up move; the robot is awake when it completes, and
// the OnWake callbacks run then. A robot already awake at the init pose only completes at once, as
// the public daemon stands down from a second wake-up.
func (r *Robot) WakeUp() *Move {
	r.mu.Lock()
	defer r.mu.Unlock()
	awake := func(r *Robot) { r.awake = true }
	if r.awake && r.mode == MotorsEnabled && magicDistance(r.target.Head, DefaultPose.Head) < 1 && r.move == nil {
		return r.startSequence("wake_up", nil, awake)
	}
	r.setMode(MotorsEnabled)
	init := DefaultPose
	init.Antennas = initAntennas
	init.BodyYaw = r.target.BodyYaw
	roll := init
	roll.Head.Roll = wakeUpRoll
	return r.startSequence("wake_up", []Step{
		{To: init, Duration: 2 * time.Second, Interp: MinJerk},
		{To: init, Duration: 100 * time.Millisecond, Interp: MinJerk},
		{To: roll, Duration: 200 * time.Millisecond, Interp: MinJerk, Sound: "wake_up.wav"},
		{To: init, Duration: 200 * time.Millisecond, Interp: MinJerk},
	}, awake)
}

// GotoSleep plays the go-to-sleep move; when it completes the robot is asleep, and its motors are
// disabled when disableMotors is true (the daemon's own route, as the public daemon does) or left
// holding the sleep pose otherwise (the SDK's goto_sleep: an app that sleeps and then moves moves).
func (r *Robot) GotoSleep(disableMotors bool) *Move {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mode == MotorsDisabled {
		r.setMode(MotorsEnabled)
	}
	var steps []Step
	if magicDistance(r.target.Head, SleepPose.Head) > 10 {
		if magicDistance(r.target.Head, DefaultPose.Head) > 30 {
			init := DefaultPose
			init.Antennas = initAntennas
			init.BodyYaw = r.target.BodyYaw
			steps = append(steps, Step{To: init, Duration: time.Second, Interp: MinJerk}, Step{To: init, Duration: 200 * time.Millisecond, Interp: MinJerk})
		}
		sleep := SleepPose
		sleep.BodyYaw = r.target.BodyYaw
		steps = append(steps, Step{To: sleep, Duration: 2 * time.Second, Interp: MinJerk, Sound: "go_sleep.wav"}, Step{To: sleep, Duration: sleepSettleTime, Interp: MinJerk})
	} else {
		steps = append(steps, Step{To: r.target, Duration: sleepSettleTime, Interp: MinJerk, Sound: "go_sleep.wav"})
	}
	return r.startSequence("goto_sleep", steps, func(r *Robot) {
		r.awake = false
		if disableMotors {
			r.setMode(MotorsDisabled)
		}
	})
}

// headJoints returns [body yaw, the six Stewart motor angles] for j, or nil when no motor angles
// put the head there.
func headJoints(j Joints) []float64 {
	angles, err := kinematics.Default().Inverse(kinematics.Pose(j.Head), j.BodyYaw)
	if err != nil {
		return nil
	}
	return append([]float64{j.BodyYaw}, angles[:]...)
}

// magicDistance is how far apart two head poses are in the public robot's "magic millimetres":
// the translation in millimetres plus the rotation between them in degrees.
func magicDistance(a, b HeadPose) float64 {
	ra, rb := kinematics.Pose(a).Rotation(), kinematics.Pose(b).Rotation()
	tr := 0.0
	for i := range 3 {
		for j := range 3 {
			tr += ra[i][j] * rb[i][j]
		}
	}
	angle := math.Acos(math.Max(-1, math.Min(1, (tr-1)/2)))
	return 1000*math.Sqrt((a.X-b.X)*(a.X-b.X)+(a.Y-b.Y)*(a.Y-b.Y)+(a.Z-b.Z)*(a.Z-b.Z)) + angle*180/math.Pi
}

// ReturnToDefault moves an awake robot back to the default pose (after an app stops) and reports
// whether it did; an asleep robot is left alone.
func (r *Robot) ReturnToDefault() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.awake {
		return false
	}
	if r.mode != MotorsEnabled {
		r.setMode(MotorsEnabled)
	}
	r.startMove("goto", DefaultPose, time.Second, MinJerk, nil)
	return true
}

// StopMove stops the running move with the given id, or any running move when id is empty. The
// target stays where the move left it.
func (r *Robot) StopMove(id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.move == nil || (id != "" && r.move.ID != id) {
		if id == "" {
			return fault.NotFoundf("no move is running")
		}
		return fault.NotFoundf("no running move with uuid %s", id)
	}
	r.endMove(false)
	return nil
}

// MotorMode returns the motors' mode.
func (r *Robot) MotorMode() MotorMode {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mode
}

// SetMotorMode switches the motors' mode.
func (r *Robot) SetMotorMode(mode MotorMode) error {
	if _, err := ParseMotorMode(string(mode)); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.setMode(mode)
	return nil
}

// setMode switches modes. Call with r.mu held.
func (r *Robot) setMode(mode MotorMode) {
	if r.torque != nil {
		r.torque = nil // a mode applies to every motor, including those switched one by one
		if ts, ok := r.backend.(TorqueSetter); ok {
			ts.SetTorque(r.allTorque(true))
		}
	}
	if mode == r.mode {
		return
	}
	if mode == MotorsEnabled {
		// Hold where the robot is now rather than jump to a stale target.
		r.target = r.backend.Read(time.Now())
		r.backend.Command(r.target)
	}
	r.mode = mode
	r.targetAt = time.Now()
	r.backend.SetMotorMode(mode)
	if mode == MotorsDisabled && r.awake {
		// Limp motors hold no pose: a robot whose motors are off is asleep, whoever turned them
		// off (set_mode, daemon/stop, an SDK client that then died), so that the next client
		// sees it must wake the robot rather than take a limp robot for an awake one.
		r.awake = false
		r.log.Info("motors disabled: the robot is asleep")
	}
}

// PushAntenna applies an external push of delta radians to antenna 0 (right) or 1 (left), the anchor SDK's order, as a
// hand would. Only backends that simulate pushes accept it.
func (r *Robot) PushAntenna(index int, delta float64) error {
	if index != 0 && index != 1 {
		return fault.Invalidf("antenna must be left or right")
	}
	if math.IsNaN(delta) || math.IsInf(delta, 0) || math.Abs(delta) > 2*math.Pi {
		return fault.Invalidf("delta must be a finite number of radians within ±2π")
	}
	p, ok := r.backend.(Pushable)
	if !ok {
		return fault.Refusedf("antenna pushes can only be simulated on the simulated robot (--sim)")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p.PushAntenna(index, delta)
	return nil
}

// OnAntennaTouch registers f to run (in its own goroutine) on each detected antenna touch.
func (r *Robot) OnAntennaTouch(f func()) {
	r.mu.Lock()
	r.onTouch = append(r.onTouch, f)
	r.mu.Unlock()
}

// OnWake registers f to run (in its own goroutine) each time a wake-up move completes.
func (r *Robot) OnWake(f func()) {
	r.mu.Lock()
	r.onWake = append(r.onWake, f)
	r.mu.Unlock()
}

// BackendName names the backend.
func (r *Robot) BackendName() string { return r.backend.Name() }
