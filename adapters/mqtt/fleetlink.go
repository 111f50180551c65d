package mqtt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/robothub/robothub/core/fleet"
)

// FleetDialers are the fleet links over an MQTT broker, by URL scheme, for a receiver to register
// (internal/actions' Config.FleetDialers).
func FleetDialers() map[string]fleet.Dialer {
	return map[string]fleet.Dialer{"mqtt": DialFleetLink, "mqtts": DialFleetLink, "ws": DialFleetLink, "wss": DialFleetLink}
}

// DialFleetLink connects a receiver's fleet route to its broker with the receiver's credentials;
// the connection lives until Close or ctx's end. With req.Statuses it also subscribes to the robots'
// statuses and the rollout records, at every (re)connection.
func DialFleetLink(ctx context.Context, req fleet.LinkRequest) (fleet.Link, error) {
	tlsCfg := req.TLS
	if tlsCfg == nil && (req.CAFile != "" || req.CertFile != "") {
		t, err := TLSFiles(req.CAFile, req.CertFile, req.KeyFile)
		if err != nil {
			return nil, err
		}
		tlsCfg = t
	}
	id := make([]byte, 6)
	_, _ = rand.Read(id)
	clientID := "robothub-receiver-" + hex.EncodeToString(id)
	if req.Username != "" {
		clientID = req.Username // brokers that tie a client id to its user name (use_username_as_clientid, AWS IoT policies)
	}
	cfg := Config{URL: req.Target.String(), ClientID: clientID, Username: req.Username, Password: req.Password, TLS: tlsCfg, Logger: req.Logger}
	if pub := req.Statuses; pub != nil {
		cfg.ReceiveMaximum = ManyMessages // every robot's status
		cfg.OnMessage = pub.Handle
		cfg.OnUp = func(client *Client, _ time.Time) {
			go func() {
				if err := client.Subscribe(ctx, pub.Filters()...); err != nil {
					req.Logger.Warn("fleet: subscribing to the robots' statuses", "err", err)
					return
				}
				pub.Subscribed()
			}()
		}
	}
	return Connect(ctx, cfg)
}
