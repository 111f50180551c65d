package robotd

import (
	"os"
	"strings"
	"testing"
)

func TestFindSerialPortSaysWhatItLookedFor(t *testing.T) {
	if _, err := os.Stat(wirelessUART); err == nil {
		t.Skip("this machine has the Wireless robot's UART")
	}
	_, err := findSerialPort(true)
	if err == nil || !strings.Contains(err.Error(), wirelessUART) || !strings.Contains(err.Error(), "--serialport") {
		t.Errorf("wireless: %v", err)
	}
	if path, err := findSerialPort(false); err == nil {
		t.Skipf("a Lite adapter is plugged in at %s", path)
	} else if !strings.Contains(err.Error(), "1a86:55d3") || !strings.Contains(err.Error(), "--serialport") {
		t.Errorf("lite: %v", err)
	}
}
