// Package fleet is what a fleet of robots and its publishers agree on, whatever carries it: the
// topics, the versioned JSON messages (an update announced for a space, a robot's status and
// presence, a rollout's record), the rollout waves and their rules, and the robot's side of them
// (Agent). It holds no MQTT client: adapters/mqtt carries these messages over a broker.
package fleet

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// DefaultPrefix is the first two levels of every fleet topic: the project, and the major version
// of the messages, so that a fleet can move to v2 messages beside v1 ones.
const DefaultPrefix = "robothub/v1"

// Topics builds and reads the fleet's topic names under a prefix (DefaultPrefix when empty).
//
//	<prefix>/spaces/<owner>/<name>/wave/<k>   retained Update of wave k of the space's rollout
//	<prefix>/spaces/<owner>/<name>/rollout    retained Rollout record, written by the publisher
//	<prefix>/spaces/catalog                   retained CatalogChange: an app of the store was pushed
//	<prefix>/daemon/wave/<k>                  retained Update of wave k of a daemon release's rollout
//	<prefix>/daemon/rollout                   retained Rollout record of the daemon's rollout
//	<prefix>/robots/<id>/status               retained Status of one robot, written by that robot
//	<prefix>/robots/<id>/online               retained Presence; the robot's will sets it offline
//
// Every name stays within AWS IoT Core's limits (256 bytes, 7 slashes) for hub names and robot ids
// of the lengths Check allows.
type Topics struct{ Prefix string }

func (t Topics) prefix() string {
	if t.Prefix == "" {
		return DefaultPrefix
	}
	return strings.TrimRight(t.Prefix, "/")
}

// Wave is the topic of wave k of space's rollout.
func (t Topics) Wave(space string, k int) string {
	return t.prefix() + "/spaces/" + space + "/wave/" + strconv.Itoa(k)
}

// Waves is the filter of every wave of space: what a robot with an app of space subscribes to.
func (t Topics) Waves(space string) string { return t.prefix() + "/spaces/" + space + "/wave/+" }

// Catalog is the topic every robot reads to learn that the app store (the hub's spaces tagged
// robot_python_app) changed, so that it lists a new app at once rather than when its cache expires.
func (t Topics) Catalog() string { return t.prefix() + "/spaces/catalog" }

// Rollout is the topic of space's rollout record.
func (t Topics) Rollout(space string) string { return t.prefix() + "/spaces/" + space + "/rollout" }

// AllRollouts is the filter of every space's rollout record.
func (t Topics) AllRollouts() string { return t.prefix() + "/spaces/+/+/rollout" }

// DaemonWave is the topic of wave k of a daemon release's rollout.
func (t Topics) DaemonWave(k int) string { return t.prefix() + "/daemon/wave/" + strconv.Itoa(k) }

// DaemonWaves is the filter of every wave of a daemon release: what every robot subscribes to.
func (t Topics) DaemonWaves() string { return t.prefix() + "/daemon/wave/+" }

// DaemonRollout is the topic of the daemon's rollout record.
func (t Topics) DaemonRollout() string { return t.prefix() + "/daemon/rollout" }

// ParseDaemonWave reads a daemon wave topic: its wave number.
func (t Topics) ParseDaemonWave(topic string) (k int, ok bool) {
	rest, found := strings.CutPrefix(topic, t.prefix()+"/daemon/wave/")
	if !found {
		return 0, false
	}
	k, err := strconv.Atoi(rest)
	return k, err == nil && k >= 0 && k < MaxWaves
}

// waveOf is the topic of wave k of rollout r.
func (t Topics) waveOf(r Rollout, k int) string {
	if r.Daemon != "" {
		return t.DaemonWave(k)
	}
	return t.Wave(r.Space, k)
}

// rolloutOf is the topic of r's record.
func (t Topics) rolloutOf(r Rollout) string {
	if r.Daemon != "" {
		return t.DaemonRollout()
	}
	return t.Rollout(r.Space)
}

// Status is the topic of robot's status.
func (t Topics) Status(robot string) string { return t.prefix() + "/robots/" + robot + "/status" }

// Online is the topic of robot's presence.
func (t Topics) Online(robot string) string { return t.prefix() + "/robots/" + robot + "/online" }

// AllRobots is the filter of every robot's status and presence.
func (t Topics) AllRobots() string { return t.prefix() + "/robots/+/+" }

// ParseWave reads a wave topic: its space and wave number.
func (t Topics) ParseWave(topic string) (space string, k int, ok bool) {
	rest, found := strings.CutPrefix(topic, t.prefix()+"/spaces/")
	if !found {
		return "", 0, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 4 || parts[2] != "wave" {
		return "", 0, false
	}
	k, err := strconv.Atoi(parts[3])
	if err != nil || k < 0 || k >= MaxWaves {
		return "", 0, false
	}
	space = parts[0] + "/" + parts[1]
	return space, k, CheckSpace(space) == nil
}

// ParseRobot reads a robot topic: the robot's id and the kind ("status" or "online").
func (t Topics) ParseRobot(topic string) (robot, kind string, ok bool) {
	rest, found := strings.CutPrefix(topic, t.prefix()+"/robots/")
	if !found {
		return "", "", false
	}
	robot, kind, found = strings.Cut(rest, "/")
	if !found || CheckRobotID(robot) != nil || (kind != "status" && kind != "online") {
		return "", "", false
	}
	return robot, kind, true
}

// The patterns are compiled at their first use, not when the process starts: one that never checks
// them (a Lambda's cold start, robothub --version) saved 0.8 ms of package init (GODEBUG=inittrace=1).
var (
	// A hub repository's owner and name: what the hub accepts, which excludes MQTT's wildcards.
	spacePart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$`) })
	// A robot id is a topic level and the client id: AWS IoT allows 128 bytes of client id.
	robotID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })
	// A revision is a full git commit name: a fleet never installs "whatever an abbreviation means".
	fullRevision = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`) })
)

// CheckSpace reports whether space is a hub space id, owner/name.
func CheckSpace(space string) error {
	owner, name, ok := strings.Cut(space, "/")
	if !ok || !spacePart().MatchString(owner) || !spacePart().MatchString(name) || strings.Contains(name, "..") || strings.Contains(owner, "..") {
		return fmt.Errorf("space %q is not owner/name (letters, digits, '.', '_', '-')", clip(space))
	}
	return nil
}

// CheckRobotID reports whether id can name a robot: 1 to 64 letters, digits, '.', '_' or '-',
// starting with a letter or digit (it is a topic level and the MQTT client id).
func CheckRobotID(id string) error {
	if !robotID().MatchString(id) {
		return fmt.Errorf("robot id %q: want 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", clip(id))
	}
	return nil
}

// CheckRevision reports whether rev is a full git commit name (40 or 64 lowercase hex digits).
func CheckRevision(rev string) error {
	if !fullRevision().MatchString(rev) {
		return fmt.Errorf("revision %q is not a full git commit name (40 or 64 lowercase hex digits)", clip(rev))
	}
	return nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
