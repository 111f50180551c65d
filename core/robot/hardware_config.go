package robot

import "slices"

// MotorConfig is one motor of the bus.
type MotorConfig struct {
	Name          string
	ID            byte
	Offset        int32 // Homing Offset, ticks
	Lower, Upper  int32 // position limits, ticks
	ReturnDelay   byte
	Shutdown      byte
	OperatingMode byte
	PID           *[3]uint16
}

// HardwareConfig is the motor bus: its baud rate and its motors.
type HardwareConfig struct {
	Baud   int
	Motors []MotorConfig
}

// Motor returns the named motor's config.
func (c *HardwareConfig) Motor(name string) (MotorConfig, bool) {
	i := slices.IndexFunc(c.Motors, func(m MotorConfig) bool { return m.Name == name })
	if i < 0 {
		return MotorConfig{}, false
	}
	return c.Motors[i], true
}
