// Package machineid names this machine with a stable id that differs between machines and does
// not reveal what it is made from: a hash of systemd's /etc/machine-id (made at first boot, so
// robots flashed from one image differ), else of the board's serial number (a Raspberry Pi's
// device tree). The daemon's hardware_id and its default fleet id are this id.
package machineid

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
)

// Sources are the files the id is made from, in order of preference.
var Sources = []string{"/etc/machine-id", "/sys/firmware/devicetree/base/serial-number"}

// ID returns the id (16 hex digits) and the file it was made from; "" when no source has one.
func ID() (id, source string) { return From(Sources...) }

// From returns the id made from the first of paths that holds a value.
func From(paths ...string) (id, source string) {
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(strings.Trim(string(data), "\x00"))
		if v == "" || v == "uninitialized" { // systemd's value in an image before first boot
			continue
		}
		sum := sha256.Sum256([]byte(v))
		return hex.EncodeToString(sum[:8]), p
	}
	return "", ""
}
