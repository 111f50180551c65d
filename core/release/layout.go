package release

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/google/renameio/v2/maybe"
)

// Layout is where a robot keeps its releases, in the daemon's state directory (the daemon's user
// cannot write /usr/bin, and need not):
//
//	<dir>/<version>/robot-daemon   a checked release
//	<dir>/current                  symlink to the program that runs (absent: the installed one)
//	<dir>/previous                 symlink to the program that ran before the last swap
//	<dir>/update.json              the record of the last update (Record)
//
// Both links are replaced by renaming a new link over them (renameio.Symlink), so a power cut
// leaves the old link or the new one, never none. The daemon runs on Linux only; the CLIs that
// build for Windows (robothub release assemble|publish) import this package but never swap.
type Layout struct{ Dir string }

// Program is where version's program is kept.
func (l Layout) Program(v Version) string { return filepath.Join(l.Dir, v.String(), Program) }

func (l Layout) link(name string) string { return filepath.Join(l.Dir, name) }

// Current is the program the current link names ("" when there is none: the installed program
// runs).
func (l Layout) Current() string { return l.readLink("current") }

// Previous is the program the previous link names ("" when there is none).
func (l Layout) Previous() string { return l.readLink("previous") }

func (l Layout) readLink(name string) string {
	target, err := os.Readlink(l.link(name))
	if err != nil {
		return ""
	}
	return target
}

// Swap makes next the current program and prev (the running one) the previous.
func (l Layout) Swap(next, prev string) error {
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		return err
	}
	if err := replaceLink(prev, l.link("previous")); err != nil {
		return fmt.Errorf("keeping the previous release: %w", err)
	}
	if err := replaceLink(next, l.link("current")); err != nil {
		return fmt.Errorf("swapping in the new release: %w", err)
	}
	return nil
}

// Restore makes the previous program the current one again.
func (l Layout) Restore() error {
	prev := l.Previous()
	if prev == "" {
		return errors.New("there is no previous release to go back to")
	}
	return replaceLink(prev, l.link("current"))
}

// Record states.
const (
	StateStarting   = "starting"    // swapped; the new release has not said it is ready
	StateReady      = "ready"       // the new release is ready, on probation (Probation after Ready)
	StateDone       = "done"        // the new release passed its probation
	StateRolledBack = "rolled-back" // the previous release runs again; Error says why
)

// Record is the record of an update across the restart it makes: written by the daemon that
// swaps, then by each start of the program (Launch) and by the new release once ready.
type Record struct {
	V           int             `json:"v"`
	ID          string          `json:"id"` // the update job's id
	From        string          `json:"from"`
	To          string          `json:"to"`
	FromProgram string          `json:"fromProgram"`
	ToProgram   string          `json:"toProgram"`
	State       string          `json:"state"`
	Starts      int             `json:"starts"` // starts of the new release while pending
	MaxStarts   int             `json:"maxStarts"`
	Probation   time.Duration   `json:"probation"`
	Started     time.Time       `json:"started"`            // the update job started
	Downloaded  time.Time       `json:"downloaded"`         // the release was downloaded and checked
	Swapped     time.Time       `json:"swapped"`            // the links were swapped; the old daemon stops
	Released    time.Time       `json:"released,omitzero"`  // the old daemon's last command to the motors
	TookOver    time.Time       `json:"tookOver,omitzero"`  // the new daemon's first command to the motors
	Ready       time.Time       `json:"ready,omitzero"`     // the new release said it was ready
	Finished    time.Time       `json:"finished,omitzero"`  // done or rolled back
	Error       string          `json:"error,omitempty"`    // why it was rolled back
	App         string          `json:"app,omitempty"`      // the app that ran, restarted by the new release
	Resumed     string          `json:"resumed,omitempty"`  // the version that last resumed the hand-over
	Logs        []string        `json:"logs"`               // the update job's log
	Handover    json.RawMessage `json:"handover,omitempty"` // what the old daemon hands to the new one
}

// Pending reports whether the update is still on trial at now: not ready yet, or ready and within
// its probation.
func (r *Record) Pending(now time.Time) bool {
	return r.State == StateStarting || (r.State == StateReady && now.Before(r.Ready.Add(r.Probation)))
}

// Log appends a line to the update's log.
func (r *Record) Log(now time.Time, format string, args ...any) {
	r.Logs = append(r.Logs, now.UTC().Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
}

// ReadRecord reads the record of the last update; nil, nil when there is none.
func (l Layout) ReadRecord() (*Record, error) {
	data, err := os.ReadFile(l.link("update.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", l.link("update.json"), err)
	}
	return &r, nil
}

// WriteRecord replaces the record atomically.
func (l Layout) WriteRecord(r *Record) error {
	r.V = ManifestVersion
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		return err
	}
	return maybe.WriteFile(l.link("update.json"), data, 0o600)
}

// Defaults of a Record.
//
// One start: a release that fails its first start is rolled back at once rather than tried again
// (the operator can start the update again), which keeps the robot without its previous daemon
// for one watchdog interval or one crash, not several.
const (
	DefaultMaxStarts = 1
	DefaultProbation = time.Minute
)

// Launch decides what a starting robot-daemon runs: self, the program that was started (the one
// installed, or one the current link names), or another program to exec in its place. It counts
// the start of a pending update's release, and once that release has started MaxStarts times
// without passing its probation (it never became ready, or it crashed soon after), it swaps the
// previous program back, records why, and runs that one. exec is "" when self is to run.
//
// It runs before anything else the daemon does, in the program the service manager started
// (robot-daemon as installed, which a bad release cannot replace), on every start: a restart by
// systemd after a crash or a watchdog kill, and the daemon's own hand-over to a new release.
func (l Layout) Launch(self string, now time.Time) (exec string, rec *Record, err error) {
	rec, err = l.ReadRecord()
	if err != nil {
		return "", nil, err
	}
	if rec != nil && rec.Pending(now) && l.Current() == rec.ToProgram {
		rec.Starts++
		if rec.Starts > rec.MaxStarts {
			why := fmt.Sprintf("%s started %s without becoming ready", rec.To, times(rec.Starts-1))
			if rec.State == StateReady {
				why = fmt.Sprintf("%s stopped %s within %s of becoming ready", rec.To, times(rec.Starts-1), rec.Probation)
			}
			if err := l.Restore(); err != nil {
				return "", rec, fmt.Errorf("rolling back %s: %w", rec.To, err)
			}
			rec.State, rec.Error, rec.Finished = StateRolledBack, why, now
			rec.Log(now, "rolled back to %s: %s", rec.From, why)
		} else {
			rec.Log(now, "starting %s (start %d of at most %d)", rec.To, rec.Starts, rec.MaxStarts)
		}
		if err := l.WriteRecord(rec); err != nil {
			return "", rec, err
		}
	}
	cur := l.Current()
	if cur == "" || samePath(cur, self) {
		return "", rec, nil
	}
	if _, err := os.Stat(cur); err != nil {
		return "", rec, fmt.Errorf("the current release %s: %w", cur, err)
	}
	return cur, rec, nil
}

func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// samePath reports whether a and b name the same file.
func samePath(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// staleHandover bounds how old a hand-over may be to be resumed: a daemon started by hand a day
// after a failed update does not take its pose and app from then.
const staleHandover = time.Hour

// Resumable returns the record of the update a starting daemon of version running is to finish,
// or nil: the update to running that is starting, or the one rolled back to running. Its Handover
// (the robot's state, the app) is empty when the old daemon stopped before it could hand over.
func (l Layout) Resumable(running string, now time.Time) *Record {
	rec, err := l.ReadRecord()
	if err != nil || rec == nil || rec.Resumed == running || now.Sub(rec.Swapped) > staleHandover {
		return nil
	}
	if (rec.State == StateStarting && rec.To == running) || (rec.State == StateRolledBack && rec.From == running) {
		return rec
	}
	return nil
}

// Arrived records that a daemon of version running is ready after the hand-over rec: the new
// release is ready (on probation), or the previous one runs again after a rollback.
func (l Layout) Arrived(rec *Record, running string, tookOver, now time.Time) error {
	rec.Resumed = running
	rec.TookOver = tookOver
	if rec.State == StateStarting && rec.To == running {
		rec.State, rec.Ready = StateReady, now
		gap := "; the old daemon stopped before it handed the robot over"
		if !tookOver.IsZero() && !rec.Released.IsZero() {
			gap = fmt.Sprintf("; the motors were without a daemon for %d ms", tookOver.Sub(rec.Released).Milliseconds())
		}
		rec.Log(now, "robot-daemon %s is ready, %.1f s after the swap%s", running, now.Sub(rec.Swapped).Seconds(), gap)
	} else {
		rec.Log(now, "robot-daemon %s runs again", running)
	}
	return l.WriteRecord(rec)
}

// Passed records that the release running passed its probation after the update id.
func (l Layout) Passed(id, running string, now time.Time) error {
	rec, err := l.ReadRecord()
	if err != nil || rec == nil || rec.ID != id || rec.State != StateReady || rec.To != running {
		return err
	}
	rec.State, rec.Finished = StateDone, now
	rec.Log(now, "robot-daemon %s passed its probation (%s)", running, rec.Probation)
	return l.WriteRecord(rec)
}
