package actions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/robothub/robothub/core/apps/catalog"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/fleet"
	"github.com/robothub/robothub/core/hub"
	releasespec "github.com/robothub/robothub/core/release/spec"
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
	Space    string `json:"space,omitempty"`
	Revision string `json:"revision,omitempty"`
	Daemon   string `json:"daemon,omitempty"` // a daemon release announced (daemon= setting)
	Repo     string `json:"repo,omitempty"`
	Rollout  string `json:"rollout"`
	State    string `json:"state"` // complete: every robot was told; canary: the canary share was
	Topic    string `json:"topic"`
}

var fleetSettings = []string{"canary", "halt", "wait", "daemon", "channel"}

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
			return nil, fmt.Errorf("route %s: fleet: unknown setting %q: use canary=PERCENT, halt=PERCENT, wait=DURATION, daemon=REPO, channel=stable|pre-release", route, k)
		}
	}
	plan, err := fleet.ParsePlan(q.Get)
	if err != nil {
		return nil, fmt.Errorf("route %s: fleet: %w", route, err)
	}
	// daemon=REPO: a push to that release repository announces the robot-daemon release its
	// channels.json names on channel= (stable by default), as robothub fleet update-daemon does.
	var daemonRepo *releasespec.Repo
	channel := q.Get("channel")
	if d := q.Get("daemon"); d != "" {
		r, err := releasespec.ParseRepo(d)
		if err != nil {
			return nil, fmt.Errorf("route %s: fleet: daemon=%s: %w", route, d, err)
		}
		daemonRepo = &r
		if channel == "" {
			channel = releasespec.Stable
		}
		if err := releasespec.CheckChannel(channel); err != nil {
			return nil, fmt.Errorf("route %s: fleet: %w", route, err)
		}
	} else if channel != "" {
		return nil, fmt.Errorf("route %s: fleet: channel= goes with daemon=REPO", route)
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
		if daemonRepo != nil && p.Event.Is(webhook.ScopeRepoContent, webhook.ActionUpdate) && p.Repo.Type == daemonRepo.Type && p.Repo.Name == daemonRepo.ID {
			return announceDaemon(ctx, pub, p, *daemonRepo, channel, log)
		}
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
		// An app of the store changed (a new one, or a new card): every robot refreshes its
		// catalog, not only those that have the app.
		if slices.Contains(p.Repo.Tags, catalog.AppTag) {
			if err := pub.AnnounceCatalog(ctx, r.Space, r.Revision); err != nil {
				log.Warn("the app store's change was not announced: robots list it when their catalog's cache expires", "space", r.Space, "err", err)
			} else {
				msg += "; the robots' app stores refreshed"
			}
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

// announceDaemon announces the daemon release that a push to the release repository made the
// newest of its channel: channels.json at the pushed commit, read from the hub the payload names.
// Each robot checks the release's signature before it installs it.
func announceDaemon(ctx context.Context, pub *fleet.Publisher, p *webhook.Payload, repo releasespec.Repo, channel string, log *slog.Logger) (any, error) {
	if err := fleet.CheckRevision(strings.ToLower(p.Repo.HeadSha)); err != nil {
		return nil, fault.Invalidf("payload field repo.headSha: %v", err)
	}
	base, _, ok := strings.Cut(p.Repo.URL.API, "/api/")
	if !ok {
		return nil, fault.Invalidf("payload field repo.url.api %q does not name the hub's API", p.Repo.URL.API)
	}
	c, err := hub.New(base, hub.WithRetry(hub.RetryPolicy{MaxAttempts: 3}))
	if err != nil {
		return nil, fault.Invalidf("payload field repo.url.api: %v", err)
	}
	data, err := c.Download(ctx, repo.Type, repo.ID, strings.ToLower(p.Repo.HeadSha), "channels.json")
	if err != nil {
		return nil, fault.New(fault.Upstream, "reading channels.json of %s at %s: %v", repo, p.Repo.HeadSha, err)
	}
	ix, err := releasespec.ParseIndex(data)
	if err != nil {
		return nil, fault.New(fault.Upstream, "%s: %v", repo, err)
	}
	v, ok := ix.Newest(channel)
	if !ok {
		return fmt.Sprintf("ignored: %s has no release on the %s channel", repo, channel), nil
	}
	r, err := pub.AnnounceDaemon(ctx, v.String(), repo.String())
	if err != nil {
		if errors.Is(err, fault.ErrUnavailable) || ctx.Err() != nil {
			return nil, fault.New(fault.Unavailable, "the fleet's broker did not take the announcement: %v", err)
		}
		return nil, fault.New(fault.Upstream, "the fleet's broker refused the announcement: %v", err)
	}
	log.Info("fleet announcement", "daemon", v.String(), "repo", repo.String(), "rollout", r.ID, "state", r.State)
	return webhook.Response{Status: http.StatusAccepted, Body: FleetResult{
		Message: fmt.Sprintf("announced robot-daemon %s (%s) to the fleet", v, repo), Daemon: v.String(), Repo: repo.String(),
		Rollout: r.ID, State: r.State, Topic: fleet.Topics{}.DaemonWave(0),
	}}, nil
}
