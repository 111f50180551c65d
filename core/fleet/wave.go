package fleet

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxWaves is the number of waves a rollout has at most: a canary and the rest.
const MaxWaves = 2

// DefaultCanaryWait is how long the rest of a fleet waits for the canary's robots to report.
const DefaultCanaryWait = 15 * time.Minute

// EmptyCanaryGrace is how long a rollout whose canary share has no robot with the app waits before
// it goes on to everyone: a publisher that has just (re)connected may not have every retained
// status yet, and an empty canary must not be the effect of that.
const EmptyCanaryGrace = 30 * time.Second

// Plan is how a push rolls out. With Canary 0 every robot gets it at once (one wave). Otherwise
// the robots of the first Canary percent of buckets get it first, and the rest when each canary
// robot has reported; the rollout halts when more than Halt percent of the canary robots failed,
// or when none has reported within Wait.
type Plan struct {
	Canary int           `json:"canary"`            // percent of the fleet in the canary wave, 0 to 99
	Halt   int           `json:"halt"`              // percent of canary failures tolerated, 0 to 100
	Wait   time.Duration `json:"wait,format:units"` // how long the canary has to report, as "15m0s"
}

// ParsePlan reads a plan from its settings (the fleet: route's query): canary=10 (percent),
// halt=20 (percent of the canary's robots that may fail), wait=15m.
func ParsePlan(get func(string) string) (Plan, error) {
	p := Plan{Wait: DefaultCanaryWait}
	percent := func(key string, limit int, dst *int) error {
		v := strings.TrimSuffix(strings.TrimSpace(get(key)), "%")
		if v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > limit {
			return fmt.Errorf("%s=%s: want a percentage from 0 to %d", key, get(key), limit)
		}
		*dst = n
		return nil
	}
	if err := percent("canary", 99, &p.Canary); err != nil {
		return p, err
	}
	if err := percent("halt", 100, &p.Halt); err != nil {
		return p, err
	}
	if v := strings.TrimSpace(get("wait")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return p, fmt.Errorf("wait=%s: want a positive duration such as 15m", v)
		}
		p.Wait = d
	}
	return p, nil
}

// Waves returns the bucket ranges of the plan's waves, in order.
func (p Plan) Waves() [][2]int {
	if p.Canary <= 0 {
		return [][2]int{{0, Buckets}}
	}
	edge := p.Canary * Buckets / 100
	return [][2]int{{0, edge}, {edge, Buckets}}
}

// Bucket places a robot in one of Buckets buckets by a hash of its id: stable across restarts,
// machines and versions, and spread evenly (SHA-256), so a share of buckets is that share of robots.
func Bucket(robot string) int {
	sum := sha256.Sum256([]byte(robot))
	return int(binary.BigEndian.Uint64(sum[:8]) % Buckets)
}

// Target is what a robot should run of one space, given the retained wave messages it has: the
// newest wave that covers its bucket. ok is false when no wave covers it.
func Target(bucket int, waves []Update) (u Update, ok bool) {
	for _, w := range waves {
		if w.Covers(bucket) && (!ok || w.Time.After(u.Time)) {
			u, ok = w, true
		}
	}
	return u, ok
}

// Decision is what the publisher does next with a rollout in its canary wave.
type Decision struct {
	Advance bool     // publish the rest
	Halt    bool     // stop here
	Reason  string   // why it advanced or halted, for the record and the log
	Done    []string // canary robots that run the revision
	Failed  []string // canary robots whose update failed or was refused
	Pending []string // canary robots not heard from yet
}

// CanaryRobots returns, sorted, the robots of statuses that belong to the canary wave u: those
// with an app of u's space in u's buckets.
func CanaryRobots(u Update, statuses map[string]Status) []string {
	var ids []string
	for id, s := range statuses {
		if has, _, _ := u.standing(s); has && u.Covers(Bucket(id)) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Evaluate applies the plan's rules to the canary wave u, started at started, given every robot's
// latest status. The canary robots are planned (those the publisher counted when it first judged
// the wave, from a settled view of the fleet) and any other robot with an app of u's space in u's
// buckets: a planned robot whose status is gone counts as not heard from, so a wave never
// completes on the word of fewer robots than it planned.
func (p Plan) Evaluate(u Update, started time.Time, planned []string, statuses map[string]Status, now time.Time) Decision {
	var d Decision
	for _, id := range planned {
		if _, known := statuses[id]; !known {
			d.Pending = append(d.Pending, id)
		}
	}
	for id, s := range statuses {
		has, done, failed := u.standing(s)
		if !slices.Contains(planned, id) && (!has || !u.Covers(Bucket(id))) {
			continue
		}
		switch {
		case done:
			d.Done = append(d.Done, id)
		case failed:
			d.Failed = append(d.Failed, id)
		default:
			d.Pending = append(d.Pending, id)
		}
	}
	slices.Sort(d.Done)
	slices.Sort(d.Failed)
	slices.Sort(d.Pending)
	total := len(d.Done) + len(d.Failed) + len(d.Pending)
	switch {
	case total == 0 && now.Sub(started) >= min(p.Wait, EmptyCanaryGrace):
		d.Advance, d.Reason = true, "no robot of the canary share has the app"
	case total == 0:
	case len(d.Failed)*100 > p.Halt*total:
		d.Halt, d.Reason = true, fmt.Sprintf("%d of %d canary robots failed (%s), over the %d %% threshold", len(d.Failed), total, strings.Join(d.Failed, ", "), p.Halt)
	case len(d.Pending) == 0:
		d.Advance, d.Reason = true, fmt.Sprintf("%d of %d canary robots run the revision", len(d.Done), total)
	case now.Sub(started) >= p.Wait && len(d.Done)+len(d.Failed) == 0:
		d.Halt, d.Reason = true, fmt.Sprintf("none of the %d canary robots reported within %s", total, p.Wait)
	case now.Sub(started) >= p.Wait:
		d.Advance, d.Reason = true, fmt.Sprintf("%d of %d canary robots run the revision; %s did not report within %s", len(d.Done), total, strings.Join(d.Pending, ", "), p.Wait)
	}
	return d
}
