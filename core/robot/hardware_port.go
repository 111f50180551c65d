package robot

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"go.bug.st/serial"

	"github.com/robothub/robothub/core/robot/dynamixel"
)

// Where the motor bus is: the Lite's USB serial adapter, or the Wireless robot's own UART.
const (
	LiteAdapterVID = "1a86"
	LiteAdapterPID = "55d3"
	WirelessUART   = "/dev/ttyAMA3"
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

// FindSerialPort finds the motor bus: on the Wireless robot its UART, otherwise the USB adapter
// with the Lite's VID:PID. The error says what was looked for.
func FindSerialPort(wireless bool) (string, error) {
	if wireless {
		if _, err := os.Stat(WirelessUART); err != nil {
			return "", fmt.Errorf("no motor bus found: the Wireless robot's UART %s: %w (pass --serialport PATH)", WirelessUART, err)
		}
		return WirelessUART, nil
	}
	ports, err := usbSerialPorts()
	if err != nil {
		return "", fmt.Errorf("listing serial ports: %w (pass --serialport PATH)", err)
	}
	var seen []string
	for _, p := range ports {
		if strings.EqualFold(p.vid, LiteAdapterVID) && strings.EqualFold(p.pid, LiteAdapterPID) {
			return p.name, nil
		}
		seen = append(seen, p.name)
	}
	return "", errors.New("no motor bus found: no USB serial adapter " + LiteAdapterVID + ":" + LiteAdapterPID +
		" (the Lite's) among the serial ports [" + strings.Join(seen, ", ") + "]; is the robot plugged in? " +
		"On the Wireless robot use --wireless-version (" + WirelessUART + "); or pass --serialport PATH")
}

// usbSerialPort is a serial port and, for a USB adapter, its vendor and product IDs.
type usbSerialPort struct{ name, vid, pid string }
