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
type Publisher struct {
	Link   Link
	Topics Topics
	Plan   Plan
	Log    *slog.Logger
	Now    func() time.Time

	mu       sync.Mutex
	statuses map[string]Status
	rollouts map[string]Rollout // space -> the latest record
	changed  chan struct{}
}

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
	r := Rollout{V: Version, ID: fmt.Sprintf("%s-%d", revision[:12], now.UnixMilli()), Space: space, Revision: revision,
		State: RolloutComplete, Plan: p.Plan, Started: now, Updated: now}
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

func (p *Publisher) publishWave(ctx context.Context, r Rollout, k int, at time.Time) error {
	w := r.Plan.Waves()[k]
	msg, err := Marshal(Update{V: Version, Space: r.Space, Revision: r.Revision, Time: at, Rollout: r.ID, Wave: k, From: w[0], To: w[1]})
	if err != nil {
		return err
	}
	return p.Link.Publish(ctx, p.Topics.Wave(r.Space, k), msg, true)
}

func (p *Publisher) record(ctx context.Context, r Rollout) error {
	msg, err := Marshal(r)
	if err != nil {
		return err
	}
	if err := p.Link.Publish(ctx, p.Topics.Rollout(r.Space), msg, true); err != nil {
		return err
	}
	p.mu.Lock()
	p.rollouts[r.Space] = r
	p.mu.Unlock()
	signal(p.changed)
	return nil
}

// Filters are what Run needs to be subscribed to: every robot's status, and the rollout records.
func (p *Publisher) Filters() []string { return []string{p.Topics.AllRobots(), p.Topics.AllRollouts()} }

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
		p.statuses[robot] = s
		p.mu.Unlock()
		signal(p.changed)
		return
	}
	r, err := ParseRollout(payload)
	if err != nil || topic != p.Topics.Rollout(r.Space) {
		return
	}
	p.mu.Lock()
	if cur, ok := p.rollouts[r.Space]; !ok || !cur.Updated.After(r.Updated) {
		p.rollouts[r.Space] = r
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
		u := Update{Space: r.Space, Revision: r.Revision, From: w[0], To: w[1]}
		d := r.Plan.Evaluate(u, r.Started, statuses, now)
		if !d.Advance && !d.Halt {
			continue
		}
		p.mu.Lock()
		current := p.rollouts[r.Space].ID == r.ID
		p.mu.Unlock()
		if !current { // a newer push to the space started its own rollout meanwhile
			continue
		}
		log := p.Log.With("space", r.Space, "revision", r.Revision, "rollout", r.ID)
		r.Done, r.Failed, r.Reason, r.Updated = d.Done, d.Failed, d.Reason, now.UTC()
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
