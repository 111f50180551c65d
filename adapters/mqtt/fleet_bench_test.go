package mqtt_test

// The fleet simulator (issue 23): N robot agents in this process, each a real MQTT client with its
// own persistent session and core/fleet's real update path (the announcement, the wave, the check
// of the revision against the hub over HTTP, the status report), against mosquitto on loopback. The
// install itself is a TIMED STAND-IN (a sleep of standinInstall): what is measured is the fleet,
// not pip. Run under the shared lock; the big N needs `ulimit -n` above 2 N + 1000, which the
// benchmark raises itself when the hard limit allows.
//
//	go test -run '^$' -bench 'Fleet' -benchtime 1x -timeout 30m ./adapters/mqtt

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/hubtest"

	"github.com/robothub/robothub/adapters/mqtt"
	"github.com/robothub/robothub/core/fleet"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/actions"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
	"github.com/robothub/robothub/internal/testkit/mosquittotest"
)

// standinInstall is how long the stand-in for an app's install takes (a real one: seconds).
const standinInstall = 500 * time.Millisecond

const benchSpace = "bench/app"

// queueLimit is mosquitto's per-client queue, as deploy/mosquitto/mosquitto.conf sets it: the
// operator (and a canary publisher) gets every robot's retained status at once, and with a queue
// shorter than the fleet mosquitto drops the rest ("Outgoing messages are being dropped").
const queueLimit = "max_queued_messages 100000\n"

// standinApps is one simulated robot's app: Update sleeps standinInstall, then records the revision.
type standinApps struct {
	mu  sync.Mutex
	rev string
}

func (s *standinApps) Installed() []fleet.InstalledApp {
	s.mu.Lock()
	defer s.mu.Unlock()
	return []fleet.InstalledApp{{Name: "app", Source: standinSource, Revision: s.rev}}
}

var standinSource string // the hub's space URL, set by the simulator

func (s *standinApps) Running() string { return "app" }

func (s *standinApps) Update(ctx context.Context, _, rev string) error {
	select {
	case <-time.After(standinInstall): // TIMED STAND-IN for the install
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	s.rev = rev
	s.mu.Unlock()
	return nil
}

// simRobot is one simulated robot: its agent, its session, its app.
type simRobot struct {
	id     string
	agent  *fleet.Agent
	client *mqtt.Client
	apps   *standinApps
	cancel context.CancelFunc
	done   chan struct{}
}

// fleetSim is the simulator: mosquitto, the hub, the receiver's fleet route, the robots, and an
// operator who sees every status.
type fleetSim struct {
	b        *testing.B
	broker   *mosquittotest.Broker
	hubURL   string
	hubToken string
	hubHTTP  *http.Client
	receiver http.Handler
	robots   []*simRobot
	log      *slog.Logger

	mu       sync.Mutex
	reported map[string]map[string]time.Time // revision -> robot -> when its status said so
	changed  chan struct{}
}

func raiseFileLimit(b *testing.B, n int) {
	need := uint64(2*n + 1000)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Skipf("reading RLIMIT_NOFILE: %v", err)
	}
	if lim.Cur >= need {
		return
	}
	if lim.Max < need {
		b.Skipf("%d robots need %d file descriptors; the hard limit is %d (raise it: ulimit -Hn)", n, need, lim.Max)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Skipf("raising RLIMIT_NOFILE to %d: %v", lim.Max, err)
	}
}

// newFleetSim starts everything and n robots at the space's first revision; before runs once the
// broker, the hub and the receiver are up, before any robot connects.
func newFleetSim(b *testing.B, n int, persistence bool, before func(*fleetSim)) *fleetSim {
	raiseFileLimit(b, n)
	users := map[string]string{"receiver": "receiver-pw", "operator": "operator-pw"}
	for i := range n {
		users[robotID(i)] = "pw-" + robotID(i)
	}
	acl := `pattern write robothub/v1/robots/%u/status
pattern write robothub/v1/robots/%u/online
pattern read robothub/v1/spaces/bench/app/wave/+

user receiver
topic readwrite robothub/v1/spaces/#
topic read robothub/v1/robots/#

user operator
topic read robothub/v1/robots/#
`
	s := &fleetSim{b: b, log: slog.New(slog.DiscardHandler), reported: map[string]map[string]time.Time{}, changed: make(chan struct{}, 1)}
	s.broker = mosquittotest.Start(b, mosquittotest.Options{NoTLS: true, Users: users, ACL: acl, Persistence: persistence,
		Extra: "max_inflight_messages 100\n" + queueLimit})

	// The hub, with the space.
	ctx := context.Background()
	emu := hubtest.Start(b, localhub.Config{Logger: s.log})
	s.hubURL = emu.URL
	token, _ := emu.Token(b, "bench", hubemu.RoleWrite)
	s.hubToken = token
	s.hubHTTP = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	c, _ := hub.New(s.hubURL, hub.WithToken(token))
	if _, err := c.CreateRepo(ctx, hub.CreateRepoRequest{Type: "space", ID: benchSpace, SDK: "static"}); err != nil {
		b.Fatal(err)
	}
	standinSource = s.hubURL + "/spaces/" + benchSpace
	first := s.commit("first")

	// The receiver, with its fleet: route.
	env := map[string]string{actions.FleetUsernameEnv: "receiver", actions.FleetPasswordEnv: users["receiver"]}
	srv := webhook.NewServer(webhook.WithSecret("bench-secret"), webhook.WithLogger(s.log))
	builder := actions.NewBuilder(actions.Config{FleetDialers: mqtt.FleetDialers(), Logger: s.log, Getenv: func(k string) string { return env[k] }})
	b.Cleanup(func() { builder.Close(context.Background()) })
	if err := builder.Register(srv, []actions.Route{{Name: "fleet", Action: "fleet:" + s.broker.URL}}); err != nil {
		b.Fatal(err)
	}
	s.receiver = srv

	// The operator, subscribed at every (re)connection (as robothub fleet is): its session does not
	// outlive a broker restart, the robots' retained statuses do.
	subscribed := make(chan error, 1)
	op, err := mqtt.Connect(ctx, mqtt.Config{URL: s.broker.URL, ClientID: "operator", Username: "operator", Password: users["operator"],
		Logger: s.log, OnMessage: s.take, ReceiveMaximum: mqtt.ManyMessages,
		OnUp: func(c *mqtt.Client, _ time.Time) {
			go func() {
				err := c.Subscribe(ctx, "robothub/v1/robots/+/status")
				select {
				case subscribed <- err:
				default:
				}
			}()
		}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { op.Close(context.Background()) })
	if err := <-subscribed; err != nil {
		b.Fatal(err)
	}

	if before != nil {
		before(s)
	}
	// The robots, connected a batch at a time (the listen backlog is finite), each at the first revision.
	for i := range n {
		s.robots = append(s.robots, &simRobot{id: robotID(i), apps: &standinApps{rev: first}})
	}
	s.connect(s.robots)
	s.waitReported(first, s.robots, 10*time.Minute)
	return s
}

func robotID(i int) string { return fmt.Sprintf("sim-%05d", i) }

// connect starts the agents of robots and waits until each is connected.
func (s *fleetSim) connect(robots []*simRobot) {
	const batch = 200
	for start := 0; start < len(robots); start += batch {
		part := robots[start:min(start+batch, len(robots))]
		for _, r := range part {
			agent, err := fleet.NewAgent(fleet.AgentConfig{Robot: r.id, Apps: r.apps, Daemon: "bench",
				Hub: fleet.HubCheck{Client: s.hubHTTP}, Log: s.log, Resync: 5 * time.Second})
			if err != nil {
				s.b.Fatal(err)
			}
			// The session outlives the agent's ctx so that leaving can say offline (as robotd does).
			ctx, cancel := context.WithCancel(context.Background())
			client, err := mqtt.ConnectAgent(context.Background(), mqtt.Config{URL: s.broker.URL, ClientID: r.id, Username: r.id, Password: "pw-" + r.id,
				Logger: s.log, KeepAlive: 60 * time.Second}, agent, r.id, fleet.Topics{})
			if err != nil {
				s.b.Fatal(err)
			}
			r.agent, r.client, r.cancel, r.done = agent, client, cancel, make(chan struct{})
			go func() { _ = agent.Run(ctx); close(r.done) }()
		}
		for _, r := range part {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			err := r.client.AwaitConnection(ctx)
			cancel()
			if err != nil {
				s.b.Fatalf("%s: %v", r.id, err)
			}
		}
	}
}

// disconnect takes robots off the fleet as a switched-off robot leaves (its session stays), 64 at
// a time.
func (s *fleetSim) disconnect(robots []*simRobot) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for _, r := range robots {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r.cancel()
			<-r.done
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := r.client.Leave(ctx, r.agent, r.id, fleet.Topics{}); err != nil {
				s.b.Errorf("%s leaving: %v", r.id, err)
			}
		})
	}
	wg.Wait()
}

func (s *fleetSim) close() { s.disconnect(s.robots) }

func (s *fleetSim) take(topic string, payload []byte) {
	st, err := fleet.ParseStatus(payload)
	if err != nil {
		return
	}
	app, ok := st.App(benchSpace)
	if !ok {
		return
	}
	now := time.Now()
	s.mu.Lock()
	m := s.reported[app.Revision]
	if m == nil {
		m = map[string]time.Time{}
		s.reported[app.Revision] = m
	}
	if _, seen := m[st.Robot]; !seen {
		m[st.Robot] = now
	}
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// count is how many of robots reported rev.
func (s *fleetSim) count(rev string, robots []*simRobot) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range robots {
		if _, ok := s.reported[rev][r.id]; ok {
			n++
		}
	}
	return n
}

// waitReported waits until every robot of robots reported rev, and returns when each did.
func (s *fleetSim) waitReported(rev string, robots []*simRobot, limit time.Duration) []time.Time {
	deadline := time.After(limit)
	for s.count(rev, robots) < len(robots) {
		select {
		case <-s.changed:
		case <-deadline:
			s.b.Fatalf("after %s only %d of %d robots report %s", limit, s.count(rev, robots), len(robots), rev[:8])
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]time.Time, 0, len(robots))
	for _, r := range robots {
		out = append(out, s.reported[rev][r.id])
	}
	return out
}

// waitCount waits until at least want robots reported rev.
func (s *fleetSim) waitCount(rev string, want int, limit time.Duration) {
	deadline := time.After(limit)
	for s.count(rev, s.robots) < want {
		select {
		case <-s.changed:
		case <-deadline:
			s.b.Fatalf("after %s only %d robots report %s, not %d", limit, s.count(rev, s.robots), rev[:8], want)
		}
	}
}

// commit makes a new head of the space through the hub's commit API and returns it.
func (s *fleetSim) commit(what string) string {
	c, _ := hub.New(s.hubURL, hub.WithToken(s.hubToken))
	info, err := c.Commit(context.Background(), hub.CommitRequest{RepoType: "space", RepoID: benchSpace, Summary: what,
		Files: []hub.CommitFile{{Path: "app.txt", Content: []byte(what)}}})
	if err != nil {
		s.b.Fatal(err)
	}
	return info.OID
}

// push announces rev as the hub's delivery would: a repo.content payload to the receiver's route.
func (s *fleetSim) push(rev string) {
	body := `{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"space","name":"` + benchSpace + `","headSha":"` + rev + `"}}`
	req := httptest.NewRequest(http.MethodPost, "/webhooks/fleet", strings.NewReader(body))
	req.Header.Set(webhook.SecretHeader, "bench-secret")
	rec := httptest.NewRecorder()
	s.receiver.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		s.b.Fatalf("the receiver answered %d: %s", rec.Code, rec.Body)
	}
}

func latencies(from time.Time, at []time.Time) []time.Duration {
	out := make([]time.Duration, len(at))
	for i, t := range at {
		out[i] = t.Sub(from)
	}
	slices.Sort(out)
	return out
}

func quantile(d []time.Duration, q float64) time.Duration {
	return d[min(len(d)-1, int(q*float64(len(d))))]
}

func reportLatency(b *testing.B, prefix string, d []time.Duration) {
	b.ReportMetric(float64(quantile(d, 0.5).Milliseconds()), prefix+"p50-ms")
	b.ReportMetric(float64(quantile(d, 0.99).Milliseconds()), prefix+"p99-ms")
	b.ReportMetric(float64(d[len(d)-1].Milliseconds()), prefix+"max-ms")
}

func rssKB(pid int) float64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return f
		}
	}
	return 0
}

func goMemory() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// BenchmarkFleetPush: a push, announced by the receiver, until every robot reports the revision
// (each through the hub check and the stand-in install); and the memory of a robot's session on
// the broker and in the agent.
func BenchmarkFleetPush(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		b.Run("robots="+strconv.Itoa(n), func(b *testing.B) {
			var brokerBefore float64
			var goBefore uint64
			s := newFleetSim(b, n, false, func(s *fleetSim) { brokerBefore, goBefore = rssKB(s.broker.Pid()), goMemory() })
			defer s.close()
			brokerAfter, goAfter := rssKB(s.broker.Pid()), goMemory()
			b.Logf("install: TIMED STAND-IN of %s; broker RSS %.0f -> %.0f kB", standinInstall, brokerBefore, brokerAfter)
			var all []time.Duration
			b.ResetTimer()
			for i := range b.N {
				rev := s.commit("push " + strconv.Itoa(i))
				start := time.Now()
				s.push(rev)
				all = append(all, latencies(start, s.waitReported(rev, s.robots, 10*time.Minute))...)
			}
			b.StopTimer()
			// Reported after the loop: ResetTimer drops the metrics reported before it.
			b.ReportMetric((brokerAfter-brokerBefore)*1024/float64(n), "broker-B/robot")
			b.ReportMetric(float64(goAfter-goBefore)/float64(n), "agent-B/robot")
			reportLatency(b, "", all)
			b.ReportMetric(float64(standinInstall.Milliseconds()), "standin-install-ms")
		})
	}
}

// BenchmarkFleetBrokerRestart: the broker (persistence on) is restarted once a tenth of 1,000 robots
// have the push: every robot still gets it (persistent sessions, QoS 1, retained); the figure is how
// much later the last one reports than without the restart.
func BenchmarkFleetBrokerRestart(b *testing.B) {
	const n = 1000
	s := newFleetSim(b, n, true, nil)
	defer s.close()
	var base, restarted []time.Duration
	b.ResetTimer()
	for i := range b.N {
		rev := s.commit("baseline " + strconv.Itoa(i))
		start := time.Now()
		s.push(rev)
		base = append(base, latencies(start, s.waitReported(rev, s.robots, 10*time.Minute))...)

		rev = s.commit("restart " + strconv.Itoa(i))
		start = time.Now()
		s.push(rev)
		s.waitCount(rev, n/10, 10*time.Minute)
		s.broker.Restart()
		restarted = append(restarted, latencies(start, s.waitReported(rev, s.robots, 10*time.Minute))...)
	}
	b.StopTimer()
	slices.Sort(base)
	slices.Sort(restarted)
	reportLatency(b, "", restarted)
	b.ReportMetric(float64((restarted[len(restarted)-1] - base[len(base)-1]).Milliseconds()), "added-max-ms")
	b.ReportMetric(float64(len(restarted))/float64(b.N), "robots-updated")
	b.Logf("install: TIMED STAND-IN of %s; without the restart: max %s", standinInstall, base[len(base)-1])
}

// BenchmarkFleetOffline: a fifth of 1,000 robots are off during a push and come back 60 s after
// it (FLEET_OFFLINE_FOR overrides, for development): they catch up from their sessions and the
// retained announcement; the figures are from their reconnection.
func BenchmarkFleetOffline(b *testing.B) {
	const n = 1000
	away := 60 * time.Second
	if v := os.Getenv("FLEET_OFFLINE_FOR"); v != "" {
		away, _ = time.ParseDuration(v)
	}
	s := newFleetSim(b, n, false, nil)
	defer s.close()
	off, on := s.robots[:n/5], s.robots[n/5:]
	var caught []time.Duration
	b.ResetTimer()
	for i := range b.N {
		s.disconnect(off)
		rev := s.commit("while away " + strconv.Itoa(i))
		pushed := time.Now()
		s.push(rev)
		s.waitReported(rev, on, 10*time.Minute)
		if c := s.count(rev, off); c != 0 {
			b.Fatalf("%d robots that were off report the revision", c)
		}
		time.Sleep(time.Until(pushed.Add(away))) // the scenario: they come back 60 s after the push
		back := time.Now()
		s.connect(off)
		caught = append(caught, latencies(back, s.waitReported(rev, off, 10*time.Minute))...)
	}
	b.StopTimer()
	slices.Sort(caught)
	reportLatency(b, "catchup-", caught)
	b.Logf("install: TIMED STAND-IN of %s; %d robots off for %s", standinInstall, len(off), away)
}

// BenchmarkFleetAnnounce is the receiver's publish rate: deliveries of pushes to the fleet: route,
// each answered 202 once mosquitto acknowledged the wave message and the rollout record.
func BenchmarkFleetAnnounce(b *testing.B) {
	s := newFleetSim(b, 1, false, nil)
	defer s.close()
	revs := make([]string, 64)
	for i := range revs {
		revs[i] = strings.Repeat(fmt.Sprintf("%x", i%16), 40)
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			s.push(revs[i%len(revs)])
			i++
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "announcements/s")
}
