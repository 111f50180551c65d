package access

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// SocketFileName is the owner's unix socket, in the daemon's data dir.
const SocketFileName = "daemon.sock"

// ErrNoPeerCred: without the kernel's record of a socket's peer there is no owner socket; clients
// send the token over TCP.
var ErrNoPeerCred = errors.New("this system does not name a unix socket's peer (SO_PEERCRED): there is no owner socket, send the token over TCP")

// maxSocketPath is the longest path a unix socket may have on the systems the daemon runs on
// (sun_path is 108 bytes on Linux, 104 on macOS, with its terminating NUL).
const maxSocketPath = 103

// ListenOwnerSocket listens on the unix socket path (mode 0600) for OwnerListener: the daemon
// holds its data dir's lock, so a socket file left there by a daemon that died is removed first.
func ListenOwnerSocket(path string) (net.Listener, error) {
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("the socket path %s is %d bytes long, longer than a unix socket's %d: use a shorter --data-dir", path, len(path), maxSocketPath)
	}
	if err := peerCredSupported(); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("%s exists and is not a socket: remove it", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	// The data dir is 0700: nobody else reaches the socket between bind and chmod, and the peer
	// check at accept holds whatever the modes are.
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// OwnerListener wraps ln, the owner's unix socket: each connection's peer is read from the kernel
// (SO_PEERCRED, which the kernel sets when the peer connects and which no later event changes),
// and a peer that is neither the daemon's user nor root is closed at once. The connections it
// returns are the owner's (ConnContext), with every scope and no connection cap.
func (s *Guard) OwnerListener(ln net.Listener) net.Listener {
	return &ownerListener{Listener: ln, s: s}
}

type ownerListener struct {
	net.Listener
	s       *Guard
	mu      sync.Mutex
	lastLog time.Time
}

// ownerConn is a connection of the owner's socket whose peer is uid.
type ownerConn struct {
	net.Conn
	uid int
}

// CloseWrite ends the sending side (see cappedConn.CloseWrite).
func (c *ownerConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (l *ownerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := PeerUID(c)
		switch {
		case err != nil:
			l.refuse(c, "the peer's user cannot be read: "+err.Error())
		case uid != l.s.uid && uid != 0:
			l.refuse(c, "the peer runs as uid "+strconv.Itoa(uid)+", not the daemon's user ("+strconv.Itoa(l.s.uid)+") or root")
		default:
			return &ownerConn{Conn: c, uid: uid}, nil
		}
	}
}

// refuse closes a connection of another user unanswered: the socket is the owner's alone, and
// another user has the TCP port (with a token) for the API.
func (l *ownerListener) refuse(c net.Conn, why string) {
	_ = c.Close()
	l.mu.Lock()
	logIt := time.Since(l.lastLog) >= time.Second
	if logIt {
		l.lastLog = time.Now()
	}
	l.mu.Unlock()
	if logIt {
		l.s.log.Warn("refused a connection to the owner socket", "socket", filepath.Base(l.Addr().String()), "why", why)
	}
}
