package release

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/robothub/robothub/core/fault"
)

// Job statuses, as the anchor daemon's update jobs have them.
const (
	JobPending    = "pending"
	JobInProgress = "in_progress"
	JobDone       = "done"
	JobFailed     = "failed"
)

// JobCommand is the command an update job reports.
const JobCommand = "update_robot_daemon"

// JobInfo is an update job as the API shows it: the anchor's {command, status, logs}, and what the
// update was (from, to) and came to (result: updated, rolled-back, failed; error).
type JobInfo struct {
	ID      string   `json:"id"`
	Command string   `json:"command"`
	Status  string   `json:"status"`
	Logs    []string `json:"logs"`
	From    string   `json:"from"`
	To      string   `json:"to,omitempty"`
	Result  string   `json:"result,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Finished reports whether a job status is final.
func Finished(status string) bool { return status == JobDone || status == JobFailed }

// Job is an update job of this process.
type Job struct {
	mu      sync.Mutex
	info    JobInfo
	changed chan struct{}
}

func (j *Job) logf(format string, args ...any) {
	j.mu.Lock()
	j.info.Logs = append(j.info.Logs, time.Now().UTC().Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
	j.signal()
	j.mu.Unlock()
}

func (j *Job) set(status, result, errText string) {
	j.mu.Lock()
	j.info.Status, j.info.Result, j.info.Error = status, result, errText
	j.signal()
	j.mu.Unlock()
}

func (j *Job) signal() {
	close(j.changed)
	j.changed = make(chan struct{})
}

// ID is the job's id.
func (j *Job) ID() string { return j.info.ID }

// Info is a snapshot of the job.
func (j *Job) Info() JobInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	info := j.info
	info.Logs = append([]string{}, j.info.Logs...)
	return info
}

// Follow returns the log lines from index from on, the status, and a channel closed at the next
// change.
func (j *Job) Follow(from int) ([]string, string, <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var lines []string
	if from < len(j.info.Logs) {
		lines = append(lines, j.info.Logs[from:]...)
	}
	return lines, j.info.Status, j.changed
}

// recordJob is the job an earlier process started, as its record tells it: final once the new
// release is ready or was rolled back.
func recordJob(r *Record) *Job {
	info := JobInfo{ID: r.ID, Command: JobCommand, Status: JobInProgress, Logs: append([]string{}, r.Logs...), From: r.From, To: r.To}
	switch r.State {
	case StateReady, StateDone:
		info.Status, info.Result = JobDone, "updated"
	case StateRolledBack:
		info.Status, info.Result, info.Error = JobFailed, "rolled-back", r.Error
	}
	if info.Logs == nil {
		info.Logs = []string{}
	}
	return &Job{info: info, changed: make(chan struct{})}
}

// Availability is what the available route reports: the running version and the newest release
// of the channel.
type Availability struct {
	Current   string `json:"current_version"`
	Available string `json:"available_version"` // "unknown" when the repository could not be read
	Is        bool   `json:"is_available"`
	Channel   string `json:"channel"`
	Error     string `json:"error,omitempty"`
}

// UpdaterConfig configures an Updater.
type UpdaterConfig struct {
	Layout  Layout
	Repo    Repo
	Channel string // Stable or PreRelease
	Key     Key
	// Open opens the release repository at its head (HubSource over the daemon's hub).
	Open func(ctx context.Context) (Source, string, error)
	// Running is this daemon's version; Self its program (os.Executable).
	Running string
	Self    string
	// Handover stops this daemon and starts the current program in its place, taking the
	// record of the swap to fill in (what it hands over) and write. It returns once the
	// hand-over has begun; an error means it could not, and the swap is undone.
	Handover func(rec *Record) error
	// GOOS and GOARCH are this robot's (runtime's by default).
	GOOS, GOARCH string
	// SmokeTest checks the new program before the swap (default: it runs, and its --version
	// says the version it was released as).
	SmokeTest func(ctx context.Context, program string, v Version) error
	MaxStarts int           // DefaultMaxStarts when 0
	Probation time.Duration // DefaultProbation when 0
	Log       *slog.Logger
}

// Updater runs the daemon's update jobs, one at a time.
type Updater struct {
	cfg UpdaterConfig

	mu   sync.Mutex
	jobs map[string]*Job
	busy *Job
}

// NewUpdater returns an Updater.
func NewUpdater(cfg UpdaterConfig) *Updater {
	if cfg.GOOS == "" {
		cfg.GOOS, cfg.GOARCH = runtime.GOOS, runtime.GOARCH
	}
	if cfg.MaxStarts <= 0 {
		cfg.MaxStarts = DefaultMaxStarts
	}
	if cfg.Probation <= 0 {
		cfg.Probation = DefaultProbation
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Channel == "" {
		cfg.Channel = Stable
	}
	if cfg.SmokeTest == nil {
		cfg.SmokeTest = smokeTest
	}
	return &Updater{cfg: cfg, jobs: map[string]*Job{}}
}

// Running is the version this daemon runs.
func (u *Updater) Running() string { return u.cfg.Running }

// Busy reports whether an update job runs.
func (u *Updater) Busy() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.busy != nil
}

func (u *Updater) channel(preRelease bool) string {
	if preRelease {
		return PreRelease
	}
	return u.cfg.Channel
}

// Available reports the newest release of the channel (the pre-release channel with preRelease).
// A repository that cannot be read is said in Error, with Available "unknown".
func (u *Updater) Available(ctx context.Context, preRelease bool) Availability {
	a := Availability{Current: u.cfg.Running, Available: "unknown", Channel: u.channel(preRelease)}
	if u.cfg.Open == nil {
		a.Error = "no release repository is set (--release-repo)"
		return a
	}
	src, _, err := u.cfg.Open(ctx)
	if err == nil {
		var ix *Index
		if ix, err = Available(ctx, src); err == nil {
			if v, ok := ix.Newest(a.Channel); ok {
				a.Available = v.String()
				a.Is = v.Compare(RunningVersion(u.cfg.Running)) > 0
			} else {
				a.Available = "none"
			}
		}
	}
	if err != nil {
		a.Error = err.Error()
	}
	return a
}

// StartRequest is what an update starts from.
type StartRequest struct {
	Version        string // "" for the newest of the channel
	PreRelease     bool   // take the pre-release channel's newest
	AllowDowngrade bool
}

// ErrBusy refuses an update while another one runs.
var ErrBusy = fault.New(fault.Refused, "Update already in progress")

// Start checks the request and starts an update job. It refuses at once what it can tell without
// the hub (a malformed version, another job running); what the hub says goes into the job.
func (u *Updater) Start(req StartRequest) (*Job, error) {
	var target Version
	if req.Version != "" {
		v, err := ParseVersion(req.Version)
		if err != nil {
			return nil, err
		}
		if err := CheckTarget(RunningVersion(u.cfg.Running), v, req.AllowDowngrade); err != nil {
			return nil, err
		}
		target = v
	}
	if u.cfg.Open == nil || u.cfg.Handover == nil {
		return nil, fault.Refusedf("this daemon cannot update itself: no release repository (--release-repo) or no way to restart (run as installed, under systemd or from a terminal)")
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.busy != nil {
		return nil, ErrBusy
	}
	id := newID()
	j := &Job{info: JobInfo{ID: id, Command: JobCommand, Status: JobInProgress, Logs: []string{}, From: u.cfg.Running, To: target.String()}, changed: make(chan struct{})}
	u.jobs[id], u.busy = j, j
	go u.run(j, target, req)
	return j, nil
}

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Job returns a job of this process, or the one the update record tells of.
func (u *Updater) Job(id string) (*Job, error) {
	u.mu.Lock()
	j, ok := u.jobs[id]
	u.mu.Unlock()
	// Once swapped, the record is the job: it goes on in the next program.
	if rec, err := u.cfg.Layout.ReadRecord(); err == nil && rec != nil && rec.ID == id && (!ok || rec.State != StateStarting) {
		return recordJob(rec), nil
	}
	if ok {
		return j, nil
	}
	return nil, fault.NotFoundf("Job ID not found")
}

// Last is the record of the last update that swapped releases (nil: none).
func (u *Updater) Last() *Record {
	rec, err := u.cfg.Layout.ReadRecord()
	if err != nil {
		return nil
	}
	return rec
}

func (u *Updater) run(j *Job, target Version, req StartRequest) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	err := u.update(ctx, j, target, req)
	if err != nil {
		u.cfg.Log.Warn("daemon update failed", "job", j.ID(), "err", err)
		j.logf("update failed: %v", err)
		j.set(JobFailed, "failed", err.Error())
	}
	u.mu.Lock()
	u.busy = nil
	u.mu.Unlock()
}

func (u *Updater) update(ctx context.Context, j *Job, target Version, req StartRequest) error {
	started := time.Now()
	j.logf("checking %s for robot-daemon %s (running %s, channel %s)", u.cfg.Repo, orNewest(target), u.cfg.Running, u.channel(req.PreRelease))
	src, commit, err := u.cfg.Open(ctx)
	if err != nil {
		return err
	}
	if target.IsZero() {
		ix, err := Available(ctx, src)
		if err != nil {
			return err
		}
		v, ok := ix.Newest(u.channel(req.PreRelease))
		if !ok {
			return fault.NotFoundf("No update available: %s has no release on the %s channel", u.cfg.Repo, u.channel(req.PreRelease))
		}
		if v.Compare(RunningVersion(u.cfg.Running)) <= 0 {
			return fault.Refusedf("No update available: the newest %s release is %s, and %s runs", u.channel(req.PreRelease), v, u.cfg.Running)
		}
		target = v
	}
	if err := CheckTarget(RunningVersion(u.cfg.Running), target, req.AllowDowngrade); err != nil {
		return err
	}
	j.mu.Lock()
	j.info.To = target.String()
	j.mu.Unlock()
	j.logf("release %s at commit %s", target, shortCommit(commit))
	checked, err := Check(ctx, src, u.cfg.Key, target)
	if err != nil {
		return err
	}
	j.logf("SHA256SUMS of %s: signature by release key %s ok", target, u.cfg.Key.ID())
	dst := u.cfg.Layout.Program(target)
	if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := checked.Fetch(ctx, src, Program, u.cfg.GOOS, u.cfg.GOARCH, dst, func(line string) { j.logf("%s", line) }); err != nil {
		return err
	}
	downloaded := time.Now()
	if err := u.cfg.SmokeTest(ctx, dst, target); err != nil {
		os.Remove(dst)
		return err
	}
	j.logf("%s --version says %s", dst, target)
	prev := u.cfg.Layout.Current()
	if prev == "" {
		prev = u.cfg.Self
	}
	rec := &Record{ID: j.ID(), From: u.cfg.Running, To: target.String(), FromProgram: prev, ToProgram: dst, State: StateStarting,
		MaxStarts: u.cfg.MaxStarts, Probation: u.cfg.Probation, Started: started, Downloaded: downloaded, Logs: j.Info().Logs}
	if err := u.cfg.Layout.Swap(dst, prev); err != nil {
		return err
	}
	rec.Swapped = time.Now()
	rec.Log(rec.Swapped, "swapped: current is %s, previous %s; restarting", target, u.cfg.Running)
	j.logf("swapped: current is %s, previous %s; restarting", target, u.cfg.Running)
	if err := u.cfg.Handover(rec); err != nil {
		if rerr := u.cfg.Layout.Swap(prev, prev); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return fmt.Errorf("restarting into %s: %w (the running %s stays)", target, err, u.cfg.Running)
	}
	return nil
}

// smokeTest runs the new program with --version: it must start on this robot and say the version
// it was released as.
func smokeTest(ctx context.Context, program string, v Version) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, "--version")
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fault.Invalidf("the new program does not run on this robot (%s --version: %v): refused", filepath.Base(filepath.Dir(program)), err)
	}
	if !strings.Contains(string(out), " "+v.String()) {
		return fault.Invalidf("the new program says it is %q, not %s: refused", strings.TrimSpace(clip(string(out))), v)
	}
	return nil
}

func orNewest(v Version) string {
	if v.IsZero() {
		return "(the newest)"
	}
	return v.String()
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// SetHandover records what the old daemon hands over.
func (r *Record) SetHandover(v any) error {
	data, err := json.Marshal(v)
	r.Handover = data
	return err
}

// HandoverOf decodes what the old daemon handed over into v.
func (r *Record) HandoverOf(v any) error { return json.Unmarshal(r.Handover, v) }

// InstallSource is where the running daemon came from, as the anchor's install-source route says
// it: the version and the source (release: a release of the repository, swapped in by an update;
// installed: the program the system installed).
type InstallSource struct {
	Version  string `json:"version"`
	Source   string `json:"source"`
	Program  string `json:"program"`
	Repo     string `json:"repo,omitempty"`
	Channel  string `json:"channel"`
	Previous string `json:"previous,omitempty"` // the program the last swap kept, for a rollback
}

// InstallSource reports where the running daemon came from.
func (u *Updater) InstallSource() InstallSource {
	s := InstallSource{Version: u.cfg.Running, Source: "installed", Program: u.cfg.Self, Channel: u.cfg.Channel, Previous: u.cfg.Layout.Previous()}
	if u.cfg.Open != nil {
		s.Repo = u.cfg.Repo.String()
	}
	if cur := u.cfg.Layout.Current(); cur != "" && samePath(cur, u.cfg.Self) {
		s.Source, s.Program = "release", cur
	}
	return s
}
