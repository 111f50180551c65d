package access

import "golang.org/x/sys/unix"

// fdPeerUID reads LOCAL_PEERCRED (macOS's SO_PEERCRED).
func fdPeerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return -1, err
	}
	return int(cred.Uid), nil
}
