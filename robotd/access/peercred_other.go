//go:build !linux && !darwin

package access

import (
	"errors"
	"net"
)

// errNoPeerCred: without the kernel's record of a socket's peer there is no owner socket; clients
// send the token over TCP.
var errNoPeerCred = errors.New("this system does not name a unix socket's peer (SO_PEERCRED): there is no owner socket, send the token over TCP")

func peerCredSupported() error { return errNoPeerCred }

func peerUID(net.Conn) (int, error) { return -1, errNoPeerCred }
