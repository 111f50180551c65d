package apps

import (
	"cmp"
	"strings"

	"github.com/robothub/robothub/core/apps/origin"
)

// Where an installed app came from is kept as what stays true across runs. A hub space is the hub
// and the space's ID (<owner>/<name>), and the hub is kept as "the daemon's own" (--hub-url) when it
// was: `robothub dev` on other ports gives the same local hub another URL, and an app installed
// from http://127.0.0.1:7861/spaces/local/my_app must then update from the hub's new address, not
// clone from a port nothing listens on. Other sources (git URLs, local folders) are kept as given.

// recordSpace fills in rec's hub and space from its source, when it is a hub space: the hub is
// left empty ("the daemon's own") when it is the daemon's hub, or, for records written before the
// space was kept (migrate), when both are on this machine: a local hub that moved to another port
// is still the daemon's. It reports whether rec changed.
func (m *Manager) recordSpace(rec *installRecord, migrate bool) bool {
	if rec.SourceKind != SourceHubSpace || rec.Space != "" {
		return false
	}
	hub, space, ok := origin.SpaceOf(rec.Source)
	if !ok {
		return false
	}
	rec.Space, rec.Hub = space, hub
	if own := m.cfg.HubURL; own != "" && (origin.SameHub(hub, own) || (migrate && origin.OnThisMachine(hub) && origin.OnThisMachine(own))) {
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
