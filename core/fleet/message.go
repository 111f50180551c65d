package fleet

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
)

// Version is the version of the messages this package writes and reads. A reader refuses another
// version rather than guess at it; fields added within a version are ignored by older readers.
const Version = 1

// MaxMessageBytes bounds a fleet message: the largest, a status with many apps, is a few KB. AWS
// IoT Core's limit is 128 KB, Mosquitto's default none.
const MaxMessageBytes = 64 << 10

// Buckets is the number of buckets robots are spread over by Bucket: waves are ranges of them, so
// a share is exact to 0.01 %.
const Buckets = 10000

// Update announces that a space's robots in buckets [From, To) should run Revision, or, for a
// daemon release, that the robots in those buckets should run robot-daemon Daemon from the release
// repository Repo: one wave of a rollout. The publisher keeps it retained on the wave's topic, so a
// robot that connects later gets it. A robot checks what it names against the hub it trusts (an
// app's revision) or the release key it was built with (a daemon release).
type Update struct {
	V        int       `json:"v"`
	Space    string    `json:"space,omitempty"`    // owner/name
	Revision string    `json:"revision,omitempty"` // the full commit the push made
	Daemon   string    `json:"daemon,omitempty"`   // a daemon release's version (Space and Revision empty)
	Repo     string    `json:"repo,omitempty"`     // its release repository, <type>s/owner/name
	Time     time.Time `json:"time"`               // when this wave was published; the newest covering a robot wins
	Rollout  string    `json:"rollout"`            // the rollout's id, the same in all its waves
	Wave     int       `json:"wave"`
	From     int       `json:"from"` // first bucket of the wave
	To       int       `json:"to"`   // one past its last bucket
}

// Covers reports whether the wave includes a robot of bucket b.
func (u Update) Covers(b int) bool { return b >= u.From && b < u.To }

// Check reports the first field of u that is wrong.
func (u Update) Check() error {
	switch {
	case u.V != Version:
		return fmt.Errorf("update message: version %d, want %d", u.V, Version)
	case u.Time.IsZero():
		return errors.New("update message: time is missing")
	case u.Rollout == "" || len(u.Rollout) > 64:
		return errors.New("update message: rollout must be 1 to 64 characters")
	case u.Wave < 0 || u.Wave >= MaxWaves:
		return fmt.Errorf("update message: wave %d is not 0 to %d", u.Wave, MaxWaves-1)
	case u.From < 0 || u.To > Buckets || u.From >= u.To:
		return fmt.Errorf("update message: buckets [%d, %d) are not a range within [0, %d)", u.From, u.To, Buckets)
	}
	if u.Daemon != "" || u.Repo != "" {
		if u.Space != "" || u.Revision != "" {
			return errors.New("update message: names both a daemon release and a space")
		}
		return CheckDaemonRelease(u.Daemon, u.Repo)
	}
	if err := CheckSpace(u.Space); err != nil {
		return fmt.Errorf("update message: %w", err)
	}
	if err := CheckRevision(u.Revision); err != nil {
		return fmt.Errorf("update message: %w", err)
	}
	return nil
}

// key is what the rollout is of: the space, or "daemon".
func (u Update) key() string {
	if u.Daemon != "" {
		return daemonKey
	}
	return u.Space
}

// standing reports whether a robot's status concerns the update (it has an app of the space; every
// robot has a daemon), runs it, or failed it.
func (u Update) standing(s Status) (concerns, done, failed bool) {
	if u.Daemon != "" {
		lu := s.LastDaemonUpdate
		failed = lu != nil && lu.Version == u.Daemon && lu.Result != ResultDone && lu.Result != ResultSuperseded
		return true, s.Daemon == u.Daemon, failed
	}
	app, has := s.App(u.Space)
	lu := s.LastUpdate
	failed = lu != nil && lu.Space == u.Space && lu.Revision == u.Revision && (lu.Result == ResultFailed || lu.Result == ResultRefused)
	return has, has && app.Revision == u.Revision, failed
}

// daemonKey keys daemon rollouts among the spaces' (no space id has no slash).
const daemonKey = "daemon"

// Compiled at first use, as the package's other patterns: a receiver starts without it.
var daemonVersion = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]{1,64})?$`)
})

// CheckDaemonRelease reports whether version and repo name a daemon release: a release version
// (1.2.0, 1.3.0-rc.1) and a repository, <type>s/owner/name or owner/name.
func CheckDaemonRelease(version, repo string) error {
	if !daemonVersion().MatchString(version) {
		return fmt.Errorf("daemon release %q is not a release version (MAJOR.MINOR.PATCH[-PRERELEASE])", clip(version))
	}
	id := repo
	for _, t := range []string{"models/", "datasets/", "spaces/"} {
		id = strings.TrimPrefix(id, t)
	}
	if err := CheckSpace(id); err != nil {
		return fmt.Errorf("daemon release repository: %w", err)
	}
	return nil
}

// The results of a daemon update a robot reports, besides ResultDone, ResultFailed, ResultRefused.
const ResultRolledBack = "rolled-back" // the release swapped in did not become ready: the previous runs again

// DaemonResult is the outcome of the last daemon update a robot tried.
type DaemonResult struct {
	Version string    `json:"version"`
	Result  string    `json:"result"`
	Error   string    `json:"error,omitempty"`
	Time    time.Time `json:"time"`
}

// AppStatus is one installed app in a robot's status.
type AppStatus struct {
	Name     string `json:"name"`
	Space    string `json:"space,omitempty"`    // owner/name when it came from a hub space
	Revision string `json:"revision,omitempty"` // the installed commit
}

// The results of an update a robot reports.
const (
	ResultDone       = "done"       // installed (and restarted if it ran)
	ResultFailed     = "failed"     // the update job failed: the installed version runs on
	ResultRefused    = "refused"    // the hub the robot trusts does not have the revision
	ResultSuperseded = "superseded" // the hub's head has moved past the revision: its own announcement follows
)

// UpdateResult is the outcome of the last update a robot tried.
type UpdateResult struct {
	Space    string    `json:"space"`
	Revision string    `json:"revision"`
	Result   string    `json:"result"` // one of the Result constants
	Error    string    `json:"error,omitempty"`
	Time     time.Time `json:"time"`
}

// Status is what a robot reports about itself, retained on its status topic.
type Status struct {
	V          int           `json:"v"`
	Robot      string        `json:"robot"` // the id: its topic level and MQTT client id
	Name       string        `json:"name"`  // a human name, free text
	Daemon     string        `json:"daemon"`
	Time       time.Time     `json:"time"` // when the robot wrote it
	Apps       []AppStatus   `json:"apps"`
	Running    string        `json:"running,omitempty"`
	LastUpdate *UpdateResult `json:"lastUpdate,omitempty"`
	// LastDaemonUpdate is the last daemon update the robot tried (by the fleet or by hand).
	LastDaemonUpdate *DaemonResult `json:"lastDaemonUpdate,omitempty"`
}

// App returns the robot's app of space and whether it has one.
func (s Status) App(space string) (AppStatus, bool) {
	for _, a := range s.Apps {
		if a.Space == space {
			return a, true
		}
	}
	return AppStatus{}, false
}

// Presence says whether a robot is connected. The robot publishes it online when it connects; its
// will message, which the broker publishes when the robot goes away without a goodbye, says offline.
type Presence struct {
	V      int       `json:"v"`
	Robot  string    `json:"robot"`
	Online bool      `json:"online"`
	Since  time.Time `json:"since"` // when the connection that this is about was made
}

// Rollout states.
const (
	RolloutCanary   = "canary"   // the canary wave is out; the rest waits on it
	RolloutComplete = "complete" // every wave is out
	RolloutHalted   = "halted"   // the canary's failures passed the threshold: the rest stays where it is
)

// Rollout is the publisher's record of a space's rollout, retained on its rollout topic: the wave
// state lives there and in the retained wave messages, so a publisher that restarts picks it up.
type Rollout struct {
	V          int       `json:"v"`
	ID         string    `json:"id"`
	Space      string    `json:"space,omitempty"`
	Revision   string    `json:"revision,omitempty"`
	Daemon     string    `json:"daemon,omitempty"` // a daemon release's rollout: its version
	Repo       string    `json:"repo,omitempty"`
	State      string    `json:"state"`
	Plan       Plan      `json:"plan"`
	Started    time.Time `json:"started"`
	Updated    time.Time `json:"updated"`
	Planned    []string  `json:"planned,omitempty"` // the canary robots counted from a settled view of the fleet
	Heard      int       `json:"heard"`             // how many canary robots reported (done or failed) when judged
	Done       []string  `json:"done,omitempty"`    // canary robots that run the revision
	Failed     []string  `json:"failed,omitempty"`  // canary robots whose update failed or was refused
	Reason     string    `json:"reason,omitempty"`  // why it halted
	Superseded string    `json:"supersededBy,omitempty"`
}

// CatalogChange says that a push changed an app of the store: a space tagged robot_python_app.
// The publisher keeps the last one retained on the catalog topic; a robot refreshes its catalog.
type CatalogChange struct {
	V        int       `json:"v"`
	Space    string    `json:"space"`
	Revision string    `json:"revision"`
	Time     time.Time `json:"time"`
}

// ParseCatalogChange reads and checks a catalog change message.
func ParseCatalogChange(data []byte) (CatalogChange, error) {
	var c CatalogChange
	if err := unmarshal(data, &c, "catalog"); err != nil {
		return CatalogChange{}, err
	}
	if c.V != Version {
		return CatalogChange{}, fmt.Errorf("catalog message: version %d, want %d", c.V, Version)
	}
	if err := CheckSpace(c.Space); err != nil {
		return CatalogChange{}, fmt.Errorf("catalog message: %w", err)
	}
	if err := CheckRevision(c.Revision); err != nil {
		return CatalogChange{}, fmt.Errorf("catalog message: %w", err)
	}
	return c, nil
}

// key is what the rollout is of: the space, or "daemon".
func (r Rollout) key() string { return r.update(0, 0, 0).key() }

// update is the rollout's wave message for buckets [from, to).
func (r Rollout) update(k, from, to int) Update {
	return Update{V: Version, Space: r.Space, Revision: r.Revision, Daemon: r.Daemon, Repo: r.Repo, Rollout: r.ID, Wave: k, From: from, To: to}
}

// Marshal encodes a message.
func Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// ParseUpdate reads and checks an update message.
func ParseUpdate(data []byte) (Update, error) {
	var u Update
	if err := unmarshal(data, &u, "update"); err != nil {
		return Update{}, err
	}
	return u, u.Check()
}

// ParseStatus reads and checks a status message.
func ParseStatus(data []byte) (Status, error) {
	var s Status
	if err := unmarshal(data, &s, "status"); err != nil {
		return Status{}, err
	}
	if s.V != Version {
		return Status{}, fmt.Errorf("status message: version %d, want %d", s.V, Version)
	}
	if err := CheckRobotID(s.Robot); err != nil {
		return Status{}, fmt.Errorf("status message: %w", err)
	}
	return s, nil
}

// ParsePresence reads and checks a presence message.
func ParsePresence(data []byte) (Presence, error) {
	var p Presence
	if err := unmarshal(data, &p, "presence"); err != nil {
		return Presence{}, err
	}
	if p.V != Version {
		return Presence{}, fmt.Errorf("presence message: version %d, want %d", p.V, Version)
	}
	if err := CheckRobotID(p.Robot); err != nil {
		return Presence{}, fmt.Errorf("presence message: %w", err)
	}
	return p, nil
}

// ParseRollout reads and checks a rollout record.
func ParseRollout(data []byte) (Rollout, error) {
	var r Rollout
	if err := unmarshal(data, &r, "rollout"); err != nil {
		return Rollout{}, err
	}
	if r.V != Version {
		return Rollout{}, fmt.Errorf("rollout record: version %d, want %d", r.V, Version)
	}
	if r.Daemon != "" {
		if err := CheckDaemonRelease(r.Daemon, r.Repo); err != nil {
			return Rollout{}, fmt.Errorf("rollout record: %w", err)
		}
		return r, nil
	}
	if err := CheckSpace(r.Space); err != nil {
		return Rollout{}, fmt.Errorf("rollout record: %w", err)
	}
	if err := CheckRevision(r.Revision); err != nil {
		return Rollout{}, fmt.Errorf("rollout record: %w", err)
	}
	return r, nil
}

// unmarshal decodes one JSON object: the encoding/json v2 decoder refuses duplicate names, invalid
// UTF-8 and trailing data; unknown names are ignored, so that a newer writer's additions pass.
func unmarshal(data []byte, v any, what string) error {
	if len(data) > MaxMessageBytes {
		return fmt.Errorf("%s message: %d bytes, over the %d-byte limit", what, len(data), MaxMessageBytes)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s message: %v", what, err)
	}
	return nil
}
