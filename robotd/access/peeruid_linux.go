package access

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"
)

// loopbackPeerUID returns the uid of the local process whose TCP socket at peer is connected to
// local: the kernel's record of the client's side of the connection, asked for that one socket
// through its socket diagnostics (netlink sock_diag, as ss(8) asks).
//
// Why not SO_PEERCRED: it works on unix sockets only, and a unix socket would leave every client
// of the anchor's API (curl localhost:8000, the SDK, the dashboard) behind. Why not /proc/net/tcp:
// it lists every socket of the machine, and reading it once per connection let 2,000 connections
// of another user take the daemon from 45 MB to 1.39 GB (issue 20, item 3).
//
// Why by hand (x/sys/unix) rather than github.com/vishvananda/netlink's SocketGet: that asks for a
// dump filtered by ports, which walks every TCP socket of the machine: 1.3–1.9 ms a lookup here
// with 4,000 sockets open, serialised in the accept loop, so that a flood of 2,000 connections kept
// the owner's connections waiting for seconds. A request for one socket by its four-tuple (no
// NLM_F_DUMP) is a hash lookup in the kernel: BenchmarkLoopbackPeerUID.
func loopbackPeerUID(peer, local netip.AddrPort) (int, error) {
	peer = netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port())
	local = netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
	family := uint8(unix.AF_INET6)
	if peer.Addr().Is4() {
		family = unix.AF_INET
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return -1, fmt.Errorf("sock_diag: %w", err)
	}
	defer unix.Close(fd)
	tv := unix.NsecToTimeval(int64(time.Second))
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	if err := unix.Sendto(fd, diagRequest(family, peer, local), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return -1, fmt.Errorf("sock_diag: %w", err)
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return -1, fmt.Errorf("sock_diag: %w", err)
	}
	return parseDiagAnswer(buf[:n])
}

// The sizes of the kernel's structures (linux/netlink.h, linux/inet_diag.h).
const (
	nlmsgHeaderLen   = 16 // struct nlmsghdr
	inetDiagReqLen   = 56 // struct inet_diag_req_v2
	inetDiagMsgLen   = 72 // struct inet_diag_msg
	inetDiagUIDAt    = 64 // idiag_uid in struct inet_diag_msg
	inetDiagNoCookie = 0xFFFFFFFF
)

// diagRequest is SOCK_DIAG_BY_FAMILY for the one TCP socket whose local end is src and remote
// end is dst, in any state. Ports and addresses are in network order; the rest in the host's.
func diagRequest(family uint8, src, dst netip.AddrPort) []byte {
	b := make([]byte, nlmsgHeaderLen+inetDiagReqLen)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(len(b)))
	ne.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST)
	r := b[nlmsgHeaderLen:]
	r[0], r[1] = family, unix.IPPROTO_TCP
	ne.PutUint32(r[4:], 0xFFFFFFFF) // idiag_states: all
	binary.BigEndian.PutUint16(r[8:], src.Port())
	binary.BigEndian.PutUint16(r[10:], dst.Port())
	s, d := src.Addr().AsSlice(), dst.Addr().AsSlice()
	copy(r[12:28], s)
	copy(r[28:44], d)
	ne.PutUint32(r[48:], inetDiagNoCookie)
	ne.PutUint32(r[52:], inetDiagNoCookie)
	return b
}

// errNoSocket is the kernel's answer for a four-tuple with no socket.
var errNoSocket = errors.New("no local socket for this connection")

// parseDiagAnswer reads the uid from the kernel's answer: one inet_diag_msg, or an error.
func parseDiagAnswer(b []byte) (int, error) {
	ne := binary.NativeEndian
	if len(b) < nlmsgHeaderLen {
		return -1, errors.New("sock_diag: short answer")
	}
	length, kind := ne.Uint32(b[0:]), ne.Uint16(b[4:])
	if length < nlmsgHeaderLen || int(length) > len(b) {
		return -1, errors.New("sock_diag: malformed answer")
	}
	payload := b[nlmsgHeaderLen:length]
	switch kind {
	case unix.NLMSG_ERROR:
		if len(payload) < 4 {
			return -1, errors.New("sock_diag: malformed error")
		}
		errno := unix.Errno(-int32(ne.Uint32(payload)))
		if errno == unix.ENOENT {
			return -1, errNoSocket
		}
		return -1, fmt.Errorf("sock_diag: %w", errno)
	case unix.SOCK_DIAG_BY_FAMILY:
		if len(payload) < inetDiagMsgLen {
			return -1, errors.New("sock_diag: short inet_diag_msg")
		}
		return int(ne.Uint32(payload[inetDiagUIDAt:])), nil
	}
	return -1, fmt.Errorf("sock_diag: unexpected message type %d", kind)
}
