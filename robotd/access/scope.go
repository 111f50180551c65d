package access

import (
	"net/http"
	"strings"
)

// Scope is a set of the API's parts that a credential may use.
type Scope uint8

const (
	// ScopeRobot drives the robot: its state, moves, motors, recorded moves, kinematics, look-at,
	// the speech wobble and head tracking, SDK sessions, and the daemon's read-only status.
	ScopeRobot Scope = 1 << iota
	// ScopeMedia reads and plays the robot's media: camera, microphones, speaker, volume, WebRTC.
	ScopeMedia
	// ScopeApps changes the robot's apps: install, update, remove, start, stop, the startup app,
	// and reads their list, jobs and logs.
	ScopeApps
	// ScopeDaemon changes the daemon itself: its name, its backend, its hub login and token.
	ScopeDaemon
)

// OwnerScopes are the owner's: its token, its login cookie and its socket use all of the API.
const OwnerScopes = ScopeRobot | ScopeMedia | ScopeApps | ScopeDaemon

// AppScopes are a running app's (the token the daemon mints for it at each start): it drives the
// robot and its media, as the public SDK does, and changes neither the apps nor the daemon.
const AppScopes = ScopeRobot | ScopeMedia

var scopeNames = []struct {
	s    Scope
	name string
}{{ScopeRobot, "robot"}, {ScopeMedia, "media"}, {ScopeApps, "apps"}, {ScopeDaemon, "daemon"}}

func (s Scope) String() string {
	var names []string
	for _, n := range scopeNames {
		if s&n.s != 0 {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// scopeRules give each route of the API (a ServeMux pattern) the scope it needs: the first rule
// whose method (empty: any) and path prefix match. A route no rule names needs ScopeDaemon, so a
// route added later is the owner's until it is given a scope here; docs/robot-api.md lists them.
var scopeRules = []struct {
	method, prefix string
	scope          Scope
}{
	{http.MethodGet, "/api/daemon/status", ScopeRobot},
	{http.MethodGet, "/api/daemon/robot-name", ScopeRobot},
	{http.MethodGet, "/api/daemon/hardware-id", ScopeRobot},
	{http.MethodGet, "/api/daemon/robot-app-lock-status", ScopeRobot},
	{"", "/api/daemon/", ScopeDaemon},
	{"", "/api/hf-auth/", ScopeDaemon},
	{"", "/api/apps/", ScopeApps},
	{"", "/api/media/wobbling/", ScopeRobot},
	{"", "/api/media/tracking/", ScopeRobot},
	{"", "/api/state/", ScopeRobot},
	{"", "/api/move/", ScopeRobot},
	{"", "/api/motors/", ScopeRobot},
	{"", "/api/kinematics/", ScopeRobot},
	{"", "/api/sim/", ScopeRobot},
	{"", "/api/sessions", ScopeRobot},
	{"", "/api/camera/", ScopeMedia},
	{"", "/api/audio/", ScopeMedia},
	{"", "/api/media/", ScopeMedia},
	{"", "/api/volume/", ScopeMedia},
}

// ScopeOf is the scope a route needs, from its ServeMux pattern ("POST /api/apps/install"): 0 for
// what is not an API route, and for "/api/" itself (the unknown route's 404).
func ScopeOf(pattern string) Scope {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "", pattern
	}
	if !strings.HasPrefix(path, "/api/") || path == "/api/" {
		return 0
	}
	for _, r := range scopeRules {
		if (r.method == "" || r.method == method) && strings.HasPrefix(path, r.prefix) {
			return r.scope
		}
	}
	return ScopeDaemon
}
