package robotd

import (
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/robothub/robothub/robotd/access"
)

// mediaSocketPeer allows the daemon's own user (and root) on the local media socket, by the rule of
// the owner's socket (access.PeerUID, the kernel's record of the peer): the frames and sound of the
// robot are as private as its API, whose local clients of another user need the token. The
// socket's mode (0600) says the same, and is all there is where the system does not name a
// socket's peer.
func mediaSocketPeer(c net.Conn) error {
	uid, err := access.PeerUID(c)
	switch {
	case errors.Is(err, access.ErrNoPeerCred):
		return nil
	case err != nil:
		return err
	case uid != os.Getuid() && uid != 0:
		return fmt.Errorf("user %d is not the daemon's user: use the daemon's API with its token (WebRTC, or /api/camera/frame)", uid)
	}
	return nil
}
