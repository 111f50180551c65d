package hardware_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/adapters/hardware"
)

func TestHardwareConfig(t *testing.T) {
	c := hardware.DefaultConfig()
	if c.Baud != 1_000_000 || len(c.Motors) != 9 {
		t.Fatalf("default config: %d baud, %d motors", c.Baud, len(c.Motors))
	}
	base, err := os.ReadFile("hardware.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ edit, old, want string }{
		{"upper_limit: 2958", "upper_limit: 1000", "motors[1] (stewart_1): limits [1502, 1000]"},
		{"id: 12", "id: 11", "motors[2] (stewart_2): id 11 is already stewart_1's"},
		{"baudrate: 1000000", "baudrate: 0", "serial.baudrate: must be a positive number"},
		{"  - left_antenna:", "  - lft_antenna:", "motors: left_antenna is missing"},
		{"return_delay_time: 0\n      shutdown_error: 52\n      operating_mode: 3\n      pid: [300, 0, 0]\n  - stewart_2", "return_delay: 0\n      shutdown_error: 52\n      operating_mode: 3\n      pid: [300, 0, 0]\n  - stewart_2", "field return_delay not found"},
	} {
		data := strings.Replace(string(base), bad.edit, bad.old, 1)
		if data == string(base) {
			t.Fatalf("edit %q not found", bad.edit)
		}
		path := filepath.Join(t.TempDir(), "hw.yaml")
		os.WriteFile(path, []byte(data), 0o644)
		if _, err := hardware.LoadConfig(path); err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err = %v, want it to name the file and say %q", bad.old, err, bad.want)
		}
	}
}

// A file without end, or far too big, is refused after the cap, naming the file and the cap.
func TestHardwareConfigIsCapped(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, []byte("# "+strings.Repeat("x", hardware.MaxConfigSize)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{big, "/dev/zero"} {
		_, err := hardware.LoadConfig(path)
		if err == nil || !strings.Contains(err.Error(), "hardware config "+path+": larger than 1024 KiB") {
			t.Errorf("%s: %v, want it refused as too large, naming the file", path, err)
		}
	}
}
