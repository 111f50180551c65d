package dynamixel

import (
	"encoding/binary"
	"math"
)

// Control table addresses of the XL330 (Robotis e-manual, XL330-M288-T and -M077-T) that the robot
// uses. EEPROM items can only be written with the torque off.
const (
	AddrModelNumber      uint16 = 0   // 2 bytes
	AddrReturnDelayTime  uint16 = 9   // 1, units of 2 µs
	AddrOperatingMode    uint16 = 11  // 1
	AddrHomingOffset     uint16 = 20  // 4, signed ticks added to the present position
	AddrMaxPositionLimit uint16 = 48  // 4
	AddrMinPositionLimit uint16 = 52  // 4
	AddrShutdown         uint16 = 63  // 1, which hardware errors turn the torque off
	AddrTorqueEnable     uint16 = 64  // 1
	AddrStatusReturn     uint16 = 68  // 1, Status Return Level: 0 answers pings only, 1 reads too, 2 all
	AddrHardwareError    uint16 = 70  // 1, Hardware Error Status
	AddrPositionDGain    uint16 = 80  // 2
	AddrPositionIGain    uint16 = 82  // 2
	AddrPositionPGain    uint16 = 84  // 2
	AddrGoalCurrent      uint16 = 102 // 2, signed, mA
	AddrGoalPosition     uint16 = 116 // 4, signed ticks
	AddrPresentCurrent   uint16 = 126 // 2, signed, mA: the load
	AddrPresentPosition  uint16 = 132 // 4, signed ticks
	AddrPresentVoltage   uint16 = 144 // 2, 0.1 V
	AddrPresentTemp      uint16 = 146 // 1, °C
)

// Operating modes (address 11) the robot uses, and the XL330-M288's model number.
const (
	ModePosition             byte   = 3
	ModeCurrentBasedPosition byte   = 5
	ModelXL330M288           uint16 = 1200
)

// TicksPerTurn is the position resolution: 4096 ticks a turn, 2048 at the centre (0 rad).
const (
	TicksPerTurn = 4096
	CenterTicks  = 2048
)

// Radians converts a position in ticks to radians from the centre.
func Radians(ticks int32) float64 {
	return float64(ticks-CenterTicks) * 2 * math.Pi / TicksPerTurn
}

// Ticks converts radians from the centre to the nearest position in ticks.
func Ticks(rad float64) int32 {
	return int32(math.Round(rad*TicksPerTurn/(2*math.Pi))) + CenterTicks
}

// Int32 decodes a 4-byte control table value.
func Int32(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) }

// PutInt32 encodes a 4-byte control table value.
func PutInt32(v int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }

// HardwareErrors names the bits of Hardware Error Status (address 70).
func HardwareErrors(status byte) []string {
	names := [8]string{0: "input voltage error", 2: "overheating error", 3: "motor encoder error",
		4: "electrical shock error", 5: "overload error"}
	var out []string
	for bit := range 8 {
		if status&(1<<bit) != 0 {
			name := names[bit]
			if name == "" {
				name = "unknown hardware error bit " + string(rune('0'+bit))
			}
			out = append(out, name)
		}
	}
	return out
}
