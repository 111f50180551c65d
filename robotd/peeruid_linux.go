package robotd

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
)

// loopbackPeerUID returns the uid of the local process whose TCP socket at peer is connected to
// local: the row of /proc/net/tcp (or tcp6) whose local address is peer and remote address is
// local, the client's side of the connection.
//
// Why /proc/net/tcp: SO_PEERCRED works on unix sockets only, and a unix socket would leave every
// client of the anchor's API (curl localhost:8000, the SDK, the dashboard) behind. The kernel's
// table is the same one ss(8) reads; the daemon reads it once per connection, never per request.
func loopbackPeerUID(peer, local netip.AddrPort) (int, error) {
	peer = netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port())
	local = netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		uid, err := findSocketUID(file, peer, local)
		if err == nil {
			return uid, nil
		}
		if !errors.Is(err, errNoSocket) && !errors.Is(err, os.ErrNotExist) {
			return -1, err
		}
	}
	return -1, errNoSocket
}

var errNoSocket = errors.New("no local socket for this connection")

func findSocketUID(file string, peer, local netip.AddrPort) (int, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return -1, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Scan() // the header line
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
		f := bytes.Fields(sc.Bytes())
		if len(f) < 8 {
			continue
		}
		l, err1 := parseProcAddr(f[1])
		r, err2 := parseProcAddr(f[2])
		if err1 != nil || err2 != nil || l != peer || r != local {
			continue
		}
		uid, err := strconv.Atoi(string(f[7]))
		if err != nil {
			return -1, fmt.Errorf("%s: uid %q: %w", file, f[7], err)
		}
		return uid, nil
	}
	return -1, errNoSocket
}

// parseProcAddr reads "0100007F:1F40": the address as the kernel's 32-bit words, each printed in
// the machine's byte order, then the port.
func parseProcAddr(b []byte) (netip.AddrPort, error) {
	i := bytes.IndexByte(b, ':')
	if i < 0 {
		return netip.AddrPort{}, errors.New("no port")
	}
	raw, err := hex.DecodeString(string(b[:i]))
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, errors.New("bad address")
	}
	port, err := strconv.ParseUint(string(b[i+1:]), 16, 16)
	if err != nil {
		return netip.AddrPort{}, err
	}
	addr := make([]byte, len(raw))
	for w := 0; w < len(raw); w += 4 {
		binary.NativeEndian.PutUint32(addr[w:], binary.BigEndian.Uint32(raw[w:]))
	}
	a, _ := netip.AddrFromSlice(addr)
	return netip.AddrPortFrom(a.Unmap(), uint16(port)), nil
}
