package robot

import (
	"fmt"

	"go.bug.st/serial"

	"github.com/robothub/robothub/internal/dynamixel"
)

// SerialPort is an open serial line: what the hardware backend reads and writes the bus through.
type SerialPort interface {
	dynamixel.Port
	Close() error
}

// OpenSerial opens a serial port at baud bits per second, 8N1.
func OpenSerial(path string, baud int) (SerialPort, error) {
	p, err := serial.Open(path, &serial.Mode{BaudRate: baud, DataBits: 8, Parity: serial.NoParity, StopBits: serial.OneStopBit})
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return p, nil
}
