package robot

import (
	"cmp"
	"log/slog"
	"time"
)

// Held is the robot's state handed from one daemon to the next across a daemon update: the
// targets its motors hold, their mode, and whether it is awake.
type Held struct {
	Target Joints    `json:"target"`
	Mode   MotorMode `json:"mode"`
	Awake  bool      `json:"awake"`
}

// Leaver is a backend that can be closed with its motors still holding their targets (the
// hardware: the torque stays on, so the head does not fall while the next daemon starts).
type Leaver interface {
	Leave() error
}

// Hold stops the robot for a hand-over to another daemon: the running move ends where it is, the
// control loop stops without laying the robot down, and the backend is left with its motors
// holding (Leaver) or else closed. It returns the state for Adopt and when the last command went
// to the motors. The Robot is closed afterwards.
func (r *Robot) Hold() (Held, time.Time, error) {
	r.mu.Lock()
	r.endMove(false)
	h := Held{Target: r.target, Mode: r.mode, Awake: r.awake}
	r.leaving = true
	r.mu.Unlock()
	err := r.close()
	return h, time.Now(), err
}

// Adopt starts a Robot on backend in the state another daemon held it in (Hold): the motors keep
// their mode and targets, with no wake-up or sleep move, awake if it was. It returns when the
// first command has gone to the motors.
func Adopt(backend Backend, h Held, log *slog.Logger) *Robot {
	if _, err := ParseMotorMode(string(h.Mode)); err != nil {
		h.Mode = MotorsDisabled
	}
	r := &Robot{
		backend: backend,
		log:     cmp.Or(log, slog.New(slog.DiscardHandler)),
		mode:    h.Mode,
		awake:   h.Awake,
		target:  h.Target,
		quit:    make(chan struct{}),
		ended:   make(chan struct{}),
	}
	backend.SetMotorMode(h.Mode)
	backend.Command(h.Target)
	r.present = backend.Read(time.Now())
	r.targetAt = time.Now()
	r.start()
	return r
}
