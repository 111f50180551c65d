package robotd

import (
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
)

// loopbackPeerUID returns the uid of the local process whose TCP socket at peer is connected to
// local: the kernel's record of the client's side of the connection, asked for that one socket
// through its socket diagnostics (netlink sock_diag, as ss(8) asks).
//
// Why not SO_PEERCRED: it works on unix sockets only, and a unix socket would leave every client
// of the anchor's API (curl localhost:8000, the SDK, the dashboard) behind. Why not
// /proc/net/tcp: it lists every socket of the machine, and reading it once per connection let
// 2,000 connections of another user take the daemon from 45 MB to 1.39 GB (issue 20, item 3);
// sock_diag answers with the one socket, whatever the number of others.
func loopbackPeerUID(peer, local netip.AddrPort) (int, error) {
	peer = netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port())
	local = netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
	s, err := netlink.SocketGet(net.TCPAddrFromAddrPort(peer), net.TCPAddrFromAddrPort(local))
	if err != nil {
		return -1, err
	}
	return int(s.UID), nil
}
