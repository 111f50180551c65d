package robotd

import (
	"net"
	"strings"
)

// sdNotify sends a state ("READY=1", "STOPPING=1") to systemd over $NOTIFY_SOCKET, as a service of
// Type=notify must. Without NOTIFY_SOCKET it does nothing.
func sdNotify(getenv func(string) string, state string) error {
	socket := getenv("NOTIFY_SOCKET")
	if socket == "" {
		return nil
	}
	if strings.HasPrefix(socket, "@") {
		socket = "\x00" + socket[1:] // abstract socket namespace
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: socket, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.Write([]byte(state))
	return err
}
