//go:build linux || darwin

package access

import (
	"errors"
	"net"
)

func peerCredSupported() error { return nil }

// PeerUID is the user of the process that connected c, a unix socket: the credentials the kernel
// recorded at connect(2) (fdPeerUID, per system), never a lookup after the fact.
func PeerUID(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return -1, errors.New("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1, err
	}
	uid, credErr := -1, error(nil)
	if err := raw.Control(func(fd uintptr) { uid, credErr = fdPeerUID(int(fd)) }); err != nil {
		return -1, err
	}
	return uid, credErr
}
