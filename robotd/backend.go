package robotd

import (
	"fmt"
	"image"
	"log/slog"
	"math"
	"time"

	"github.com/robothub/robothub/adapters/hardware"
	"github.com/robothub/robothub/adapters/hardware/busemu"
	"github.com/robothub/robothub/adapters/hardware/dynamixel"
	"github.com/robothub/robothub/core/robot"
)

// openBackend returns the backend cfg asks for, and what to close after the robot.
func openBackend(cfg Config, log *slog.Logger) (robot.Backend, func(), error) {
	if cfg.Sim == SimRobot {
		return robot.NewSim(), func() {}, nil
	}
	hwCfg := hardware.DefaultConfig()
	if cfg.HardwareConfig != "" {
		var err error
		if hwCfg, err = hardware.LoadConfig(cfg.HardwareConfig); err != nil {
			return nil, nil, err
		}
	}
	path := cfg.SerialPort
	var emu *busemu.Bus
	if cfg.Sim == SimBus {
		var err error
		emu, err = busemu.Start(busemu.Options{Config: hwCfg, Asleep: true, Log: log.With("component", "busemu")})
		if err != nil {
			return nil, nil, fmt.Errorf("starting the motor bus emulator: %w", err)
		}
		path = emu.Path()
	} else if path == "" {
		var err error
		if path, err = findSerialPort(cfg.Wireless); err != nil {
			return nil, nil, err
		}
	}
	opts := hardware.Options{Port: path, Config: hwCfg, Log: log.With("component", "hardware"), Timeout: cfg.BusTimeout}
	if emu != nil && opts.Timeout == 0 {
		opts.Timeout = 15 * time.Millisecond // the emulator shares the daemon's CPU
	}
	hw, err := hardware.New(opts)
	if err != nil {
		if emu != nil {
			emu.Close()
		}
		return nil, nil, err
	}
	if emu == nil {
		return hw, func() {}, nil
	}
	return &emulatedBus{Hardware: hw, emu: emu, cfg: hwCfg, audio: robot.NewSim()}, func() { emu.Close() }, nil
}

// emulatedBus is the hardware backend on the emulator (--sim=bus). Like the simulation, its
// speaker plays into its microphone, its camera shows a test pattern and its antennas can be
// pushed, so that every route of --sim works the same.
type emulatedBus struct {
	*hardware.Hardware
	emu   *busemu.Bus
	cfg   *dynamixel.Config
	audio *robot.Sim
}

func (b *emulatedBus) Name() string { return "emulated-bus" }

func (b *emulatedBus) Speak(samples []float32) { b.audio.Speak(samples) }

func (b *emulatedBus) Listen(dst []float32, now time.Time) []float32 { return b.audio.Listen(dst, now) }

// CameraSpecs and Frame implement robot.Camera with the simulation's test pattern.
func (b *emulatedBus) CameraSpecs() robot.CameraSpecs { return b.audio.CameraSpecs() }

func (b *emulatedBus) Frame(now time.Time) *image.RGBA { return b.audio.Frame(now) }

// PushAntenna implements robot.Pushable: the emulated antenna motor is turned, as a hand would.
func (b *emulatedBus) PushAntenna(index int, delta float64) {
	name := [2]string{"right_antenna", "left_antenna"}[index]
	for _, m := range b.cfg.Motors {
		if m.Name == name {
			b.emu.Push(m.ID, int32(math.Round(delta*dynamixel.TicksPerTurn/(2*math.Pi))))
		}
	}
}
