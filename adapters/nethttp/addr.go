package nethttp

import (
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/robothub/robothub/core/webhook"
)

// Environment variables that choose where a receiver listens.
const (
	PortEnv      = "PORT"       // listen on 127.0.0.1:$PORT
	SpaceHostEnv = "SPACE_HOST" // set by the hub on a Space: listen on all interfaces, public https://$SPACE_HOST
)

// ResolveAddr picks the listen address: an explicit addr wins; on a hub Space (SPACE_HOST set) it
// is 0.0.0.0:7860 (or $PORT), as the Space's app_port expects; otherwise 127.0.0.1 with $PORT or 7860.
func ResolveAddr(addr string, getenv func(string) string) string {
	if addr != "" {
		return addr
	}
	port := getenv(PortEnv)
	if port == "" {
		port = "7860"
	}
	if getenv(SpaceHostEnv) != "" {
		return "0.0.0.0:" + port
	}
	return "127.0.0.1:" + port
}

// spaceURL is the public address of a hub Space, or "".
func spaceURL(getenv func(string) string) string {
	host := strings.TrimSpace(getenv(SpaceHostEnv))
	if host == "" {
		return ""
	}
	if strings.HasPrefix(host, "http://") || strings.HasPrefix(host, "https://") {
		return strings.TrimRight(host, "/")
	}
	return "https://" + strings.TrimRight(host, "/")
}

// localURL is the URL a browser on this machine uses to reach addr: a wildcard address is shown
// as 127.0.0.1.
func localURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

func printAddresses(out io.Writer, title, base string, routes []webhook.Route) {
	fmt.Fprintf(out, "%s %s\n", title, base)
	fmt.Fprintf(out, "  landing page   %s/\n", base)
	if len(routes) == 0 {
		fmt.Fprintln(out, "  (no webhook route registered)")
	}
	for _, r := range routes {
		fmt.Fprintf(out, "  POST           %s%s\n", base, r.Path)
	}
}
