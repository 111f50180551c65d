package access

import (
	"net"
	"os"
	"testing"
)

// The uid of a loopback client comes from the kernel's socket table, on IPv4 and IPv6 alike.
func TestLoopbackPeerUID(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		addr := "127.0.0.1:0"
		if network == "tcp6" {
			addr = "[::1]:0"
		}
		ln, err := net.Listen(network, addr)
		if err != nil {
			t.Logf("%s: %v (no loopback of this family here)", network, err)
			continue
		}
		defer ln.Close()
		client, err := net.Dial(network, ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		server, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer server.Close()
		uid := lookupPeerUID(server.RemoteAddr(), server.LocalAddr())
		if uid != os.Getuid() {
			t.Errorf("%s: peer uid %d, want %d", network, uid, os.Getuid())
		}
		// The server's own end is not the client: swapping the addresses finds the server's socket,
		// which is this process too, but an address with no socket finds nothing.
		if got := lookupPeerUID(&net.TCPAddr{IP: server.RemoteAddr().(*net.TCPAddr).IP, Port: 1}, server.LocalAddr()); got != -1 {
			t.Errorf("%s: a port with no socket gave uid %d", network, got)
		}
	}
}

// BenchmarkLoopbackPeerUID is one lookup of a loopback client's user with 2,000 other loopback
// connections open, as during a flood: what Server.Listener does for each connection it accepts.
func BenchmarkLoopbackPeerUID(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 2001)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 2001 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c, <-accepted)
	}
	server := conns[len(conns)-1]
	for b.Loop() {
		if uid := lookupPeerUID(server.RemoteAddr(), server.LocalAddr()); uid != os.Getuid() {
			b.Fatalf("uid %d", uid)
		}
	}
}
