package robotd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/robothub/robothub/core/apps"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/fleet"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/release"
	"github.com/robothub/robothub/core/robot"
	"github.com/robothub/robothub/core/version"
)

// The daemon's self-update (core/release, robotd/updateapi), wired:
//
//   - launch, before anything else, in the program the service manager started (robot-daemon as
//     installed, ExecStart of the systemd unit): it counts the start of a pending release, swaps
//     the previous one back when that release keeps failing to become ready, and execs the
//     program the current link names (same PID: systemd's main process stays).
//   - an update job downloads and checks the release and swaps the links, then the daemon hands
//     over: the app stops, the API closes, the robot stops where it is with its motors holding
//     (robot.Hold), the record says what was handed over, and the daemon execs the launcher.
//   - the next daemon takes the robot over in that state (robot.Adopt), says READY=1 to systemd
//     once its API and robot are up, records it, and starts the app that ran.
//
// A release that never becomes ready is stopped by systemd (the unit's WatchdogSec: the daemon
// pings the watchdog only once ready) or crashes; either way systemd starts the launcher again,
// which counts the start and, past MaxStarts, rolls back. Tests play systemd's part with
// internal/testkit/fakesystemd over the same NOTIFY_SOCKET protocol.

// DefaultReleaseRepo is the hub repository the daemon's releases come from: a model repo
// (core/release says why).
const DefaultReleaseRepo = release.DefaultRepo

// launcherEnv carries the path of the program the service manager started to the releases it
// execs, so that a hand-over starts that program again (and its rollback rules) rather than itself.
const launcherEnv = "ROBOT_DAEMON_LAUNCHER"

// ServeUpdating is Serve for the daemon's own program (robot-daemon's main): it also updates
// itself. First it runs the launcher's rules (launch), which may exec a newer release in its
// place; at a hand-over it execs the launcher, with args (the command line, args[0] the program)
// and environ (the environment as the service manager gave it: the daemon takes secrets out of
// its own, and the next release needs them again). It returns only on error or at the end of a
// normal shutdown.
func ServeUpdating(ctx context.Context, cfg Config, args, environ []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	if _, err := cfg.resolved(); err != nil {
		return err
	}
	if err := launch(cfg, args, environ, getenv, stderr); err != nil {
		return err
	}
	err := serve(ctx, cfg, true, getenv, stdout, stderr)
	var h *handoverError
	if errors.As(err, &h) {
		// Everything serve held is closed (the port, the motor bus, the data dir's lock): the
		// launcher starts the new release in this process.
		return syscall.Exec(h.launcher, args, append(environ, launcherEnv+"="+h.launcher))
	}
	return err
}

type handoverError struct{ launcher string }

func (h *handoverError) Error() string { return "handing over to " + h.launcher }

// launch runs the launcher's rules (release.Layout.Launch) when this process is the program the
// service manager started, and execs the release they name.
func launch(cfg Config, args, environ []string, getenv func(string) string, stderr io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	launcher := getenv(launcherEnv)
	if launcher == "" {
		launcher = self
		_ = os.Setenv(launcherEnv, self)
	}
	if launcher != self {
		return nil // a release the launcher started: it already ran the rules
	}
	layout := release.Layout{Dir: filepath.Join(cfg.DataDir, "releases")}
	next, rec, err := layout.Launch(self, time.Now())
	if err != nil {
		// A broken releases folder must not keep the robot from starting: the installed program runs.
		fmt.Fprintf(stderr, "robot-daemon: the releases in %s: %v; running %s\n", layout.Dir, err, self)
		return nil
	}
	if rec != nil && rec.State == release.StateRolledBack && rec.Finished.After(time.Now().Add(-time.Minute)) {
		fmt.Fprintf(stderr, "robot-daemon: update %s to %s rolled back: %s\n", rec.ID, rec.To, rec.Error)
	}
	if next == "" {
		return nil
	}
	// The environment the daemon started with: the command took the broker password out of this
	// process's own.
	return syscall.Exec(next, args, append(environ, launcherEnv+"="+launcher))
}

// newUpdater returns the daemon's updater; handovers receives the record of a swap to hand over.
func newUpdater(cfg Config, selfExec bool, layout release.Layout, handovers chan<- *release.Record, log *slog.Logger) (*release.Updater, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	uc := release.UpdaterConfig{Layout: layout, Channel: cfg.Release.Channel, Key: *cfg.Release.Key, Running: version.String(), Self: self,
		Probation: cfg.Release.Probation, Log: log}
	if cfg.Release.Repo != nil && cfg.HubURL != "" {
		c, err := hub.New(cfg.HubURL, hub.WithToken(cfg.HubToken), hub.WithLogger(log), hub.WithUserAgent("robot-daemon/"+version.String()),
			hub.WithHTTPClient(&http.Client{Timeout: 2 * time.Minute}))
		if err != nil {
			return nil, fmt.Errorf("--hub-url: %w", err)
		}
		repo := *cfg.Release.Repo
		uc.Repo = repo
		uc.Open = func(ctx context.Context) (release.Source, string, error) { return release.HubSource(ctx, c, repo) }
	}
	if selfExec {
		uc.Handover = func(rec *release.Record) error {
			select {
			case handovers <- rec:
				return nil
			default:
				return fault.Refusedf("a hand-over is already under way")
			}
		}
	}
	return release.NewUpdater(uc), nil
}

// handover is what a daemon hands to the next one, in the update record.
type handover struct {
	Robot robot.Held `json:"robot"`
}

func handedOver(rec *release.Record, log *slog.Logger) (handover, bool) {
	var h handover
	if rec == nil || len(rec.Handover) == 0 {
		return h, false
	}
	if err := rec.HandoverOf(&h); err != nil {
		log.Warn("the previous daemon's hand-over cannot be read: starting afresh", "err", err)
		return h, false
	}
	return h, true
}

// runningApp is the app that runs now ("" when none).
func runningApp(mgr *apps.Manager) string {
	if st := mgr.Status(); st != nil && st.State.Active() {
		return st.Info.Name
	}
	return ""
}

// handOver stops the robot where it is and writes the record of what it hands over; serve has
// stopped the app and the API.
func handOver(layout release.Layout, rec *release.Record, rb *robot.Robot, log *slog.Logger) error {
	held, released, err := rb.Hold()
	if err != nil {
		log.Warn("leaving the motor bus", "err", err)
	}
	rec.Released = released
	if err := rec.SetHandover(handover{Robot: held}); err != nil {
		return err
	}
	rec.Log(released, "robot-daemon %s stopped; the robot holds its pose (awake %v); app %q to restart", rec.From, held.Awake, rec.App)
	if err := layout.WriteRecord(rec); err != nil {
		return fmt.Errorf("writing the update record: %w", err)
	}
	launcher := cmp.Or(os.Getenv(launcherEnv), rec.FromProgram)
	return &handoverError{launcher: launcher}
}

// resume finishes a hand-over once the daemon is ready: the record says so, and the app that ran
// starts again.
//
// adopted: the robot was taken over as the old daemon held it; otherwise (it stopped before it
// could hand over) the daemon started as usual, and only the record is finished.
func resume(ctx context.Context, layout release.Layout, rec *release.Record, adopted bool, tookOver time.Time, mgr *apps.Manager, log *slog.Logger) {
	running := version.String()
	if err := layout.Arrived(rec, running, tookOver, time.Now()); err != nil {
		log.Warn("recording the update", "err", err)
	}
	log.Info("update resumed", "update", rec.ID, "state", rec.State, "from", rec.From, "to", rec.To, "app", rec.App, "handed_over", adopted)
	if adopted && rec.App != "" {
		if _, err := mgr.Start(rec.App); err != nil {
			log.Warn("restarting the app that ran before the update", "app", rec.App, "err", err)
		}
	}
	if rec.State == release.StateReady {
		select {
		case <-ctx.Done():
		case <-time.After(rec.Probation):
			if err := layout.Passed(rec.ID, running, time.Now()); err != nil {
				log.Warn("recording the update", "err", err)
			}
		}
	}
}

// startupPings bounds how long a starting daemon pings systemd's watchdog before it is ready. After
// a hand-over the unit's watchdog runs on (the process is the same), and a new release's start
// may reinstall the SDK into the apps venv (seconds to a minute on the robot): it pings while it
// works, for at most this long, so that one that hangs is still stopped by the watchdog.
const startupPings = 2 * time.Minute

// watchdog pings systemd's watchdog (WATCHDOG=1) at half its interval: while the daemon starts
// (for at most startupPings) and, once ready is closed, for as long as it runs.
func watchdog(ctx context.Context, getenv func(string) string, ready <-chan struct{}, log *slog.Logger) {
	usec, err := strconv.ParseInt(getenv("WATCHDOG_USEC"), 10, 64)
	if err != nil || usec <= 0 {
		return
	}
	if pid := getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return
	}
	t := time.NewTicker(time.Duration(usec) * time.Microsecond / 2)
	defer t.Stop()
	giveUp := time.After(startupPings)
	for {
		if err := sdNotify(getenv, "WATCHDOG=1"); err != nil {
			log.Warn("pinging systemd's watchdog", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-giveUp:
			select {
			case <-ready:
			case <-ctx.Done():
				return
			}
		}
	}
}

// fleetReleases is the fleet agent's view of the daemon's updates (nil when the daemon has no
// release repository or cannot restart itself: daemon releases are then ignored).
func fleetReleases(cfg Config, selfExec bool, up *release.Updater) fleet.Releases {
	if cfg.Release.Repo == nil || cfg.HubURL == "" || !selfExec {
		return nil
	}
	return agentReleases{up: up, repo: cfg.Release.Repo.String()}
}

type agentReleases struct {
	up   *release.Updater
	repo string
}

func (a agentReleases) Repo() string { return a.repo }

func (a agentReleases) Last() *fleet.DaemonResult {
	rec := a.up.Last()
	if rec == nil {
		return nil
	}
	res := &fleet.DaemonResult{Version: rec.To, Time: rec.Finished}
	switch rec.State {
	case release.StateReady, release.StateDone:
		res.Result, res.Time = fleet.ResultDone, rec.Ready
	case release.StateRolledBack:
		res.Result, res.Error = fleet.ResultRolledBack, rec.Error
	default:
		return nil
	}
	return res
}

func (a agentReleases) Update(ctx context.Context, version string) error {
	job, err := a.up.Start(release.StartRequest{Version: version})
	if err != nil {
		return err
	}
	for {
		_, status, changed := job.Follow(math.MaxInt)
		if release.Finished(status) {
			if info := job.Info(); info.Status == release.JobFailed {
				return errors.New(info.Error)
			}
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// noUpdater answers the update routes of a server without an updater (the tests' in-memory apps).
type noUpdater struct{ version string }

func (n noUpdater) Running() string { return n.version }
func (noUpdater) Busy() bool        { return false }
func (n noUpdater) Available(context.Context, bool) release.Availability {
	return release.Availability{Current: n.version, Available: "unknown", Channel: release.Stable, Error: "this daemon does not update itself"}
}
func (noUpdater) Start(release.StartRequest) (*release.Job, error) {
	return nil, fault.Refusedf("this daemon cannot update itself")
}
func (noUpdater) Job(string) (*release.Job, error) { return nil, fault.NotFoundf("Job ID not found") }
func (n noUpdater) InstallSource() release.InstallSource {
	return release.InstallSource{Version: n.version, Source: "installed", Channel: release.Stable}
}
