package robotd

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"

	"github.com/hashicorp/mdns"

	"github.com/robothub/robothub/robotd/daemonapi"
)

// mDNS: a daemon that listens beyond loopback announces itself on the local network, as the public
// robot does, so that a script on a laptop finds it by name without ROBOT_DAEMON_URL: the host name
// <robot-name>.local (the robot's display name made a DNS label; "robot" by default) answers with
// the machine's addresses, and the service _robot-daemon._tcp names its port. The name is the one at
// start: a robot renamed is announced under its new name after a restart.

// MDNSService is the DNS-SD service type the daemon announces.
const MDNSService = "_robot-daemon._tcp"

// mdnsLabel makes a robot's display name a DNS label: lower-case letters, digits and '-'.
func mdnsLabel(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	label := strings.Trim(b.String(), "-")
	if len(label) > 63 {
		label = strings.Trim(label[:63], "-")
	}
	if label == "" {
		return daemonapi.DefaultRobotName
	}
	return label
}

// advertise answers mDNS queries for the daemon listening at addr until the returned closer is
// closed. An unspecified address (0.0.0.0, ::) is announced with every address of the machine's
// interfaces that are up, loopback excepted.
func advertise(robotName string, addr *net.TCPAddr, log *slog.Logger) (io.Closer, string, error) {
	ips := []net.IP{addr.IP}
	if addr.IP.IsUnspecified() {
		ips = nil
		ifaces, err := net.Interfaces()
		if err != nil {
			return nil, "", fmt.Errorf("listing the network interfaces: %w", err)
		}
		for _, ifc := range ifaces {
			if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
				continue
			}
			addrs, _ := ifc.Addrs()
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
					ips = append(ips, n.IP)
				}
			}
		}
		if len(ips) == 0 {
			return nil, "", fmt.Errorf("no network interface is up with an address to announce")
		}
	}
	host := mdnsLabel(robotName) + ".local."
	svc, err := mdns.NewMDNSService(robotName, MDNSService, "local.", host, addr.Port, ips, []string{"path=/api"})
	if err != nil {
		return nil, "", err
	}
	srv, err := mdns.NewServer(&mdns.Config{Zone: svc, Logger: slog.NewLogLogger(log.Handler(), slog.LevelDebug)})
	if err != nil {
		return nil, "", fmt.Errorf("listening for mDNS queries: %w", err)
	}
	return closer(srv.Shutdown), strings.TrimSuffix(host, "."), nil
}

type closer func() error

func (c closer) Close() error { return c() }
