package busemu

// The XL330-M288-T's control table (Robotis e-manual, XL330-M288-T, "Control Table"), as the
// emulated motor enforces it. The addresses are written here again, not taken from the driver:
// a driver that reads or writes the wrong item gets what a real motor would answer.

// Items the emulator's own code reads or writes.
const (
	addrModelNumber      = 0
	addrFirmwareVersion  = 6
	addrID               = 7
	addrBaudRate         = 8
	addrReturnDelayTime  = 9
	addrDriveMode        = 10
	addrOperatingMode    = 11
	addrHomingOffset     = 20
	addrMovingThreshold  = 24
	addrTemperatureLimit = 31
	addrMaxVoltageLimit  = 32
	addrMinVoltageLimit  = 34
	addrCurrentLimit     = 38
	addrVelocityLimit    = 44
	addrMaxPositionLimit = 48
	addrMinPositionLimit = 52
	addrShutdown         = 63
	addrTorqueEnable     = 64
	addrStatusReturn     = 68
	addrHardwareError    = 70
	addrPositionPGain    = 84
	addrGoalCurrent      = 102
	addrProfileAccel     = 108
	addrProfileVelocity  = 112
	addrGoalPosition     = 116
	addrRealtimeTick     = 120
	addrMoving           = 122
	addrPresentCurrent   = 126
	addrPresentVelocity  = 128
	addrPresentPosition  = 132
	addrPresentVoltage   = 144
	addrPresentTemp      = 146
	tableSize            = 148 // through Backup Ready (147); indirect addresses are not emulated
	eepromEnd            = 64  // items below Torque Enable are EEPROM: written with the torque off only
	modelXL330M288       = 1200
)

// Operating modes (address 11).
const (
	modeCurrent              = 0
	modeVelocity             = 1
	modePosition             = 3
	modeExtendedPosition     = 4
	modeCurrentBasedPosition = 5
	modePWM                  = 16
)

// item is one entry of the control table.
type item struct {
	addr, size int
	name       string
	writable   bool
	signed     bool
	lo, hi     int64 // the values a write may hold (data range error outside)
	init       int64 // factory value (EEPROM) or power-on value (RAM)
}

// table lists every item; addresses not in it are reserved (read as 0, never written).
var table = []item{
	{0, 2, "Model Number", false, false, 0, 65535, modelXL330M288},
	{2, 4, "Model Information", false, false, 0, 1<<32 - 1, 0},
	{6, 1, "Firmware Version", false, false, 0, 255, 46},
	{7, 1, "ID", true, false, 0, 252, 1},
	{8, 1, "Baud Rate", true, false, 0, 6, 1},
	{9, 1, "Return Delay Time", true, false, 0, 254, 250},
	{10, 1, "Drive Mode", true, false, 0, 13, 0},
	{11, 1, "Operating Mode", true, false, 0, 16, modePosition},
	{12, 1, "Secondary ID", true, false, 0, 255, 255},
	{13, 1, "Protocol Type", true, false, 1, 22, 2},
	{20, 4, "Homing Offset", true, true, -1044479, 1044479, 0},
	{24, 4, "Moving Threshold", true, false, 0, 1023, 10},
	{31, 1, "Temperature Limit", true, false, 0, 100, 70},
	{32, 2, "Max Voltage Limit", true, false, 31, 70, 70},
	{34, 2, "Min Voltage Limit", true, false, 31, 70, 35},
	{36, 2, "PWM Limit", true, false, 0, 885, 885},
	{38, 2, "Current Limit", true, false, 0, 1750, 1750},
	{44, 4, "Velocity Limit", true, false, 0, 2047, 445},
	{48, 4, "Max Position Limit", true, false, 0, 4095, 4095},
	{52, 4, "Min Position Limit", true, false, 0, 4095, 0},
	{60, 1, "Startup Configuration", true, false, 0, 3, 0},
	{62, 1, "PWM Slope", true, false, 1, 255, 140},
	{63, 1, "Shutdown", true, false, 0, 255, 53},
	{64, 1, "Torque Enable", true, false, 0, 1, 0},
	{65, 1, "LED", true, false, 0, 1, 0},
	{68, 1, "Status Return Level", true, false, 0, 2, 2},
	{69, 1, "Registered Instruction", false, false, 0, 1, 0},
	{70, 1, "Hardware Error Status", false, false, 0, 255, 0},
	{76, 2, "Velocity I Gain", true, false, 0, 16383, 1600},
	{78, 2, "Velocity P Gain", true, false, 0, 16383, 180},
	{80, 2, "Position D Gain", true, false, 0, 16383, 0},
	{82, 2, "Position I Gain", true, false, 0, 16383, 0},
	{84, 2, "Position P Gain", true, false, 0, 16383, 400},
	{88, 2, "Feedforward 2nd Gain", true, false, 0, 16383, 0},
	{90, 2, "Feedforward 1st Gain", true, false, 0, 16383, 0},
	{98, 1, "Bus Watchdog", true, false, 0, 127, 0},
	{100, 2, "Goal PWM", true, true, -885, 885, 0},
	{102, 2, "Goal Current", true, true, -1750, 1750, 0},
	{104, 4, "Goal Velocity", true, true, -2047, 2047, 0},
	{108, 4, "Profile Acceleration", true, false, 0, 32767, 0},
	{112, 4, "Profile Velocity", true, false, 0, 32767, 0},
	{116, 4, "Goal Position", true, true, -1048575, 1048575, 0},
	{120, 2, "Realtime Tick", false, false, 0, 32767, 0},
	{122, 1, "Moving", false, false, 0, 1, 0},
	{123, 1, "Moving Status", false, false, 0, 255, 0},
	{124, 2, "Present PWM", false, true, -885, 885, 0},
	{126, 2, "Present Current", false, true, -1750, 1750, 0},
	{128, 4, "Present Velocity", false, true, -2047, 2047, 0},
	{132, 4, "Present Position", false, true, -2147483648, 2147483647, 0},
	{136, 4, "Velocity Trajectory", false, true, -2147483648, 2147483647, 0},
	{140, 4, "Position Trajectory", false, true, -2147483648, 2147483647, 0},
	{144, 2, "Present Input Voltage", false, false, 0, 65535, 50},
	{146, 1, "Present Temperature", false, false, 0, 255, 30},
	{147, 1, "Backup Ready", false, false, 0, 1, 0},
}

// itemAt is the item starting at addr, if any.
var itemAt = func() (m [tableSize]*item) {
	for i := range table {
		m[table[i].addr] = &table[i]
	}
	return m
}()

// validOperatingMode reports the modes an XL330 has (others are a data range error).
func validOperatingMode(v int64) bool {
	switch v {
	case modeCurrent, modeVelocity, modePosition, modeExtendedPosition, modeCurrentBasedPosition, modePWM:
		return true
	}
	return false
}

// baudRates are the line speeds of Baud Rate (address 8)'s values.
var baudRates = [...]int{9600, 57600, 115200, 1_000_000, 2_000_000, 3_000_000, 4_000_000}

// Hardware Error Status bits (address 70).
const (
	hwInputVoltage = 1 << 0
	hwOverheating  = 1 << 2
	hwEncoder      = 1 << 3
	hwElectrical   = 1 << 4
	hwOverload     = 1 << 5
)
