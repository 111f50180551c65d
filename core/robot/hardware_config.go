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

// HardwareMotorNames are the motors the hardware backend drives, by the names a hardware config
// gives them (internal/hwconfig reads the file); the order is the order of its motor table.
var HardwareMotorNames = []string{"body_rotation", "stewart_1", "stewart_2", "stewart_3", "stewart_4",
	"stewart_5", "stewart_6", "left_antenna", "right_antenna"}

// Motor returns the named motor's config.
func (c *HardwareConfig) Motor(name string) (MotorConfig, bool) {
	i := slices.IndexFunc(c.Motors, func(m MotorConfig) bool { return m.Name == name })
	if i < 0 {
		return MotorConfig{}, false
	}
	return c.Motors[i], true
}
