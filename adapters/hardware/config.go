package hardware

// The hardware config of the robot's motor bus: a YAML file in the vendor's schema
// (serial.baudrate, then per motor its id, homing offset, position limits, operating mode and PID
// gains). The robot's own is embedded; robot-daemon --hardware-config replaces it.

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/robothub/robothub/adapters/hardware/dynamixel"
	"github.com/robothub/robothub/core/robot"
)

//go:embed hardware.yaml
var defaultYAML []byte

// DefaultConfig is the robot's motor bus as built.
func DefaultConfig() *dynamixel.Config {
	c, err := ParseConfig(defaultYAML)
	if err != nil {
		panic("hardware: embedded hardware.yaml: " + err.Error())
	}
	return c
}

// MaxConfigSize caps what LoadConfig reads: the robot's config is 3 KB, and a file without end
// (--hardware-config /dev/zero) must not fill the memory.
const MaxConfigSize = 1 << 20

// LoadConfig reads a hardware config file of at most MaxConfigSize bytes.
func LoadConfig(path string) (*dynamixel.Config, error) {
	data, err := ReadConfigFile(path)
	if err != nil {
		return nil, err
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("hardware config %s: %w", path, err)
	}
	return c, nil
}

// ReadConfigFile reads a hardware config file of at most MaxConfigSize bytes: for LoadConfig, and
// for the daemon's media, which reads its own section (media.ParseConfig).
func ReadConfigFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hardware config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("hardware config %s: %w", path, err)
	}
	if len(data) > MaxConfigSize {
		return nil, fmt.Errorf("hardware config %s: larger than %d KiB, which no hardware config is (the robot's is 3 KB): is it the right file?", path, MaxConfigSize>>10)
	}
	return data, nil
}

// ParseConfig parses and checks a hardware config; errors name the field.
func ParseConfig(data []byte) (*dynamixel.Config, error) {
	type motor struct {
		ID            *int   `yaml:"id"`
		Offset        int32  `yaml:"offset"`
		Lower         *int32 `yaml:"lower_limit"`
		Upper         *int32 `yaml:"upper_limit"`
		ReturnDelay   byte   `yaml:"return_delay_time"`
		Shutdown      byte   `yaml:"shutdown_error"`
		OperatingMode *byte  `yaml:"operating_mode"`
		PID           []int  `yaml:"pid"`
	}
	var f struct {
		Version string `yaml:"version"`
		Serial  struct {
			Baudrate int `yaml:"baudrate"`
		} `yaml:"serial"`
		Motors []map[string]motor `yaml:"motors"`
		Media  yaml.Node          `yaml:"media"` // the media devices: media.ParseConfig reads it
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if f.Serial.Baudrate <= 0 {
		return nil, fmt.Errorf("serial.baudrate: must be a positive number of bits per second, got %d", f.Serial.Baudrate)
	}
	c := &dynamixel.Config{Baud: f.Serial.Baudrate}
	ids := map[int]string{}
	for i, entry := range f.Motors {
		if len(entry) != 1 {
			return nil, fmt.Errorf("motors[%d]: must be one motor name mapping to its settings", i)
		}
		for name, m := range entry {
			field := fmt.Sprintf("motors[%d] (%s)", i, name)
			switch {
			case m.ID == nil || *m.ID < 0 || *m.ID > 252:
				return nil, fmt.Errorf("%s: id must be 0 to 252", field)
			case ids[*m.ID] != "":
				return nil, fmt.Errorf("%s: id %d is already %s's", field, *m.ID, ids[*m.ID])
			case m.Lower == nil || m.Upper == nil:
				return nil, fmt.Errorf("%s: lower_limit and upper_limit are required (ticks, 0 to 4095)", field)
			case *m.Lower < 0 || *m.Upper > 4095 || *m.Lower >= *m.Upper:
				return nil, fmt.Errorf("%s: limits [%d, %d] must satisfy 0 <= lower_limit < upper_limit <= 4095", field, *m.Lower, *m.Upper)
			case m.OperatingMode == nil || (*m.OperatingMode != 3 && *m.OperatingMode != 5):
				return nil, fmt.Errorf("%s: operating_mode must be 3 (position) or 5 (current-based position)", field)
			case m.PID != nil && len(m.PID) != 3:
				return nil, fmt.Errorf("%s: pid must be [P, I, D]", field)
			}
			ids[*m.ID] = name
			mc := dynamixel.MotorConfig{Name: name, ID: byte(*m.ID), Offset: m.Offset, Lower: *m.Lower, Upper: *m.Upper,
				ReturnDelay: m.ReturnDelay, Shutdown: m.Shutdown, OperatingMode: *m.OperatingMode}
			if m.PID != nil {
				pid := [3]uint16{}
				for k, g := range m.PID {
					if g < 0 || g > 16383 {
						return nil, fmt.Errorf("%s: pid gains must be 0 to 16383, got %d", field, g)
					}
					pid[k] = uint16(g)
				}
				mc.PID = &pid
			}
			c.Motors = append(c.Motors, mc)
		}
	}
	for _, name := range robot.MotorNames {
		if _, ok := c.Motor(name); !ok {
			return nil, fmt.Errorf("motors: %s is missing (the robot has %v)", name, robot.MotorNames)
		}
	}
	return c, nil
}
