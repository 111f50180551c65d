package apps

import (
	"cmp"
	"net"
	"net/url"
	"strings"
)

// Where an installed app came from is kept as what stays true across runs. A hub space is the hub
// and the space's ID (<owner>/<name>), and the hub is kept as "the daemon's own" (--hub-url) when it
// was: `robothub dev` on other ports gives the same local hub another URL, and an app installed
// from http://127.0.0.1:7861/spaces/local/my_app must then update from the hub's new address, not
// clone from a port nothing listens on. Other sources (git URLs, local folders) are kept as given.

// spaceOf splits a hub space URL (<hub>/spaces/<owner>/<name>, as parseSource classifies one)
// into the hub's base URL and the space ID.
func spaceOf(spaceURL string) (hub, space string, ok bool) {
	u, err := url.Parse(spaceURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || !hubSpacePath.MatchString(u.Path) ||
		u.RawQuery != "" || u.Fragment != "" {
		return "", "", false
	}
	space = strings.TrimPrefix(strings.TrimSuffix(u.Path, "/"), "/spaces/")
	u.Path, u.RawPath = "", ""
	return u.String(), space, true
}

// sameHub reports whether two hub base URLs name the same hub: scheme, host (any case) and path.
func sameHub(a, b string) bool {
	ua, errA := url.Parse(strings.TrimRight(a, "/"))
	ub, errB := url.Parse(strings.TrimRight(b, "/"))
	return errA == nil && errB == nil && ua.Host != "" &&
		strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host) && ua.Path == ub.Path
}

// onThisMachine reports whether a hub URL's host is a loopback address or localhost.
func onThisMachine(hubURL string) bool {
	u, err := url.Parse(hubURL)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// recordSpace fills in rec's hub and space from its source, when it is a hub space: the hub is
// left empty ("the daemon's own") when it is the daemon's hub, or, for records written before the
// space was kept (migrate), when both are on this machine: a local hub that moved to another port
// is still the daemon's. It reports whether rec changed.
func (m *Manager) recordSpace(rec *installRecord, migrate bool) bool {
	if rec.SourceKind != SourceHubSpace || rec.Space != "" {
		return false
	}
	hub, space, ok := spaceOf(rec.Source)
	if !ok {
		return false
	}
	rec.Space, rec.Hub = space, hub
	if own := m.cfg.HubURL; own != "" && (sameHub(hub, own) || (migrate && onThisMachine(hub) && onThisMachine(own))) {
		rec.Hub = ""
	}
	return true
}

// sourceOf is where an installed app updates from now: its space on its hub (the daemon's hub as
// it is configured today, for an app installed from the daemon's hub), else its source as given.
func (m *Manager) sourceOf(rec installRecord) string {
	if rec.SourceKind == SourceHubSpace && rec.Space != "" {
		if hub := cmp.Or(rec.Hub, m.cfg.HubURL); hub != "" {
			return strings.TrimRight(hub, "/") + "/spaces/" + rec.Space
		}
	}
	return rec.Source
}

// sameSource reports whether two sources, as AppInfo.Extra.Source shows them, are the same: hub
// spaces by hub and space ID, others by their text.
func sameSource(a, b string) bool {
	if a == b {
		return true
	}
	hubA, spaceA, okA := spaceOf(a)
	hubB, spaceB, okB := spaceOf(b)
	return okA && okB && spaceA == spaceB && sameHub(hubA, hubB)
}
