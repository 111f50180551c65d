// Package mqtt carries core/fleet's messages over an MQTT 5 broker (Eclipse Paho's Go client,
// github.com/eclipse/paho.golang): a receiver publishes announced revisions and rollout records, a
// robot daemon keeps a persistent session, subscribes to its apps' spaces and publishes its status.
// Any MQTT 5 broker works (Mosquitto, EMQX, HiveMQ, AWS IoT Core); package broker is the embedded
// one (mochi-mqtt) that `robothub dev` runs on loopback.
package mqtt

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/robothub/robothub/core/fault"
)

// Config is one connection to a broker.
type Config struct {
	URL      string // mqtt://, mqtts://, ws:// or wss:// HOST[:PORT][/PATH]; a user name may be in it
	ClientID string // the session's name: a robot's id; a CLI's random one
	Username string // overrides the URL's
	Password string // never logged; a password in the URL is taken as well
	TLS      *tls.Config

	KeepAlive time.Duration // default 30s
	// SessionExpiry keeps the session (subscriptions, messages queued while away) on the broker
	// for that long after a disconnect; 0 ends it with the connection (a clean session).
	SessionExpiry time.Duration
	// Will, when set, is called at each connection attempt: the message the broker publishes
	// (retained, QoS 1) when this client goes away without a clean disconnect.
	Will func(since time.Time) (topic string, payload []byte)

	OnUp   func(c *Client, since time.Time) // the connection is up (again); must not block
	OnDown func()                           // the connection is lost; must not block
	// OnTakenOver is called when the broker ends the session because another client connected
	// with ClientID (MQTT 5's reason 0x8E, session taken over). The client then stops
	// reconnecting: two clients with one id would otherwise take the session from each other
	// forever. Must not block.
	OnTakenOver func()
	OnMessage   func(topic string, payload []byte) // a message of a subscription; must not block long
	// ReceiveMaximum is how many QoS 1 messages the broker may send before this client acknowledges
	// them (MQTT 5's Receive Maximum); default 64. Paho allocates a queue of that many per
	// connection: the protocol's default, 65,535, cost 524 KB per client (BenchmarkFleetPush).
	ReceiveMaximum uint16
	Logger         *slog.Logger                    // connection errors at warn
	Backoff        func(attempt int) time.Duration // between connection attempts; default 1s to 1m, jittered
}

// ManyMessages is the ReceiveMaximum of a client that takes a message from every robot (the
// operator's robothub fleet, a canary publisher): 4,096 unacknowledged at a time keeps a distant
// broker sending (64 would be 1,280 messages/s at 50 ms round trips) for a 32 KB queue.
const ManyMessages = 4096

// Client is a connection to a broker that reconnects by itself.
type Client struct {
	cm     *autopaho.ConnectionManager
	ready  chan struct{} // closed once cm is set: callbacks may run before Connect returns
	log    *slog.Logger
	shown  string
	cancel context.CancelFunc

	mu      sync.Mutex
	lastErr error
}

// DefaultSessionExpiry is how long a robot's session outlives its connection: AWS IoT Core's
// maximum (7 days); a robot off for longer catches up from the retained messages when it resubscribes.
const DefaultSessionExpiry = 7 * 24 * time.Hour

// Connect starts connecting to the broker and returns at once; the client keeps (re)connecting
// until Close or ctx's end. AwaitConnection waits for the first connection.
func Connect(ctx context.Context, cfg Config) (*Client, error) {
	u, user, pass, err := ParseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.Username != "" {
		user = cfg.Username
	}
	if cfg.Password != "" {
		pass = cfg.Password
	}
	if cfg.ClientID == "" {
		return nil, errors.New("mqtt: a client id is required")
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ReceiveMaximum == 0 {
		cfg.ReceiveMaximum = 64
	}
	if cfg.Backoff == nil {
		cfg.Backoff = autopaho.NewExponentialBackoff(time.Second, time.Minute, 2*time.Second, 2)
	}
	tlsCfg := cfg.TLS
	if tlsCfg == nil && (u.Scheme == "mqtts" || u.Scheme == "wss") {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if tlsCfg != nil && tlsCfg.ServerName == "" {
		tlsCfg = tlsCfg.Clone()
		tlsCfg.ServerName = u.Hostname()
	}
	c := &Client{log: cfg.Logger.With("broker", Redact(u)), shown: Redact(u), ready: make(chan struct{})}
	ctx, c.cancel = context.WithCancel(ctx)
	expiry := uint32(cfg.SessionExpiry / time.Second)
	var upSince time.Time
	ac := autopaho.ClientConfig{
		ServerUrls:                    []*url.URL{u},
		TlsCfg:                        tlsCfg,
		KeepAlive:                     uint16(cfg.KeepAlive / time.Second),
		CleanStartOnInitialConnection: cfg.SessionExpiry == 0,
		SessionExpiryInterval:         expiry,
		ReconnectBackoff:              cfg.Backoff,
		ConnectTimeout:                10 * time.Second,
		ConnectUsername:               user,
		ConnectPassword:               []byte(pass),
		ConnectPacketBuilder: func(cp *paho.Connect, _ *url.URL) (*paho.Connect, error) {
			upSince = time.Now()
			if cp.Properties == nil {
				cp.Properties = &paho.ConnectProperties{}
			}
			cp.Properties.ReceiveMaximum = &cfg.ReceiveMaximum
			if cfg.Will != nil {
				topic, payload := cfg.Will(upSince)
				cp.WillMessage = &paho.WillMessage{Topic: topic, Payload: payload, QoS: 1, Retain: true}
				cp.WillProperties = &paho.WillProperties{}
			}
			return cp, nil
		},
		OnConnectionUp: func(_ *autopaho.ConnectionManager, ack *paho.Connack) {
			c.log.Info("mqtt: connected", "client", cfg.ClientID, "session_present", ack.SessionPresent)
			c.setErr(nil)
			if cfg.OnUp != nil {
				cfg.OnUp(c, upSince)
			}
		},
		OnConnectionDown: func() bool {
			c.log.Warn("mqtt: connection lost; reconnecting", "client", cfg.ClientID)
			if cfg.OnDown != nil {
				cfg.OnDown()
			}
			return true
		},
		OnConnectError: func(err error) {
			err = connectError(err, pass)
			c.setErr(err)
			c.log.Warn("mqtt: cannot connect", "client", cfg.ClientID, "err", err)
		},
		ClientConfig: paho.ClientConfig{
			ClientID: cfg.ClientID,
			OnServerDisconnect: func(d *paho.Disconnect) {
				if d.ReasonCode != sessionTakenOver {
					return
				}
				// Stop before the reconnect (1 s or more away) takes the session back from the other.
				c.cancel()
				c.log.Error("mqtt: another client connected with this client id and took the session over: not reconnecting, so that the two do not take it from each other",
					"client", cfg.ClientID)
				if cfg.OnTakenOver != nil {
					cfg.OnTakenOver()
				}
			},
			OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
				if cfg.OnMessage != nil {
					cfg.OnMessage(pr.Packet.Topic, pr.Packet.Payload)
				}
				return true, nil
			}},
		},
	}
	cm, err := autopaho.NewConnection(ctx, ac)
	if err != nil {
		c.cancel()
		return nil, fmt.Errorf("mqtt %s: %w", c.shown, err)
	}
	c.cm = cm
	close(c.ready)
	return c, nil
}

func (c *Client) setErr(err error) {
	c.mu.Lock()
	c.lastErr = err
	c.mu.Unlock()
}

// Broker is the broker's address without credentials, for messages and logs.
func (c *Client) Broker() string { return c.shown }

// AwaitConnection waits until the client is connected. When ctx ends first, the error says why the
// last attempt failed (refused credentials, a certificate, nothing listening).
func (c *Client) AwaitConnection(ctx context.Context) error {
	<-c.ready
	if err := c.cm.AwaitConnection(ctx); err != nil {
		c.mu.Lock()
		last := c.lastErr
		c.mu.Unlock()
		if last != nil {
			return fault.New(fault.Unavailable, "mqtt broker %s: %v", c.shown, last)
		}
		return fault.New(fault.Unavailable, "mqtt broker %s: not connected: %v", c.shown, err)
	}
	return nil
}

// Publish sends a message with QoS 1 and returns once the broker has acknowledged it; a broker
// that refuses it (an ACL, a quota) is an error naming the topic and the broker's reason.
func (c *Client) Publish(ctx context.Context, topic string, payload []byte, retain bool) error {
	if err := c.AwaitConnection(ctx); err != nil {
		return err
	}
	resp, err := c.cm.Publish(ctx, &paho.Publish{Topic: topic, Payload: payload, QoS: 1, Retain: retain})
	if resp != nil && resp.ReasonCode >= 0x80 {
		return reasonError("publish on "+topic, resp.ReasonCode, reasonString(resp.Properties))
	}
	if err != nil {
		return fault.New(fault.Unavailable, "mqtt broker %s: publish on %s: %v", c.shown, topic, err)
	}
	return nil
}

func reasonString(p *paho.PublishResponseProperties) string {
	if p == nil {
		return ""
	}
	return p.ReasonString
}

// Subscribe subscribes to filters with QoS 1. A filter the broker refuses is an error naming it.
func (c *Client) Subscribe(ctx context.Context, filters ...string) error {
	if err := c.AwaitConnection(ctx); err != nil {
		return err
	}
	s := &paho.Subscribe{}
	for _, f := range filters {
		s.Subscriptions = append(s.Subscriptions, paho.SubscribeOptions{Topic: f, QoS: 1})
	}
	ack, err := c.cm.Subscribe(ctx, s)
	if ack != nil {
		for i, code := range ack.Reasons {
			if code >= 0x80 && i < len(filters) {
				reason := ""
				if ack.Properties != nil {
					reason = ack.Properties.ReasonString
				}
				return reasonError("subscribe to "+filters[i], code, reason)
			}
		}
	}
	if err != nil {
		return fault.New(fault.Unavailable, "mqtt broker %s: subscribe: %v", c.shown, err)
	}
	return nil
}

// Unsubscribe ends subscriptions.
func (c *Client) Unsubscribe(ctx context.Context, filters ...string) error {
	if err := c.AwaitConnection(ctx); err != nil {
		return err
	}
	if _, err := c.cm.Unsubscribe(ctx, &paho.Unsubscribe{Topics: filters}); err != nil {
		return fault.New(fault.Unavailable, "mqtt broker %s: unsubscribe: %v", c.shown, err)
	}
	return nil
}

// Close disconnects cleanly (the will is not published) and stops reconnecting.
func (c *Client) Close(ctx context.Context) error {
	<-c.ready
	err := c.cm.Disconnect(ctx)
	c.cancel()
	return err
}

// Done is closed once the client has stopped.
func (c *Client) Done() <-chan struct{} { <-c.ready; return c.cm.Done() }

// sessionTakenOver is MQTT 5's DISCONNECT reason when another client connected with this one's id.
const sessionTakenOver = 0x8E

// reasonError maps an MQTT 5 reason code of 0x80 or more to core's error kinds.
func reasonError(what string, code byte, reason string) error {
	name := reasonNames[code]
	if name == "" {
		name = fmt.Sprintf("reason code 0x%02x", code)
	}
	if reason != "" {
		name += ": " + reason
	}
	kind := fault.Upstream
	switch code {
	case 0x87: // Not authorized
		kind = fault.Forbidden
	case 0x97, 0x89: // Quota exceeded, Server busy
		kind = fault.Unavailable
	case 0x95: // Packet too large
		kind = fault.TooLarge
	case 0x8F, 0x90: // Topic filter / name invalid
		kind = fault.Invalid
	}
	return fault.New(kind, "the broker refused to %s: %s", what, name)
}

var reasonNames = map[byte]string{
	0x80: "unspecified error", 0x83: "implementation specific error", 0x87: "not authorized",
	0x89: "server busy", 0x8F: "topic filter invalid", 0x90: "topic name invalid", 0x91: "packet identifier in use",
	0x95: "packet too large", 0x97: "quota exceeded", 0x99: "payload format invalid",
	0x9E: "shared subscriptions not supported", 0xA1: "subscription identifiers not supported",
	0xA2: "wildcard subscriptions not supported",
}

// connectError says why a connection attempt failed, without the password.
func connectError(err error, password string) error {
	var ce *autopaho.ConnackError
	if errors.As(err, &ce) {
		switch ce.ReasonCode {
		case 0x86:
			return errors.New("the broker refused the connection: bad user name or password")
		case 0x87:
			return errors.New("the broker refused the connection: not authorized")
		case 0x85:
			return errors.New("the broker refused the connection: client identifier not valid")
		}
		return fmt.Errorf("the broker refused the connection: %s (reason code 0x%02x)", ce.Reason, ce.ReasonCode)
	}
	msg := err.Error()
	if password != "" {
		msg = strings.ReplaceAll(msg, password, "xxxxx")
	}
	return errors.New(msg)
}
