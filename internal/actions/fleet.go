package actions

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/fleet"
	"github.com/robothub/robothub/core/webhook"
)

// The environment of a fleet: route's broker credentials (also read by `robothub fleet`). The
// password is removed from the environment of exec: commands, as the webhook secret is.
const (
	FleetUsernameEnv = "ROBOTHUB_FLEET_USERNAME"
	FleetPasswordEnv = "ROBOTHUB_FLEET_PASSWORD"
	FleetCAEnv       = "ROBOTHUB_FLEET_CA"   // PEM file of the CAs to trust (default: the system's)
	FleetCertEnv     = "ROBOTHUB_FLEET_CERT" // PEM file of a client certificate (AWS IoT Core's way)
	FleetKeyEnv      = "ROBOTHUB_FLEET_KEY"  // its key
)

// FleetResult is the reply of a fleet action that announced a push.
type FleetResult struct {
	Message  string `json:"message"`
	Space    string `json:"space"`
	Revision string `json:"revision"`
	Rollout  string `json:"rollout"`
	State    string `json:"state"` // complete: every robot was told; canary: the canary share was
	Topic    string `json:"topic"`
}

var fleetSettings = []string{"canary", "halt", "wait"}

// fleetAction announces a push to a space to the robots of a fleet: one retained QoS 1 message on
// the space's wave topic, answered 202 once the broker has acknowledged it. With canary=N the first
// wave is N % of the robots, and this process advances the rest when they report (or halts).
func (b *Builder) fleetAction(route, spec string) (webhook.HandlerFunc, error) {
	target, query, _ := strings.Cut(spec, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("route %s: fleet: settings %q: %v", route, query, err)
	}
	for k := range q {
		if !slices.Contains(fleetSettings, k) {
			return nil, fmt.Errorf("route %s: fleet: unknown setting %q: use canary=PERCENT, halt=PERCENT, wait=DURATION", route, k)
		}
	}
	plan, err := fleet.ParsePlan(q.Get)
	if err != nil {
		return nil, fmt.Errorf("route %s: fleet: %w", route, err)
	}
	if plan.Canary > 0 && b.cfg.Ephemeral {
		return nil, fmt.Errorf("route %s: fleet: canary waves need a receiver that stays up to advance them (robothub serve, a Space); this one stops after each delivery", route)
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("route %s: fleet: the broker URL: %v", route, redactParseError(err))
	}
	log := b.cfg.Logger.With("route", route, "broker", u.Redacted())
	pub := &fleet.Publisher{Plan: plan, Log: log}
	dial, ok := b.cfg.FleetDialers[u.Scheme]
	if !ok {
		return nil, fmt.Errorf("route %s: fleet: %s:// is no fleet link of this receiver: want %s", route, u.Scheme, schemes(b.cfg.FleetDialers))
	}
	env := b.cfg.Getenv
	host, _ := os.Hostname()
	req := fleet.LinkRequest{Target: u, Username: env(FleetUsernameEnv), Password: env(FleetPasswordEnv), TLS: b.cfg.FleetTLS,
		CAFile: env(FleetCAEnv), CertFile: env(FleetCertEnv), KeyFile: env(FleetKeyEnv), Logger: b.cfg.Logger.With("route", route, "host", host)}
	if plan.Canary > 0 {
		req.Statuses = pub
	}
	if pub.Link, err = dial(b.ctx, req); err != nil {
		return nil, fmt.Errorf("route %s: fleet: %w", route, err)
	}
	if c, ok := pub.Link.(interface{ Close(context.Context) error }); ok {
		b.closers = append(b.closers, func(ctx context.Context) { _ = c.Close(ctx) })
	}
	if shown, ok := pub.Link.(interface{ Broker() string }); ok {
		log = log.With("broker", shown.Broker())
	}
	if plan.Canary > 0 {
		go func() { _ = pub.Run(b.ctx) }()
	}

	return func(ctx context.Context, p *webhook.Payload, _ http.Header) (any, error) {
		if !p.Event.Is(webhook.ScopeRepoContent, webhook.ActionUpdate) || p.Repo.Type != "space" {
			return fmt.Sprintf("ignored: %s %s on %s %s is not a push to a space", p.Event.Scope, p.Event.Action, p.Repo.Type, p.Repo.Name), nil
		}
		rev := strings.ToLower(p.Repo.HeadSha)
		if err := fleet.CheckRevision(rev); err != nil {
			return nil, fault.Invalidf("payload field repo.headSha: %v: there is no revision to announce", err)
		}
		if err := fleet.CheckSpace(p.Repo.Name); err != nil {
			return nil, fault.Invalidf("payload field repo.name: %v", err)
		}
		r, err := pub.Announce(ctx, p.Repo.Name, rev)
		if err != nil {
			log.Error("fleet announcement failed", "space", p.Repo.Name, "revision", rev, "err", err)
			if errors.Is(err, fault.ErrUnavailable) || ctx.Err() != nil {
				return nil, fault.New(fault.Unavailable, "the fleet's broker did not take the announcement: %v", err)
			}
			return nil, fault.New(fault.Upstream, "the fleet's broker refused the announcement: %v", err)
		}
		msg := fmt.Sprintf("announced %s at %s to the fleet", r.Space, r.Revision)
		if r.State == fleet.RolloutCanary {
			msg += fmt.Sprintf(" (canary: %d %% first; the rest when they report)", plan.Canary)
		}
		log.Info("fleet announcement", "space", r.Space, "revision", r.Revision, "rollout", r.ID, "state", r.State)
		return webhook.Response{Status: http.StatusAccepted, Body: FleetResult{
			Message: msg, Space: r.Space, Revision: r.Revision, Rollout: r.ID, State: r.State, Topic: fleet.Topics{}.Wave(r.Space, 0),
		}}, nil
	}, nil
}

// schemes lists the fleet links a receiver has, as "mqtt://, mqtts://, ws:// or wss://".
func schemes(dialers map[string]fleet.Dialer) string {
	names := slices.Sorted(maps.Keys(dialers))
	for i := range names {
		names[i] += "://"
	}
	switch len(names) {
	case 0:
		return "a receiver with fleet links (it has none)"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func redactParseError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
