//go:build !darwin || cgo

package robotd

import "go.bug.st/serial/enumerator"

func usbSerialPorts() ([]usbSerialPort, error) {
	ports, err := enumerator.GetDetailedPortsList()
	out := make([]usbSerialPort, 0, len(ports))
	for _, p := range ports {
		out = append(out, usbSerialPort{name: p.Name, vid: p.VID, pid: p.PID})
	}
	return out, err
}
