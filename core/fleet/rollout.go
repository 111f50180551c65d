package fleet

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"
)

// Publisher announces pushes to a fleet and, with a canary plan, drives the waves: the wave state
// is in the retained wave messages and rollout records on the broker, so a publisher that restarts
// (or another one) resumes it. A publisher that only announces (a Lambda function) needs only
// Announce; Run, which advances canaries, needs a process that stays up.
//
// A canary wave is judged only from a settled view of the fleet. The robots' statuses are retained
// messages that the broker replays after Run's subscription, at its own pace: judged earlier, a wave
// could complete (or go on to everyone) on the word of the few canary robots heard from so far. So
// the view settles Settle after the subscription was acknowledged (Subscribed) and after the last
// robot new to the view, and the wave's planned robots are those the settled view counts.
type Publisher struct {
	Link   Link
	Topics Topics
	Plan   Plan
	Log    *slog.Logger
	Now    func() time.Time
	Settle time.Duration // DefaultSettle when zero

	mu         sync.Mutex
	statuses   map[string]Status
	rollouts   map[string]Rollout // space -> the latest record
	changed    chan struct{}
	subscribed time.Time // when the statuses' subscription was first acknowledged
	lastNew    time.Time // when the last robot new to the view was heard from
}

// DefaultSettle is how long a publisher's view of the fleet must go without a new robot, after its
// subscription, before a canary wave is judged. Brokers replay retained statuses in a burst right
// after the subscription's acknowledgement, so a second without a new robot means the replay ended.
const DefaultSettle = time.Second

func (p *Publisher) init() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.statuses == nil {
		p.statuses, p.rollouts, p.changed = map[string]Status{}, map[string]Rollout{}, make(chan struct{}, 1)
	}
	if p.Log == nil {
		p.Log = slog.Default()
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Settle <= 0 {
		p.Settle = DefaultSettle
	}
}

// Subscribed tells the publisher that the link acknowledged its subscription to Filters: the
// retained statuses are on their way. A resubscription after a reconnection changes nothing.
func (p *Publisher) Subscribed() {
	p.init()
	p.mu.Lock()
	first := p.subscribed.IsZero()
	if first {
		p.subscribed = p.Now()
	}
	p.mu.Unlock()
	if first {
		p.wakeAfterSettle()
	}
}

// settledAt is when the view of the fleet settles (or settled): zero while not subscribed.
// p.mu is held.
func (p *Publisher) settledAt() time.Time {
	if p.subscribed.IsZero() {
		return time.Time{}
	}
	last := p.subscribed
	if p.lastNew.After(last) {
		last = p.lastNew
	}
	return last.Add(p.Settle)
}

// current reports whether r is the latest rollout of its space.
func (p *Publisher) current(r Rollout) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rollouts[r.key()].ID == r.ID
}

// wakeAfterSettle makes Run look again once the view may have settled.
func (p *Publisher) wakeAfterSettle() {
	time.AfterFunc(p.Settle, func() { signal(p.changed) })
}

// Announce publishes revision of space to the first wave (everyone without a canary) and the
// rollout's record, each retained with QoS 1, and returns once the broker has acknowledged both.
func (p *Publisher) Announce(ctx context.Context, space, revision string) (Rollout, error) {
	p.init()
	if err := CheckSpace(space); err != nil {
		return Rollout{}, err
	}
	if err := CheckRevision(revision); err != nil {
		return Rollout{}, err
	}
	now := p.Now().UTC()
	return p.announce(ctx, Rollout{V: Version, ID: fmt.Sprintf("%s-%d", revision[:12], now.UnixMilli()), Space: space, Revision: revision,
		State: RolloutComplete, Plan: p.Plan, Started: now, Updated: now})
}

// AnnounceDaemon publishes robot-daemon release version of the release repository repo to the
// first wave (everyone without a canary) and the rollout's record, as Announce does for a space.
// Each robot checks the release against the key it was built with before it installs it.
func (p *Publisher) AnnounceDaemon(ctx context.Context, version, repo string) (Rollout, error) {
	p.init()
	if err := CheckDaemonRelease(version, repo); err != nil {
		return Rollout{}, err
	}
	now := p.Now().UTC()
	return p.announce(ctx, Rollout{V: Version, ID: fmt.Sprintf("daemon-%s-%d", clip32(version), now.UnixMilli()), Daemon: version, Repo: repo,
		State: RolloutComplete, Plan: p.Plan, Started: now, Updated: now})
}

func clip32(s string) string {
	if len(s) > 32 {
		return s[:32]
	}
	return s
}

func (p *Publisher) announce(ctx context.Context, r Rollout) (Rollout, error) {
	now := r.Started
	waves := p.Plan.Waves()
	if len(waves) > 1 {
		r.State = RolloutCanary
	}
	if err := p.publishWave(ctx, r, 0, now); err != nil {
		return Rollout{}, err
	}
	if err := p.record(ctx, r); err != nil {
		return Rollout{}, err
	}
	return r, nil
}

// AnnounceCatalog tells every robot that a push changed space, an app of the store: one retained
// QoS 1 message on the catalog topic, so that each refreshes its catalog (a new app is listed at
// once) and a robot that connects later does too.
func (p *Publisher) AnnounceCatalog(ctx context.Context, space, revision string) error {
	p.init()
	if err := CheckSpace(space); err != nil {
		return err
	}
	if err := CheckRevision(revision); err != nil {
		return err
	}
	msg, err := Marshal(CatalogChange{V: Version, Space: space, Revision: revision, Time: p.Now().UTC()})
	if err != nil {
		return err
	}
	return p.Link.Publish(ctx, p.Topics.Catalog(), msg, true)
}

func (p *Publisher) publishWave(ctx context.Context, r Rollout, k int, at time.Time) error {
	w := r.Plan.Waves()[k]
	u := r.update(k, w[0], w[1])
	u.Time = at
	msg, err := Marshal(u)
	if err != nil {
		return err
	}
	return p.Link.Publish(ctx, p.Topics.waveOf(r, k), msg, true)
}

func (p *Publisher) record(ctx context.Context, r Rollout) error {
	msg, err := Marshal(r)
	if err != nil {
		return err
	}
	if err := p.Link.Publish(ctx, p.Topics.rolloutOf(r), msg, true); err != nil {
		return err
	}
	p.mu.Lock()
	p.rollouts[r.key()] = r
	p.mu.Unlock()
	signal(p.changed)
	return nil
}

// Filters are what Run needs to be subscribed to: every robot's status, and the rollout records.
func (p *Publisher) Filters() []string {
	return []string{p.Topics.AllRobots(), p.Topics.AllRollouts(), p.Topics.DaemonRollout()}
}

// Handle takes a status or rollout record from the link. It does not block.
func (p *Publisher) Handle(topic string, payload []byte) {
	p.init()
	if robot, kind, ok := p.Topics.ParseRobot(topic); ok {
		if kind != "status" || len(payload) == 0 {
			return
		}
		s, err := ParseStatus(payload)
		if err != nil || s.Robot != robot {
			p.Log.Warn("fleet: ignoring a robot status", "topic", topic, "err", err)
			return
		}
		p.mu.Lock()
		_, known := p.statuses[robot]
		p.statuses[robot] = s
		if !known {
			p.lastNew = p.Now()
		}
		p.mu.Unlock()
		if !known {
			p.wakeAfterSettle()
		}
		signal(p.changed)
		return
	}
	r, err := ParseRollout(payload)
	if err != nil || topic != p.Topics.rolloutOf(r) {
		return
	}
	p.mu.Lock()
	if cur, ok := p.rollouts[r.key()]; !ok || !cur.Updated.After(r.Updated) {
		p.rollouts[r.key()] = r
	}
	p.mu.Unlock()
	signal(p.changed)
}

// Run advances or halts every rollout in its canary wave as the robots report, until ctx ends.
func (p *Publisher) Run(ctx context.Context) error {
	p.init()
	tick := time.NewTicker(time.Second) // for the canary's Wait, when no robot reports
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-p.changed:
		case <-tick.C:
		}
		p.step(ctx)
	}
}

func (p *Publisher) step(ctx context.Context) {
	now := p.Now()
	p.mu.Lock()
	statuses := maps.Clone(p.statuses)
	settle := p.settledAt()
	settled := !settle.IsZero() && !now.Before(settle)
	var canaries []Rollout
	for _, r := range p.rollouts {
		if r.State == RolloutCanary {
			canaries = append(canaries, r)
		}
	}
	p.mu.Unlock()
	slices.SortFunc(canaries, func(a, b Rollout) int { return a.Started.Compare(b.Started) })
	for _, r := range canaries {
		w := r.Plan.Waves()[0]
		u := r.update(0, w[0], w[1])
		var d Decision
		switch {
		case !settled && now.Sub(r.Started) >= r.Plan.Wait:
			d.Halt, d.Reason = true, fmt.Sprintf("the robots' statuses did not arrive within %s (is the publisher subscribed to %s?)", r.Plan.Wait, p.Topics.AllRobots())
		case !settled:
			continue
		default:
			if r.Planned == nil && p.current(r) {
				// The wave's size, said once in the record: what the settled view counts now.
				r.Planned = append([]string{}, CanaryRobots(u, statuses)...)
				r.Updated = now.UTC()
				if err := p.record(ctx, r); err != nil {
					p.Log.Warn("fleet: recording the canary's robots", "space", r.Space, "rollout", r.ID, "err", err)
				}
			}
			d = r.Plan.Evaluate(u, r.Started, r.Planned, statuses, now)
		}
		if !d.Advance && !d.Halt {
			continue
		}
		if !p.current(r) { // a newer push to the space started its own rollout meanwhile
			continue
		}
		log := p.Log.With("space", r.Space, "revision", r.Revision, "daemon", r.Daemon, "rollout", r.ID)
		r.Done, r.Failed, r.Reason, r.Updated = d.Done, d.Failed, d.Reason, now.UTC()
		r.Heard = len(d.Done) + len(d.Failed)
		if d.Halt {
			r.State = RolloutHalted
			log.Warn("fleet: rollout halted: " + d.Reason)
		} else {
			if err := p.publishWave(ctx, r, 1, now.UTC()); err != nil {
				log.Warn("fleet: publishing the rest of the rollout", "err", err)
				continue
			}
			r.State = RolloutComplete
			log.Info("fleet: rollout goes on to every robot: " + d.Reason)
		}
		if err := p.record(ctx, r); err != nil {
			log.Warn("fleet: recording the rollout", "err", err)
		}
	}
}

// DaemonRollout is the latest daemon release rollout the publisher knows of.
func (p *Publisher) DaemonRollout() (Rollout, bool) {
	p.init()
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.rollouts[daemonKey]
	return r, ok
}
