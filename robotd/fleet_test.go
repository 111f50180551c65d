package robotd_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/testkit/hubtest"

	"github.com/robothub/robothub/adapters/mqtt"
	"github.com/robothub/robothub/adapters/mqtt/broker"
	"github.com/robothub/robothub/core/fleet"
	hubclient "github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/actions"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/delivery"
	"github.com/robothub/robothub/internal/hubemu/localhub"
	"github.com/robothub/robothub/internal/testkit/mosquittotest"
)

// fleetACL gives the receiver the spaces' topics and the robots' statuses, and each robot the
// wave topics of its app's space, the app store's change notices and its own status and presence,
// as deploy/mosquitto/robothub.acl does; the operator here may also write the spaces' topics, to
// play a forger who has them.
const fleetACL = `pattern write robothub/v1/robots/%u/status
pattern write robothub/v1/robots/%u/online
pattern read robothub/v1/spaces/catalog

user receiver
topic readwrite robothub/v1/spaces/#
topic read robothub/v1/robots/#

user operator
topic read robothub/v1/robots/#
topic readwrite robothub/v1/spaces/#

user robot-a
topic read robothub/v1/spaces/alice/catalog_app/wave/+

user robot-b
topic read robothub/v1/spaces/alice/catalog_app/wave/+
`

// statusBoard follows every robot's retained status, as robothub fleet ls does.
type statusBoard struct {
	mu       sync.Mutex
	statuses map[string]fleet.Status
	changed  chan struct{}
}

func (s *statusBoard) take(topic string, payload []byte) {
	robot, kind, ok := fleet.Topics{}.ParseRobot(topic)
	if !ok || kind != "status" {
		return
	}
	st, err := fleet.ParseStatus(payload)
	if err != nil || st.Robot != robot {
		return
	}
	s.mu.Lock()
	s.statuses[robot] = st
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *statusBoard) wait(t *testing.T, robot, what string, ok func(fleet.Status) bool) fleet.Status {
	t.Helper()
	timeout := time.After(3 * time.Minute)
	for {
		s.mu.Lock()
		st, have := s.statuses[robot]
		s.mu.Unlock()
		if have && ok(st) {
			return st
		}
		select {
		case <-s.changed:
		case <-timeout:
			t.Fatalf("%s: no status where %s; last: %+v", robot, what, st)
		}
	}
}

// TestFleetPushUpdatesEveryRobot is a fleet on one machine, every part real: the local hub with a
// space, a receiver whose fleet: route publishes to mosquitto (TLS, per-robot passwords, ACLs), and
// two robot daemons that joined the fleet with the app installed. A git push updates both, the one
// that was off when it was announced included; an announcement of a revision the hub does not
// have installs nothing.
func TestFleetPushUpdatesEveryRobot(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker, a hub and two daemons")
	}
	t.Parallel() // its own broker, hub, venvs and ports
	passwords := map[string]string{"receiver": "receiver-pw", "operator": "operator-pw", "robot-a": "robot-a-pw", "robot-b": "robot-b-pw"}
	broker := mosquittotest.Start(t, mosquittotest.Options{Users: passwords, ACL: fleetACL})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The hub, and a space with the app.
	hubSrv := hubtest.Start(t, localhub.Config{
		AllowDeliveryTo: []string{"127.0.0.0/8"}, // the receiver listens on loopback
		Delivery:        delivery.Policy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}})
	emu := hubSrv
	token, user := hubSrv.Token(t, "alice", hubemu.RoleWrite)
	client, err := hubclient.New(hubSrv.URL, hubclient.WithToken(token))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateRepo(ctx, hubclient.CreateRepoRequest{Type: "space", ID: "alice/catalog_app", SDK: "static"}); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(t.TempDir(), "catalog_app")
	if err := os.CopyFS(work, os.DirFS(testdataApp("catalog_app"))); err != nil {
		t.Fatal(err)
	}
	space := hubSrv.URL + "/spaces/alice/catalog_app"
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "http.extraHeader=Authorization: Bearer " + token}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args[0], err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "first version")
	git("push", "-q", space, "main")
	rev1 := git("rev-parse", "HEAD")

	// The receiver: a fleet: route to the broker, and the hub's webhook to it.
	const secret = "fleet-test-secret"
	recv := webhook.NewServer(webhook.WithSecret(secret), webhook.WithLogger(slog.New(slog.DiscardHandler)))
	env := map[string]string{actions.FleetUsernameEnv: "receiver", actions.FleetPasswordEnv: passwords["receiver"]}
	builder := actions.NewBuilder(actions.Config{FleetDialers: mqtt.FleetDialers(), FleetTLS: broker.TLSConfig(), Getenv: func(k string) string { return env[k] },
		Logger: slog.New(slog.DiscardHandler)})
	defer builder.Close(context.Background())
	if err := builder.Register(recv, []actions.Route{{Name: "fleet", Action: "fleet:" + broker.URL}}); err != nil {
		t.Fatal(err)
	}
	recvSrv := httptest.NewServer(recv)
	defer recvSrv.Close()
	hookURL, sec := recvSrv.URL+"/webhooks/fleet", secret
	watched := []hubclient.WatchedItem{{Type: "user", Name: "alice"}}
	if _, err := emu.CreateWebhook(ctx, user.ID, hubemu.WebhookInput{URL: &hookURL, Watched: &watched, Secret: &sec}); err != nil {
		t.Fatal(err)
	}
	emu.Run()

	// The operator's view: every robot's status.
	board := &statusBoard{statuses: map[string]fleet.Status{}, changed: make(chan struct{}, 1)}
	op, err := mqtt.Connect(ctx, mqtt.Config{URL: broker.URL, ClientID: "operator", Username: "operator", Password: passwords["operator"],
		TLS: broker.TLSConfig(), OnMessage: board.take, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close(context.Background())
	short, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	if err := op.Subscribe(short, fleet.Topics{}.AllRobots()); err != nil {
		t.Fatal(err)
	}

	// Two robots in the fleet, each with its data dir and apps venv; the app installed from the space.
	robots := map[string]*daemonOptions{}
	for _, id := range []string{"robot-a", "robot-b"} {
		pw := passwords[id]
		robots[id] = &daemonOptions{dataDir: t.TempDir(), venv: ownVenv(t),
			args: []string{"--hub-url", hubSrv.URL, "--fleet", broker.URL, "--fleet-id", id, "--fleet-ca", broker.CAFile},
			getenv: func(k string) string {
				if k == "ROBOT_FLEET_PASSWORD" {
					return pw
				}
				return os.Getenv(k)
			}}
	}
	a, b := startDaemon(t, *robots["robot-a"]), startDaemon(t, *robots["robot-b"])
	for _, d := range []*daemon{a, b} {
		var created struct {
			JobID string `json:"job_id"`
		}
		d.call("POST", "/api/apps/install", map[string]string{"url": space}, &created)
		if j := d.waitJob(created.JobID); j.Status != "done" {
			t.Fatalf("install: %v\n%s", j.Error, strings.Join(j.Logs, "\n"))
		}
	}
	for _, id := range []string{"robot-a", "robot-b"} {
		board.wait(t, id, "catalog_app is at the first revision", func(s fleet.Status) bool {
			app, ok := s.App("alice/catalog_app")
			return ok && app.Revision == rev1
		})
	}

	// robot-b is switched off; a push is announced while it is away.
	b.stop()
	if err := os.WriteFile(filepath.Join(work, "pyproject.toml"), []byte(strings.Replace(readFile(t, filepath.Join(work, "pyproject.toml")), `version = "1.0.0"`, `version = "1.0.1"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	git("commit", "-q", "-am", "second version")
	git("push", "-q", space, "main")
	rev2 := git("rev-parse", "HEAD")

	st := board.wait(t, "robot-a", "catalog_app is at the pushed revision", func(s fleet.Status) bool {
		app, _ := s.App("alice/catalog_app")
		return app.Revision == rev2
	})
	if st.LastUpdate == nil || st.LastUpdate.Result != fleet.ResultDone || st.LastUpdate.Revision != rev2 {
		t.Fatalf("robot-a's last update: %+v", st.LastUpdate)
	}
	if got := a.list()["catalog_app"]; got.Extra.Revision != rev2 || got.Extra.Version != "1.0.1" {
		t.Fatalf("robot-a runs %s %s, want %s 1.0.1", got.Extra.Revision, got.Extra.Version, rev2)
	}

	// Back on, robot-b catches up from the retained announcement.
	b = startDaemon(t, *robots["robot-b"])
	board.wait(t, "robot-b", "catalog_app caught up", func(s fleet.Status) bool {
		app, _ := s.App("alice/catalog_app")
		return app.Revision == rev2
	})
	if got := b.list()["catalog_app"]; got.Extra.Revision != rev2 || got.Extra.Version != "1.0.1" {
		t.Fatalf("robot-b runs %s %s, want %s 1.0.1", got.Extra.Revision, got.Extra.Version, rev2)
	}

	// An announcement of a revision the hub does not have (as a stolen publisher password would
	// send it): both robots refuse it and keep what they run.
	forged := strings.Repeat("deadbeef", 5)
	msg, _ := fleet.Marshal(fleet.Update{V: fleet.Version, Space: "alice/catalog_app", Revision: forged, Time: time.Now(), Rollout: "forged", From: 0, To: fleet.Buckets})
	pubCtx, stopPub := context.WithTimeout(ctx, 30*time.Second)
	defer stopPub()
	if err := op.Publish(pubCtx, fleet.Topics{}.Wave("alice/catalog_app", 0), msg, true); err != nil {
		t.Fatal(err)
	}
	for id, d := range map[string]*daemon{"robot-a": a, "robot-b": b} {
		st := board.wait(t, id, "the forged revision refused", func(s fleet.Status) bool {
			return s.LastUpdate != nil && s.LastUpdate.Revision == forged
		})
		if st.LastUpdate.Result != fleet.ResultRefused || !strings.Contains(st.LastUpdate.Error, "nothing was installed") {
			t.Fatalf("%s: %+v", id, st.LastUpdate)
		}
		if got := d.list()["catalog_app"]; got.Extra.Revision != rev2 {
			t.Fatalf("%s: revision %s after the forged announcement, want %s", id, got.Extra.Revision, rev2)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Two robots with one fleet id (flashed from one image, or an id copied by hand): the second takes
// the broker session; the first says so in its log and its status and leaves the fleet, rather
// than take the session back and be thrown out again, forever.
func TestTwoRobotsWithOneFleetIDAreReportedNotFought(t *testing.T) {
	parallel(t)
	const password = "twin-broker-password"
	b, err := broker.Start("127.0.0.1:0", password, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	// After the daemons (cleanups run last first): the broker's Close waits for its clients.
	t.Cleanup(func() { b.Close() })
	args := []string{"--fleet", b.URL(), "--fleet-id", "robot-twin"}
	getenv := func(k string) string {
		if k == "ROBOT_FLEET_PASSWORD" {
			return password
		}
		return os.Getenv(k)
	}
	first := startDaemon(t, daemonOptions{args: args, getenv: getenv})
	first.waitLog(10*time.Second, `msg="mqtt: connected"`)
	second := startDaemon(t, daemonOptions{args: args, getenv: getenv})
	second.waitLog(10*time.Second, `msg="mqtt: connected"`)

	const conflict = "fleet: another robot joined the fleet with this robot's id robot-twin and took its session"
	first.waitFor(10*time.Second, "the conflict in the first robot's status", func() bool {
		var st struct {
			Warnings []string `json:"warnings"`
		}
		first.call("GET", "/api/daemon/status", nil, &st)
		return len(st.Warnings) == 1 && strings.HasPrefix(st.Warnings[0], conflict)
	})
	if log := first.log.String(); !strings.Contains(log, "not reconnecting") || !strings.Contains(log, conflict) {
		t.Fatalf("the first robot's log does not say it left the session to the other:\n%s", log)
	}
	if strings.Contains(second.log.String(), "took the session over") {
		t.Fatalf("the second robot was thrown out in return:\n%s", second.log.String())
	}
}
