package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub"
)

// InstalledApp is an app a robot has, as its daemon records it.
type InstalledApp struct {
	Name     string
	Source   string // the URL it was installed from
	Revision string // the installed commit
}

// Apps is the robot's app lifecycle, as the agent uses it.
type Apps interface {
	Installed() []InstalledApp
	Running() string // the running app's name, "" when none
	// Update runs the robot's update job for the apps installed from source, the job the
	// receiver's robot-update route starts (skipped when they are at revision; reinstalled and
	// restarted when running otherwise), and returns once it has ended.
	Update(ctx context.Context, source, revision string) error
}

// Hub is the hub a robot already trusts: the one its apps came from.
type Hub interface {
	// Check reports whether the hub that source is on has revision as the head of space: nil when
	// it is, ErrNotOnHub when the hub does not have it, ErrSuperseded when the head moved past it.
	Check(ctx context.Context, source, space, revision string) error
}

// Errors of Hub.Check.
var (
	ErrNotOnHub   = fault.New(fault.Refused, "the hub does not have this revision of the space")
	ErrSuperseded = errors.New("the space's head on the hub has moved past this revision")
)

// Releases is the robot's own program, as the agent updates it when a daemon release is announced.
type Releases interface {
	// Repo is the release repository the robot takes releases from (its --release-repo,
	// <type>s/owner/name); an announcement naming another is refused.
	Repo() string
	// Last is the last daemon update that swapped releases, as its record says (nil: none, or it
	// is still under way).
	Last() *DaemonResult
	// Update runs the daemon's update job to version: it returns the job's error, or never
	// returns when it succeeds (the daemon hands over to the new release and this process ends),
	// or an error once ctx is done.
	Update(ctx context.Context, version string) error
}

// Link is the connection to the broker, as the agent uses it.
type Link interface {
	Subscribe(ctx context.Context, filters ...string) error
	Unsubscribe(ctx context.Context, filters ...string) error
	Publish(ctx context.Context, topic string, payload []byte, retain bool) error
}

// AgentConfig configures an Agent.
type AgentConfig struct {
	Robot  string // the robot's id (CheckRobotID)
	Name   string // a human name; default Robot
	Daemon string // the daemon's version
	// Releases updates the daemon itself when a daemon release is announced (nil: they are
	// ignored).
	Releases Releases
	Topics   Topics
	Apps     Apps
	Hub      Hub
	Log      *slog.Logger
	// OnCatalog, when set, is called (and must not block) when a push changed an app of the store
	// (CatalogChange): the daemon refreshes its catalog. The agent then reads the catalog topic.
	OnCatalog func(CatalogChange)

	Resync      time.Duration // how often installed apps are compared with subscriptions; default 2s
	StatusEvery time.Duration // a status is published at least this often while connected; default 10m
	RetryAfter  time.Duration // first pause before a failed update is tried again (±50 %); doubled up to 30m; default 1m
	Now         func() time.Time
}

// Agent is a robot's side of a fleet: it subscribes to the wave topics of the spaces its installed
// apps came from (and only those), updates an app when the wave that covers the robot names a new
// revision that the trusted hub has as the space's head, and reports the robot's status.
type Agent struct {
	cfg    AgentConfig
	bucket int

	mu          sync.Mutex
	link        Link
	waves       map[string]map[int]Update // space -> wave -> the retained message
	subscribed  map[string]bool
	attempts    map[string]attempt // space -> the last update tried
	last        *UpdateResult
	daemonWaves map[int]Update // the retained daemon release waves
	daemonTry   attempt        // the last daemon release tried by this process
	lastDaemon  *DaemonResult  // its result, when it failed before a swap
	published   *Status        // the last status the broker acknowledged (Time zeroed)
	publishedAt time.Time
	connected   time.Time

	wake chan struct{}
	up   chan struct{}
}

type attempt struct {
	revision string
	result   string
	at       time.Time
	tries    int
}

// NewAgent checks cfg and returns an agent; Run starts it.
func NewAgent(cfg AgentConfig) (*Agent, error) {
	if err := CheckRobotID(cfg.Robot); err != nil {
		return nil, err
	}
	if cfg.Apps == nil || cfg.Hub == nil {
		return nil, errors.New("fleet agent: Apps and Hub are required")
	}
	if cfg.Name == "" {
		cfg.Name = cfg.Robot
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Resync <= 0 {
		cfg.Resync = 2 * time.Second
	}
	if cfg.StatusEvery <= 0 {
		cfg.StatusEvery = 10 * time.Minute
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Agent{
		cfg: cfg, bucket: Bucket(cfg.Robot),
		waves: map[string]map[int]Update{}, subscribed: map[string]bool{}, attempts: map[string]attempt{}, daemonWaves: map[int]Update{},
		wake: make(chan struct{}, 1), up: make(chan struct{}, 1),
	}, nil
}

// Bucket is the robot's bucket, which decides its wave.
func (a *Agent) Bucket() int { return a.bucket }

// Presence returns the robot's presence message; the offline one is the will the link leaves
// with the broker at each connection.
func (a *Agent) Presence(online bool, since time.Time) []byte {
	b, _ := Marshal(Presence{V: Version, Robot: a.cfg.Robot, Online: online, Since: since.UTC()})
	return b
}

// Connected tells the agent that link is connected (again): it subscribes afresh, which brings the
// retained wave messages, and publishes its presence and status. It does not block.
func (a *Agent) Connected(link Link, since time.Time) {
	a.mu.Lock()
	a.link, a.connected = link, since
	a.subscribed = map[string]bool{}
	a.published = nil
	a.mu.Unlock()
	signal(a.up)
}

// Disconnected tells the agent that the link is down; Connected follows when it is back.
func (a *Agent) Disconnected() {
	a.mu.Lock()
	a.link = nil
	a.mu.Unlock()
}

// Handle takes a message from the link. It does not block: the work happens in Run.
func (a *Agent) Handle(topic string, payload []byte) {
	if topic == a.cfg.Topics.Catalog() {
		if a.cfg.OnCatalog == nil || len(payload) == 0 {
			return
		}
		c, err := ParseCatalogChange(payload)
		if err != nil {
			a.cfg.Log.Warn("fleet: refusing a catalog message", "topic", topic, "err", err)
			return
		}
		a.cfg.OnCatalog(c)
		return
	}
	if k, ok := a.cfg.Topics.ParseDaemonWave(topic); ok {
		a.handleDaemon(k, payload)
		return
	}
	space, k, ok := a.cfg.Topics.ParseWave(topic)
	if !ok {
		a.cfg.Log.Warn("fleet: ignoring a message on an unexpected topic", "topic", clip(topic))
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.subscribed[space] {
		return
	}
	if len(payload) == 0 { // a retained message cleared
		delete(a.waves[space], k)
		return
	}
	u, err := ParseUpdate(payload)
	if err == nil && (u.Space != space || u.Wave != k) {
		err = fmt.Errorf("update message names space %s wave %d but came on the topic of %s wave %d", u.Space, u.Wave, space, k)
	}
	if err != nil {
		a.cfg.Log.Warn("fleet: refusing an update message", "topic", topic, "err", err)
		return
	}
	if a.waves[space] == nil {
		a.waves[space] = map[int]Update{}
	}
	a.waves[space][k] = u
	signal(a.wake)
}

func (a *Agent) handleDaemon(k int, payload []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(payload) == 0 {
		delete(a.daemonWaves, k)
		return
	}
	u, err := ParseUpdate(payload)
	if err == nil && (u.Daemon == "" || u.Wave != k) {
		err = fmt.Errorf("message on the daemon's wave %d topic is not wave %d of a daemon release", k, k)
	}
	if err != nil {
		a.cfg.Log.Warn("fleet: refusing a daemon release message", "wave", k, "err", err)
		return
	}
	a.daemonWaves[k] = u
	signal(a.wake)
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Run does the agent's work until ctx ends.
func (a *Agent) Run(ctx context.Context) error {
	resync := time.NewTicker(a.cfg.Resync)
	defer resync.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-a.up:
			a.sync(ctx, true)
		case <-resync.C:
			a.sync(ctx, false)
		case <-a.wake:
		}
		a.work(ctx)
	}
}

// sync subscribes to the spaces of the installed apps and unsubscribes from the others, and
// publishes the status when it changed (or when the link just came up).
func (a *Agent) sync(ctx context.Context, fresh bool) {
	a.mu.Lock()
	link, since := a.link, a.connected
	a.mu.Unlock()
	if link == nil {
		return
	}
	if fresh {
		if err := link.Publish(ctx, a.cfg.Topics.Online(a.cfg.Robot), a.Presence(true, since), true); err != nil {
			a.cfg.Log.Warn("fleet: publishing presence", "err", err)
		}
		if a.cfg.OnCatalog != nil {
			if err := link.Subscribe(ctx, a.cfg.Topics.Catalog()); err != nil {
				a.cfg.Log.Warn("fleet: subscribing to the app store's changes: a new app is listed when the catalog's cache expires", "err", err)
			}
		}
		if a.cfg.Releases != nil {
			if err := link.Subscribe(ctx, a.cfg.Topics.DaemonWaves()); err != nil {
				a.cfg.Log.Warn("fleet: subscribing to the daemon's releases", "err", err)
			}
		}
	}
	want := map[string]bool{}
	for _, app := range a.cfg.Apps.Installed() {
		if space, ok := SpaceOf(app.Source); ok {
			want[space] = true
		}
	}
	a.mu.Lock()
	var add, drop []string
	for s := range want {
		if !a.subscribed[s] {
			add = append(add, s)
		}
	}
	for s := range a.subscribed {
		if !want[s] {
			drop = append(drop, s)
		}
	}
	a.mu.Unlock()
	slices.Sort(add)
	slices.Sort(drop)
	for _, s := range drop {
		a.mu.Lock()
		delete(a.subscribed, s)
		delete(a.waves, s)
		delete(a.attempts, s)
		a.mu.Unlock()
		if err := link.Unsubscribe(ctx, a.cfg.Topics.Waves(s)); err != nil {
			a.cfg.Log.Warn("fleet: unsubscribing", "space", s, "err", err)
		}
	}
	for _, s := range add {
		// Marked first: the retained messages may arrive before the subscription is acknowledged.
		a.mu.Lock()
		a.subscribed[s] = true
		a.mu.Unlock()
		if err := link.Subscribe(ctx, a.cfg.Topics.Waves(s)); err != nil {
			a.mu.Lock()
			delete(a.subscribed, s)
			a.mu.Unlock()
			a.cfg.Log.Warn("fleet: subscribing", "space", s, "err", err)
			continue
		}
		a.cfg.Log.Debug("fleet: subscribed", "space", s)
	}
	a.publishStatus(ctx, link)
}

// work brings every subscribed space to the revision its covering wave names, then the daemon to
// the release its covering wave names.
func (a *Agent) work(ctx context.Context) {
	defer a.workDaemon(ctx)
	for {
		space, u, ok := a.next()
		if !ok {
			return
		}
		a.update(ctx, space, u)
		if ctx.Err() != nil {
			return
		}
	}
}

// next picks a space whose target revision differs from what is installed and that was not tried
// at that revision (or whose retry is due).
func (a *Agent) next() (string, Update, bool) {
	installed := a.cfg.Apps.Installed()
	now := a.cfg.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, space := range slices.Sorted(maps.Keys(a.waves)) {
		u, ok := Target(a.bucket, slices.Collect(maps.Values(a.waves[space])))
		if !ok {
			continue
		}
		behind := false
		for _, app := range installed {
			if s, ok := SpaceOf(app.Source); ok && s == space && app.Revision != u.Revision {
				behind = true
			}
		}
		if !behind {
			continue
		}
		if at, tried := a.attempts[space]; tried && at.revision == u.Revision {
			if at.result != ResultFailed || now.Sub(at.at) < a.retryDelay(at.tries) {
				continue
			}
		}
		return space, u, true
	}
	return "", Update{}, false
}

// retryDelay is the pause before a failed update is tried again: the project's backoff, so that the
// robots of a fleet that failed together do not come back to the hub together.
func (a *Agent) retryDelay(tries int) time.Duration {
	return hub.Backoff(a.cfg.RetryAfter, 30*time.Minute, tries)
}

// update checks u's revision against the hub and runs the update job of each source of space.
func (a *Agent) update(ctx context.Context, space string, u Update) {
	var sources []string
	for _, app := range a.cfg.Apps.Installed() {
		if s, ok := SpaceOf(app.Source); ok && s == space && app.Revision != u.Revision && !slices.Contains(sources, app.Source) {
			sources = append(sources, app.Source)
		}
	}
	res := UpdateResult{Space: space, Revision: u.Revision, Result: ResultDone}
	log := a.cfg.Log.With("space", space, "revision", u.Revision, "rollout", u.Rollout, "wave", u.Wave)
	for _, src := range sources {
		err := a.cfg.Hub.Check(ctx, src, space, u.Revision)
		switch {
		case errors.Is(err, ErrNotOnHub):
			res.Result, res.Error = ResultRefused, err.Error()
		case errors.Is(err, ErrSuperseded):
			res.Result, res.Error = ResultSuperseded, err.Error()
		case err != nil:
			res.Result, res.Error = ResultFailed, "checking the revision on the hub: "+err.Error()
		default:
			log.Info("fleet: updating", "source", src)
			if err := a.cfg.Apps.Update(ctx, src, u.Revision); err != nil {
				res.Result, res.Error = ResultFailed, err.Error()
			}
		}
		if res.Result != ResultDone {
			break
		}
	}
	if ctx.Err() != nil {
		return // the daemon is stopping: the retained message brings the update back at the next start
	}
	res.Time = a.cfg.Now().UTC()
	switch res.Result {
	case ResultDone:
		log.Info("fleet: updated")
	case ResultSuperseded:
		log.Info("fleet: not updating: " + res.Error)
	default:
		log.Warn("fleet: update "+res.Result, "err", res.Error)
	}
	a.mu.Lock()
	at := a.nextAttempt(a.attempts[space], u.Revision, res.Result)
	a.attempts[space] = at
	a.last = &res
	a.mu.Unlock()
	a.attempted(ctx, at)
}

// nextAttempt is the attempt at revision that follows prev, counting the tries of one revision.
func (a *Agent) nextAttempt(prev attempt, revision, result string) attempt {
	tries := 1
	if prev.revision == revision {
		tries = prev.tries + 1
	}
	return attempt{revision: revision, result: result, at: a.cfg.Now(), tries: tries}
}

// attempted reports the robot's status after an attempt, and when it failed wakes the agent
// again once its retry is due, even if nothing else happens.
func (a *Agent) attempted(ctx context.Context, at attempt) {
	a.mu.Lock()
	link := a.link
	a.mu.Unlock()
	if link != nil {
		a.publishStatus(ctx, link)
	}
	if at.result == ResultFailed {
		time.AfterFunc(a.retryDelay(at.tries), func() { signal(a.wake) })
	}
}

// workDaemon updates the daemon to the release the wave that covers the robot names, once per
// release (again after RetryAfter when it failed before a swap; never after a rollback).
func (a *Agent) workDaemon(ctx context.Context) {
	if a.cfg.Releases == nil || ctx.Err() != nil {
		return
	}
	a.mu.Lock()
	u, ok := Target(a.bucket, slices.Collect(maps.Values(a.daemonWaves)))
	tried := a.daemonTry
	a.mu.Unlock()
	if !ok || u.Daemon == a.cfg.Daemon {
		return
	}
	if last := a.cfg.Releases.Last(); last != nil && last.Version == u.Daemon {
		return // rolled back (or done, and this is the rolled-back-to program): not again
	}
	if tried.revision == u.Daemon && (tried.result != ResultFailed || a.cfg.Now().Sub(tried.at) < a.retryDelay(tried.tries)) {
		return
	}
	log := a.cfg.Log.With("daemon", u.Daemon, "rollout", u.Rollout, "wave", u.Wave)
	res := DaemonResult{Version: u.Daemon, Result: ResultFailed}
	if repo := a.cfg.Releases.Repo(); repo != u.Repo {
		res.Result, res.Error = ResultRefused, fmt.Sprintf("the fleet names release repository %s; this robot takes its releases from %s", u.Repo, repo)
	} else {
		log.Info("fleet: updating the daemon", "from", a.cfg.Daemon)
		err := a.cfg.Releases.Update(ctx, u.Daemon)
		if ctx.Err() != nil {
			return // stopping, or handing over to the new release
		}
		res.Error = fmt.Sprint(err)
		if errors.Is(err, fault.ErrRefused) || errors.Is(err, fault.ErrInvalid) {
			res.Result = ResultRefused
		}
	}
	res.Time = a.cfg.Now().UTC()
	log.Warn("fleet: daemon update "+res.Result, "err", res.Error)
	a.mu.Lock()
	at := a.nextAttempt(tried, u.Daemon, res.Result)
	a.daemonTry = at
	a.lastDaemon = &res
	a.mu.Unlock()
	a.attempted(ctx, at)
}

// Status is the robot's status now.
func (a *Agent) Status() Status {
	st := Status{V: Version, Robot: a.cfg.Robot, Name: a.cfg.Name, Daemon: a.cfg.Daemon, Running: a.cfg.Apps.Running(), Apps: []AppStatus{}}
	for _, app := range a.cfg.Apps.Installed() {
		s, _ := SpaceOf(app.Source)
		st.Apps = append(st.Apps, AppStatus{Name: app.Name, Space: s, Revision: app.Revision})
	}
	slices.SortFunc(st.Apps, func(x, y AppStatus) int { return strings.Compare(x.Name, y.Name) })
	a.mu.Lock()
	if a.last != nil {
		last := *a.last
		st.LastUpdate = &last
	}
	if a.lastDaemon != nil {
		last := *a.lastDaemon
		st.LastDaemonUpdate = &last
	}
	a.mu.Unlock()
	if a.cfg.Releases != nil && st.LastDaemonUpdate == nil {
		st.LastDaemonUpdate = a.cfg.Releases.Last()
	}
	return st
}

// publishStatus publishes the status when it changed since the last one the broker took, or when
// StatusEvery has passed.
func (a *Agent) publishStatus(ctx context.Context, link Link) {
	st := a.Status()
	now := a.cfg.Now()
	a.mu.Lock()
	same := a.published != nil && reflect.DeepEqual(*a.published, st) && now.Sub(a.publishedAt) < a.cfg.StatusEvery
	a.mu.Unlock()
	if same {
		return
	}
	sent := st
	sent.Time = now.UTC()
	payload, err := Marshal(sent)
	if err != nil {
		return
	}
	if err := link.Publish(ctx, a.cfg.Topics.Status(a.cfg.Robot), payload, true); err != nil {
		a.cfg.Log.Warn("fleet: publishing status", "err", err)
		return
	}
	a.mu.Lock()
	a.published, a.publishedAt = &st, now
	a.mu.Unlock()
}

// SpaceOf returns the space (owner/name) an app's install source names, when it is a hub space:
// a URL whose path ends in /spaces/<owner>/<name> (with or without .git).
func SpaceOf(source string) (string, bool) {
	u, err := url.Parse(source)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false
	}
	path := strings.TrimSuffix(strings.TrimRight(u.Path, "/"), ".git")
	_, rest, ok := strings.Cut(path, "/spaces/")
	if !ok || CheckSpace(rest) != nil {
		return "", false
	}
	return rest, true
}

// HubOf returns the base URL of the hub an app's source is on: the source up to /spaces/.
func HubOf(source string) (string, bool) {
	u, err := url.Parse(source)
	if err != nil {
		return "", false
	}
	before, _, ok := strings.Cut(u.Path, "/spaces/")
	if !ok {
		return "", false
	}
	u.Path, u.RawQuery, u.Fragment, u.User = before, "", "", nil
	return strings.TrimRight(u.String(), "/"), true
}
