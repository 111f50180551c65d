//go:build !linux && !darwin

package access

import "net"

func peerCredSupported() error { return ErrNoPeerCred }

// PeerUID: this system does not name a socket's peer.
func PeerUID(net.Conn) (int, error) { return -1, ErrNoPeerCred }
