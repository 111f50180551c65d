package nethttp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"golang.ngrok.com/ngrok/v2"
)

// Environment variables of the ngrok tunnel.
const (
	NgrokAuthtokenEnv = "NGROK_AUTHTOKEN" // enables the in-process ngrok tunnel
	NgrokDomainEnv    = "NGROK_DOMAIN"    // a reserved domain: the public URL then survives restarts
)

// NgrokTunnel forwards public traffic to the local server through ngrok, inside this process: no
// ngrok program to install.
type NgrokTunnel struct {
	Authtoken string
	Domain    string // optional reserved domain, such as my-receiver.ngrok.app
	Logger    *slog.Logger
	// ConnectURL overrides ngrok's service address (tests point it at a closed local port).
	ConnectURL string

	agent ngrok.Agent
	fwd   ngrok.EndpointForwarder
}

// Name implements Tunnel.
func (t *NgrokTunnel) Name() string { return "ngrok" }

// Open implements Tunnel.
func (t *NgrokTunnel) Open(ctx context.Context, localURL string) (string, error) {
	if t.Authtoken == "" {
		return "", errors.New("no ngrok authtoken: set " + NgrokAuthtokenEnv)
	}
	opts := []ngrok.AgentOption{ngrok.WithAuthtoken(t.Authtoken), ngrok.WithClientInfo("robothub", "1")}
	if t.Logger != nil {
		opts = append(opts, ngrok.WithLogger(t.Logger))
	}
	if t.ConnectURL != "" {
		opts = append(opts, ngrok.WithAgentConnectURL(t.ConnectURL))
	}
	agent, err := ngrok.NewAgent(opts...)
	if err != nil {
		return "", t.scrub(err)
	}
	var eopts []ngrok.EndpointOption
	if t.Domain != "" {
		d := t.Domain
		if !strings.Contains(d, "://") {
			d = "https://" + d
		}
		eopts = append(eopts, ngrok.WithURL(d))
	}
	fwd, err := agent.Forward(ctx, ngrok.WithUpstream(localURL), eopts...)
	if err != nil {
		_ = agent.Disconnect()
		return "", t.scrub(err)
	}
	t.agent, t.fwd = agent, fwd
	return strings.TrimRight(fwd.URL().String(), "/"), nil
}

// Close implements Tunnel.
func (t *NgrokTunnel) Close() error {
	if t.fwd != nil {
		_ = t.fwd.Close()
	}
	if t.agent != nil {
		return t.agent.Disconnect()
	}
	return nil
}

// scrub keeps the authtoken out of error messages.
func (t *NgrokTunnel) scrub(err error) error {
	msg := err.Error()
	if t.Authtoken != "" && strings.Contains(msg, t.Authtoken) {
		msg = strings.ReplaceAll(msg, t.Authtoken, "[authtoken]")
	}
	return fmt.Errorf("ngrok: %s", msg)
}
