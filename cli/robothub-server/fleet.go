package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	neturl "net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/robothub/robothub/cli/cliapp"
	"github.com/robothub/robothub/cli/hubconn"

	"github.com/urfave/cli/v2"

	"github.com/robothub/robothub/adapters/mqtt"
	"github.com/robothub/robothub/core/fleet"
	"github.com/robothub/robothub/core/release"
	"github.com/robothub/robothub/internal/actions"
)

// FleetURLEnv is the broker `robothub fleet` reads from when --broker is not given.
const FleetURLEnv = "ROBOTHUB_FLEET_URL"

// FleetPasswordFileEnv names a file holding the broker password, as --password-file does.
const FleetPasswordFileEnv = "ROBOTHUB_FLEET_PASSWORD_FILE"

func fleetCommand(e *env) *cli.Command {
	broker := &cli.StringFlag{Name: "broker", Usage: "the fleet's MQTT broker `URL` (default $" + FleetURLEnv + "); credentials from $" +
		actions.FleetUsernameEnv + ", $" + actions.FleetPasswordEnv + " (or --password-file) or a client certificate ($" + actions.FleetCertEnv + ", $" + actions.FleetKeyEnv + "), CAs from $" + actions.FleetCAEnv}
	passwordFile := &cli.StringFlag{Name: "password-file", Usage: "read the broker password from `FILE` (robothub dev's is <data-dir>/" + DevBrokerPasswordFile + "; default $" + FleetPasswordFileEnv + ")"}
	return &cli.Command{
		Name:  "fleet",
		Usage: cliapp.RobothubUsageOf("fleet"),
		Subcommands: []*cli.Command{
			{
				Name:      "ls",
				Usage:     "list the robots: online, app revisions, running app, last update",
				UsageText: "robothub fleet ls [--broker URL] [--password-file FILE] [--format table|json|quiet]",
				Flags:     []cli.Flag{broker, passwordFile, hubconn.FormatFlag()},
				Action:    func(c *cli.Context) error { return fleetLs(c, e) },
			},
			{
				Name:  "wait",
				Usage: "wait until every robot that has an app of a space runs a revision",
				UsageText: `robothub fleet wait --space OWNER/NAME --revision SHA [--timeout 10m] [--broker URL] [--password-file FILE]

Exits 0 once every robot with an app of the space reports the revision; 1 when one failed or refused
it, its rollout halted, or the timeout passed (naming the robots that failed or are late).`,
				Flags: []cli.Flag{broker, passwordFile,
					&cli.StringFlag{Name: "space", Required: true, Usage: "the space, `OWNER/NAME`"},
					&cli.StringFlag{Name: "revision", Required: true, Usage: "the commit (7 hex digits or more)"},
					&cli.DurationFlag{Name: "timeout", Value: 10 * time.Minute, Usage: "give up after `DURATION`"},
				},
				Action: func(c *cli.Context) error { return fleetWait(c, e) },
			},
			{
				Name:  "update-daemon",
				Usage: "announce a robot-daemon release to the fleet, in canary waves like an app's rollout",
				UsageText: `robothub fleet update-daemon --version V [--repo REPO] [--canary PERCENT --halt PERCENT --wait 15m] [--broker URL]

Every robot whose bucket the wave covers updates itself to the release (robot-daemon checks its
signature with the key it was built with, and takes releases only from its own --release-repo).
With --canary, the first PERCENT of the fleet gets it first; the rest gets it once each canary robot
runs it, and the rollout halts when more than --halt percent of them failed or rolled back. Exits 0
once every wave is out, 1 when the rollout halted or --timeout passed.`,
				Flags: []cli.Flag{broker,
					&cli.StringFlag{Name: "version", Required: true, Usage: "the release `VERSION` (robothub release publish put it in the repo)"},
					&cli.StringFlag{Name: "repo", Value: release.DefaultRepo, Usage: "the release repository: owner/name (a model) or models/, datasets/, spaces/owner/name"},
					&cli.IntFlag{Name: "canary", Usage: "percent of the fleet in the first wave (0: everyone at once)"},
					&cli.IntFlag{Name: "halt", Usage: "percent of the canary robots that may fail before the rollout halts"},
					&cli.DurationFlag{Name: "wait", Value: fleet.DefaultCanaryWait, Usage: "how long the canary robots have to report"},
					&cli.DurationFlag{Name: "timeout", Value: 30 * time.Minute, Usage: "give up waiting on the canary after `DURATION`"},
				},
				Action: func(c *cli.Context) error { return fleetUpdateDaemon(c, e) },
			},
		},
		OnUsageError: onUsageError,
	}
}

// fleetUpdateDaemon announces a daemon release through core/fleet's Publisher, the one the
// receiver's fleet: route runs for app pushes, and drives its canary wave to the end.
func fleetUpdateDaemon(c *cli.Context, e *env) error {
	v, err := release.ParseVersion(c.String("version"))
	if err != nil {
		return usagef("--version: %v", err)
	}
	repo, err := release.ParseRepo(c.String("repo"))
	if err != nil {
		return usagef("--repo: %v", err)
	}
	plan, err := fleet.ParsePlan(func(k string) string {
		switch k {
		case "canary", "halt":
			return strconv.Itoa(c.Int(k))
		case "wait":
			return c.Duration("wait").String()
		}
		return ""
	})
	if err != nil {
		return usagef("%v", err)
	}
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	pub := &fleet.Publisher{Plan: plan, Log: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	subscribed := make(chan struct{})
	client, err := dialFleet(ctx, c, e, pub.Handle, func(client *mqtt.Client) {
		if plan.Canary == 0 {
			return
		}
		go func() {
			if err := client.Subscribe(ctx, pub.Filters()...); err == nil {
				pub.Subscribed()
				select {
				case subscribed <- struct{}{}:
				default:
				}
			}
		}()
	})
	if err != nil {
		return fleetError(err)
	}
	defer client.Close(context.Background())
	pub.Link = client
	if plan.Canary > 0 {
		select {
		case <-subscribed:
		case <-ctx.Done():
			return fleetError(fmt.Errorf("subscribing to the robots' statuses: %w", ctx.Err()))
		}
		go func() { _ = pub.Run(ctx) }()
	}
	r, err := pub.AnnounceDaemon(ctx, v.String(), repo.String())
	if err != nil {
		return fleetError(fmt.Errorf("announcing robot-daemon %s: %w", v, err))
	}
	if r.State != fleet.RolloutCanary {
		fmt.Fprintf(e.stdout, "announced robot-daemon %s (%s) to every robot of the fleet: rollout %s\n", v, repo, r.ID)
		return nil
	}
	fmt.Fprintf(e.stdout, "announced robot-daemon %s (%s) to the canary, %d %% of the fleet: rollout %s\n", v, repo, plan.Canary, r.ID)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		cur, ok := pub.DaemonRollout()
		switch {
		case ok && cur.ID == r.ID && cur.State == fleet.RolloutComplete:
			fmt.Fprintf(e.stdout, "the canary passed (%s): robot-daemon %s goes to every robot\n", cur.Reason, v)
			return nil
		case ok && cur.ID == r.ID && cur.State == fleet.RolloutHalted:
			return cli.Exit(fmt.Sprintf("the rollout of robot-daemon %s halted: %s", v, cur.Reason), exitError)
		case ok && cur.ID != r.ID:
			return cli.Exit(fmt.Sprintf("another daemon rollout (%s) replaced this one", cur.ID), exitError)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return cli.Exit(fmt.Sprintf("after %s the canary of robot-daemon %s has not finished: its rollout stays in the canary wave", c.Duration("timeout"), v), exitError)
		}
	}
}

// dialFleet connects to the fleet's broker with the operator's credentials; up runs at each
// (re)connection.
func dialFleet(ctx context.Context, c *cli.Context, e *env, onMessage func(string, []byte), up func(*mqtt.Client)) (*mqtt.Client, error) {
	url := cmp.Or(c.String("broker"), e.getenv(FleetURLEnv))
	if url == "" {
		return nil, usagef("no broker: pass --broker URL or set %s", FleetURLEnv)
	}
	var tlsCfg *tls.Config
	if ca, cert := e.getenv(actions.FleetCAEnv), e.getenv(actions.FleetCertEnv); ca != "" || cert != "" {
		t, err := mqtt.TLSFiles(ca, cert, e.getenv(actions.FleetKeyEnv))
		if err != nil {
			return nil, usagef("%v", err)
		}
		tlsCfg = t
	}
	id := make([]byte, 6)
	_, _ = rand.Read(id)
	user := e.getenv(actions.FleetUsernameEnv)
	client, err := mqtt.Connect(ctx, mqtt.Config{URL: url, ClientID: cmp.Or(user, "robothub-cli-"+hex.EncodeToString(id)), Username: user,
		Password: e.getenv(actions.FleetPasswordEnv), TLS: tlsCfg, OnMessage: onMessage, ReceiveMaximum: mqtt.ManyMessages,
		Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		OnUp:   func(client *mqtt.Client, _ time.Time) { up(client) }})
	if err != nil {
		return nil, usagef("--broker: %v", err)
	}
	connectCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := client.AwaitConnection(connectCtx); err != nil {
		client.Close(context.Background())
		return nil, err
	}
	return client, nil
}

// fleetView is what an operator sees of a fleet: the retained statuses, presences and rollouts,
// kept up to date.
type fleetView struct {
	mu       sync.Mutex
	statuses map[string]fleet.Status
	online   map[string]fleet.Presence
	rollouts map[string]fleet.Rollout
	synced   bool
	sync     string // the topic of this view's own sync message
	changed  chan struct{}
}

func (v *fleetView) take(topic string, payload []byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	defer func() {
		select {
		case v.changed <- struct{}{}:
		default:
		}
	}()
	if topic == v.sync {
		v.synced = true
		return
	}
	topics := fleet.Topics{}
	if robot, kind, ok := topics.ParseRobot(topic); ok {
		switch kind {
		case "status":
			if s, err := fleet.ParseStatus(payload); err == nil && s.Robot == robot {
				v.statuses[robot] = s
			}
		case "online":
			if p, err := fleet.ParsePresence(payload); err == nil && p.Robot == robot {
				v.online[robot] = p
			}
		}
		return
	}
	if r, err := fleet.ParseRollout(payload); err == nil && topic == topics.Rollout(r.Space) {
		v.rollouts[r.Space] = r
	}
}

// openFleetView connects to the broker, subscribes to the robots and rollouts, and returns once
// the retained messages are in: it then publishes a message to itself, which the broker queues
// after them. A broker that refuses that message (an operator ACL without its own topic) is given
// a second of quiet instead.
func openFleetView(ctx context.Context, c *cli.Context, e *env) (*fleetView, *mqtt.Client, error) {
	url := cmp.Or(c.String("broker"), e.getenv(FleetURLEnv))
	if url == "" {
		return nil, nil, usagef("no broker: pass --broker URL or set %s", FleetURLEnv)
	}
	var tlsCfg *tls.Config
	if ca, cert := e.getenv(actions.FleetCAEnv), e.getenv(actions.FleetCertEnv); ca != "" || cert != "" {
		t, err := mqtt.TLSFiles(ca, cert, e.getenv(actions.FleetKeyEnv))
		if err != nil {
			return nil, nil, usagef("%v", err)
		}
		tlsCfg = t
	}
	id := make([]byte, 6)
	_, _ = rand.Read(id)
	user := e.getenv(actions.FleetUsernameEnv)
	clientID := cmp.Or(user, "robothub-cli-"+hex.EncodeToString(id))
	password := e.getenv(actions.FleetPasswordEnv)
	if file := cmp.Or(c.String("password-file"), e.getenv(FleetPasswordFileEnv)); file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, nil, usagef("--password-file: %v", err)
		}
		password = strings.TrimSpace(string(data))
	}
	v := &fleetView{statuses: map[string]fleet.Status{}, online: map[string]fleet.Presence{}, rollouts: map[string]fleet.Rollout{},
		sync: "robothub/v1/operators/" + clientID + "/sync", changed: make(chan struct{}, 1)}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	client, err := mqtt.Connect(ctx, mqtt.Config{URL: url, ClientID: clientID, Username: user, Password: password,
		TLS: tlsCfg, OnMessage: v.take, Logger: logger, ReceiveMaximum: mqtt.ManyMessages})
	if err != nil {
		return nil, nil, usagef("--broker: %v", err)
	}
	connectCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	// A broker that is not there: said at once, with what to start. The client library retries a
	// refused connection until its deadline, and the user waited 15 s for "context deadline exceeded".
	if err := dialBroker(connectCtx, url); err != nil {
		client.Close(context.Background())
		return nil, nil, brokerUnreachable(url, err)
	}
	if err := client.AwaitConnection(connectCtx); err != nil {
		client.Close(context.Background())
		return nil, nil, brokerUnreachable(url, err)
	}
	topics := fleet.Topics{}
	if err := client.Subscribe(connectCtx, topics.AllRobots(), topics.AllRollouts(), v.sync); err != nil {
		client.Close(context.Background())
		return nil, nil, err
	}
	quiet := time.Second
	if err := client.Publish(connectCtx, v.sync, []byte("sync"), false); err == nil {
		quiet = 10 * time.Second // the sync message comes; this is only a bound
	}
	timer := time.NewTimer(quiet)
	defer timer.Stop()
	for {
		v.mu.Lock()
		done := v.synced
		v.mu.Unlock()
		if done {
			return v, client, nil
		}
		select {
		case <-v.changed:
			if quiet == time.Second {
				timer.Reset(quiet)
			}
		case <-timer.C:
			return v, client, nil
		case <-ctx.Done():
			client.Close(context.Background())
			return nil, nil, ctx.Err()
		}
	}
}

// dialBroker opens and closes one TCP connection to the broker of raw (mqtt://, mqtts://, ws://,
// wss://), or says why it cannot.
func dialBroker(ctx context.Context, raw string) error {
	u, err := neturl.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return nil // the client said what is wrong with it already
	}
	port := cmp.Or(u.Port(), map[string]string{"mqtt": "1883", "tcp": "1883", "mqtts": "8883", "ssl": "8883", "tls": "8883", "ws": "80", "wss": "443"}[u.Scheme])
	if port == "" {
		return nil
	}
	dialCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(dialCtx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return err
	}
	return conn.Close()
}

// brokerUnreachable says that the broker of raw could not be reached, and what to check: on
// loopback, robothub dev, which runs the fleet's broker there.
func brokerUnreachable(raw string, err error) error {
	hint := "check --broker or " + FleetURLEnv
	if u, perr := neturl.Parse(raw); perr == nil {
		if ip := net.ParseIP(u.Hostname()); u.Hostname() == "localhost" || ip != nil && ip.IsLoopback() {
			hint = "is robothub dev (or make run) running? It runs the fleet's broker on " + DefaultBrokerAddr + "; or " + hint
		}
	}
	return fmt.Errorf("cannot reach the broker at %s (%v): %s", raw, err, hint)
}

// fleetRobot is one robot of fleet ls --format json.
type fleetRobot struct {
	fleet.Status
	Online bool       `json:"online"`
	Since  *time.Time `json:"since,omitempty"` // when the robot's connection (or its last one) was made
}

func (v *fleetView) robots() []fleetRobot {
	v.mu.Lock()
	defer v.mu.Unlock()
	ids := slices.Sorted(maps.Keys(v.statuses))
	for id := range v.online {
		if _, ok := v.statuses[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	out := make([]fleetRobot, 0, len(ids))
	for _, id := range ids {
		r := fleetRobot{Status: v.statuses[id]}
		r.Robot = id
		if r.Apps == nil {
			r.Apps = []fleet.AppStatus{}
		}
		if p, ok := v.online[id]; ok {
			r.Online = p.Online
			if !p.Since.IsZero() {
				r.Since = &p.Since
			}
		}
		out = append(out, r)
	}
	return out
}

func fleetLs(c *cli.Context, e *env) error {
	format, err := hubconn.OutputFormat(c)
	if err != nil {
		return err
	}
	v, client, err := openFleetView(c.Context, c, e)
	if err != nil {
		return fleetError(err)
	}
	defer client.Close(context.Background())
	robots := v.robots()
	return hubconn.PrintResult(e.stdout, format, robots, hubconn.IDsOf(robots, func(r fleetRobot) string { return r.Robot }), func() error {
		if len(robots) == 0 {
			_, err := fmt.Fprintln(e.stdout, "No robot has reported to this broker.")
			return err
		}
		w := hubconn.NewTable(e.stdout)
		fmt.Fprintln(w, "ROBOT\tONLINE\tDAEMON\tAPPS\tRUNNING\tLAST UPDATE\tLAST SEEN")
		now := time.Now()
		for _, r := range robots {
			var apps []string
			for _, a := range r.Apps {
				apps = append(apps, a.Name+"@"+short(a.Revision))
			}
			online, seen := "no", "-"
			if r.Online {
				online, seen = "yes", "now"
			} else if !r.Time.IsZero() {
				seen = ago(now, r.Time)
			}
			last := "-"
			if u := r.LastUpdate; u != nil {
				last = fmt.Sprintf("%s %s@%s %s", u.Result, u.Space, short(u.Revision), ago(now, u.Time))
				if u.Error != "" {
					last += ": " + clip(u.Error, 60)
				}
			}
			name := r.Robot
			if r.Name != "" && r.Name != r.Robot {
				name += " (" + r.Name + ")"
			}
			if u := r.LastDaemonUpdate; u != nil && (r.LastUpdate == nil || u.Time.After(r.LastUpdate.Time)) {
				last = fmt.Sprintf("daemon %s %s %s", u.Version, u.Result, ago(now, u.Time))
				if u.Error != "" {
					last += ": " + clip(u.Error, 60)
				}
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, online, cmp.Or(r.Daemon, "-"), cmp.Or(strings.Join(apps, ", "), "-"), cmp.Or(r.Running, "-"), last, seen)
		}
		return w.Flush()
	})
}

func fleetWait(c *cli.Context, e *env) error {
	space, rev := c.String("space"), strings.ToLower(strings.TrimSpace(c.String("revision")))
	if err := fleet.CheckSpace(space); err != nil {
		return usagef("--space: %v", err)
	}
	if len(rev) < 7 || strings.Trim(rev, "0123456789abcdef") != "" {
		return usagef("--revision %q: want a commit, 7 to 64 hex digits", rev)
	}
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	v, client, err := openFleetView(ctx, c, e)
	if err != nil {
		return fleetError(err)
	}
	defer client.Close(context.Background())
	for {
		done, failed, late, halted := v.progress(space, rev)
		switch {
		case halted != "":
			return cli.Exit(fmt.Sprintf("the rollout of %s at %s halted: %s", space, short(rev), halted), exitError)
		case len(done)+len(failed)+len(late) == 0:
			return cli.Exit(fmt.Sprintf("no robot of this fleet has an app of %s", space), exitError)
		case len(late) == 0 && len(failed) == 0:
			fmt.Fprintf(e.stdout, "%d robot(s) run %s at %s: %s\n", len(done), space, short(rev), strings.Join(done, ", "))
			return nil
		case len(late) == 0:
			return cli.Exit(fmt.Sprintf("%d of %d robot(s) did not update %s to %s: %s", len(failed), len(done)+len(failed), space, short(rev), strings.Join(failed, "; ")), exitError)
		}
		select {
		case <-v.changed:
		case <-ctx.Done():
			msg := fmt.Sprintf("after %s, %d of %d robot(s) do not run %s at %s", c.Duration("timeout"), len(late)+len(failed), len(done)+len(failed)+len(late), space, short(rev))
			if len(failed) > 0 {
				msg += "; failed: " + strings.Join(failed, "; ")
			}
			return cli.Exit(msg+"; late: "+strings.Join(late, ", "), exitError)
		}
	}
}

// progress sorts the robots with an app of space: done (at rev), failed (their update to rev
// failed or was refused), late (neither yet; "(offline)" when their presence says so).
func (v *fleetView) progress(space, rev string) (done, failed, late []string, halted string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if r, ok := v.rollouts[space]; ok && r.State == fleet.RolloutHalted && strings.HasPrefix(r.Revision, rev) {
		halted = r.Reason
	}
	for _, id := range slices.Sorted(maps.Keys(v.statuses)) {
		s := v.statuses[id]
		app, ok := s.App(space)
		if !ok {
			continue
		}
		u := s.LastUpdate
		switch {
		case strings.HasPrefix(app.Revision, rev):
			done = append(done, id)
		case u != nil && u.Space == space && strings.HasPrefix(u.Revision, rev) && (u.Result == fleet.ResultFailed || u.Result == fleet.ResultRefused):
			failed = append(failed, id+" ("+u.Result+": "+clip(u.Error, 200)+")")
		default:
			if p, ok := v.online[id]; ok && !p.Online {
				id += " (offline)"
			}
			late = append(late, id)
		}
	}
	return done, failed, late, halted
}

func fleetError(err error) error {
	var ue *usageError
	if errors.As(err, &ue) {
		return err
	}
	return cli.Exit("fleet: "+err.Error(), exitError)
}

func short(rev string) string {
	if len(rev) > 7 {
		return rev[:7]
	}
	return cmp.Or(rev, "-")
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return t.UTC().Format("2006-01-02")
}
