//go:build darwin && !cgo

package robotd

import "go.bug.st/serial"

// usbSerialPorts lists the ports without their USB IDs: reading those on macOS takes IOKit,
// through cgo, which this build was made without.
func usbSerialPorts() ([]usbSerialPort, error) {
	names, err := serial.GetPortsList()
	out := make([]usbSerialPort, 0, len(names))
	for _, n := range names {
		out = append(out, usbSerialPort{name: n + " (USB IDs unknown in a build without cgo)"})
	}
	return out, err
}
