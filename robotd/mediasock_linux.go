package robotd

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// mediaSocketPeer allows the daemon's own user (and root) on the local media socket: the frames
// and sound of the robot are as private as its API, whose local clients of another user need the
// token. The socket's mode (0600) says the same; this holds if a directory's mode is loose.
func mediaSocketPeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) { cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return err
	}
	if credErr != nil {
		return credErr
	}
	if int(cred.Uid) != os.Getuid() && cred.Uid != 0 {
		return fmt.Errorf("user %d is not the daemon's user: use the daemon's API with its token (WebRTC, or /api/camera/frame)", cred.Uid)
	}
	return nil
}
