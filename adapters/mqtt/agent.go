package mqtt

import (
	"context"
	"time"

	"github.com/robothub/robothub/core/fleet"
)

// ConnectAgent connects a robot's fleet agent: a persistent session (cfg.SessionExpiry, default
// DefaultSessionExpiry) named cfg.ClientID (the robot's id), its presence as the will, and the
// agent told of every (re)connection and message. Run the agent beside it; Leave ends it.
func ConnectAgent(ctx context.Context, cfg Config, agent *fleet.Agent, robot string, topics fleet.Topics) (*Client, error) {
	if cfg.SessionExpiry == 0 {
		cfg.SessionExpiry = DefaultSessionExpiry
	}
	cfg.Will = func(since time.Time) (string, []byte) { return topics.Online(robot), agent.Presence(false, since) }
	cfg.OnUp = func(c *Client, since time.Time) { agent.Connected(c, since) }
	cfg.OnDown = agent.Disconnected
	cfg.OnMessage = agent.Handle
	return Connect(ctx, cfg)
}

// Leave says the robot is offline (a clean disconnect does not fire the will) and disconnects;
// the session stays on the broker for the robot's next start.
func (c *Client) Leave(ctx context.Context, agent *fleet.Agent, robot string, topics fleet.Topics) error {
	err := c.Publish(ctx, topics.Online(robot), agent.Presence(false, time.Now()), true)
	if cerr := c.Close(ctx); err == nil {
		err = cerr
	}
	return err
}
