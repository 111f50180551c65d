package robotd

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Where the motor bus is: the Lite's USB serial adapter, or the Wireless robot's own UART.
const (
	liteAdapterVID = "1a86"
	liteAdapterPID = "55d3"
	wirelessUART   = "/dev/ttyAMA3"
)

// LiteAdapter is the USB id (vendor:product) of the Lite's serial adapter and WirelessUART the
// Wireless robot's own UART: where the motor bus is looked for when Config.SerialPort is "".
const (
	LiteAdapter  = liteAdapterVID + ":" + liteAdapterPID
	WirelessUART = wirelessUART
)

// findSerialPort finds the motor bus: on the Wireless robot its UART, otherwise the USB adapter
// with the Lite's VID:PID. The error says what was looked for.
func findSerialPort(wireless bool) (string, error) {
	if wireless {
		if _, err := os.Stat(wirelessUART); err != nil {
			return "", fmt.Errorf("no motor bus found: the Wireless robot's UART %s: %w (pass --serialport PATH)", wirelessUART, err)
		}
		return wirelessUART, nil
	}
	ports, err := usbSerialPorts()
	if err != nil {
		return "", fmt.Errorf("listing serial ports: %w (pass --serialport PATH)", err)
	}
	var seen []string
	for _, p := range ports {
		if strings.EqualFold(p.vid, liteAdapterVID) && strings.EqualFold(p.pid, liteAdapterPID) {
			return p.name, nil
		}
		seen = append(seen, p.name)
	}
	return "", errors.New("no motor bus found: no USB serial adapter " + liteAdapterVID + ":" + liteAdapterPID +
		" (the Lite's) among the serial ports [" + strings.Join(seen, ", ") + "]; is the robot plugged in? " +
		"On the Wireless robot use --wireless-version (" + wirelessUART + "); or pass --serialport PATH")
}

// usbSerialPort is a serial port and, for a USB adapter, its vendor and product IDs.
type usbSerialPort struct{ name, vid, pid string }
