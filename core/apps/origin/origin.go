// Package origin is where an app's package comes from: a space on a hub (<hub>/spaces/<owner>/<name>),
// another git repository, or a folder on the robot; how such an address is checked (Parse), how two
// of them are compared across runs, and how it shows in logs and answers with its credentials hidden.
package origin

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub"
)

// Kind is the kind of an app's source, as the public daemon's AppInfo names it.
type Kind string

// The kinds Parse tells apart.
const (
	HubSpace Kind = "hf_space" // a space on the hub: <hub>/spaces/<user>/<app>
	Local    Kind = "local"    // a directory on the robot
	// Git is another git repository (not a hub space): cloned, as a space is. An extension of
	// the public daemon's kinds, which has no plain git source.
	Git Kind = "git"
)

// Source is where an install takes its package from.
type Source struct {
	Shown    string // as logged and stored: credentials redacted
	Kind     Kind   // hub space, git or local
	CloneURL string // for a hub space and git
	Path     string // for local
	Token    string // a hub token for this install only (install-private-space); never logged
}

var (
	hubSpacePath = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^/spaces/[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*/?$`)
	})
	scpGitURL = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[A-Za-z0-9._/~-]+$`) })
)

// Parse classifies an app's url: a hub space URL (<hub>/spaces/<user>/<app>), another git
// URL, or an absolute path to a directory on the robot.
func Parse(raw string) (Source, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return Source{}, fault.Invalidf("url: required: a hub space URL (<hub>/spaces/<user>/<app>), a git URL or an absolute local path")
	case len(s) > 2048:
		return Source{}, fault.Invalidf("url: longer than 2048 characters")
	case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' }):
		return Source{}, fault.Invalidf("url: must not contain spaces or control characters")
	case strings.HasPrefix(s, "-"):
		return Source{}, fault.Invalidf("url: must not start with '-'")
	}
	if strings.HasPrefix(s, "file://") {
		u, err := url.Parse(s)
		if err != nil || u.Path == "" {
			return Source{}, fault.Invalidf("url: %s is not a valid file:// URL", s)
		}
		s = u.Path
	}
	if strings.HasPrefix(s, "/") {
		clean := filepath.Clean(s)
		info, err := os.Stat(clean)
		if err != nil || !info.IsDir() {
			return Source{}, fault.Invalidf("url: local path %s is not a directory on the robot", clean)
		}
		// Checked before a job copies the directory, which for / would be the whole disk.
		if !IsPackage(clean) {
			return Source{}, fault.Invalidf("url: local path %s is not a Python package: it has no pyproject.toml or setup.py", clean)
		}
		return Source{Shown: clean, Kind: Local, Path: clean}, nil
	}
	if scpGitURL().MatchString(s) {
		return Source{Shown: s, Kind: Git, CloneURL: s}, nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return Source{}, fault.Invalidf("url: %s is not a hub space URL, a git URL or an absolute local path", truncate(s, 200))
	}
	if !slices.Contains([]string{"http", "https", "ssh", "git"}, u.Scheme) {
		return Source{}, fault.Invalidf("url: scheme %s is not one of http, https, ssh, git, file", u.Scheme)
	}
	kind := Git
	if strings.HasPrefix(u.Scheme, "http") && hubSpacePath().MatchString(u.Path) && u.RawQuery == "" && u.Fragment == "" {
		kind = HubSpace
		u.Path = strings.TrimSuffix(u.Path, "/")
	}
	return Source{Shown: RedactURL(u.String()), Kind: kind, CloneURL: u.String()}, nil
}

// IsPackage reports whether dir holds a Python package: a pyproject.toml or a setup.py.
func IsPackage(dir string) bool {
	return exists(filepath.Join(dir, "pyproject.toml")) || exists(filepath.Join(dir, "setup.py"))
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Where an installed app came from is kept as what stays true across runs. A hub space is the hub
// and the space's ID (<owner>/<name>), and the hub is kept as "the daemon's own" (--hub-url) when it
// was: `robothub dev` on other ports gives the same local hub another URL, and an app installed
// from http://127.0.0.1:7861/spaces/local/my_app must then update from the hub's new address, not
// clone from a port nothing listens on. Other sources (git URLs, local folders) are kept as given.

// SpaceOf splits a hub space URL (<hub>/spaces/<owner>/<name>, as Parse classifies one)
// into the hub's base URL and the space ID.
func SpaceOf(spaceURL string) (hub, space string, ok bool) {
	u, err := url.Parse(spaceURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || !hubSpacePath().MatchString(u.Path) ||
		u.RawQuery != "" || u.Fragment != "" {
		return "", "", false
	}
	space = strings.TrimPrefix(strings.TrimSuffix(u.Path, "/"), "/spaces/")
	u.Path, u.RawPath = "", ""
	return u.String(), space, true
}

// SameHub reports whether two hub base URLs name the same hub: scheme, host (any case) and path.
func SameHub(a, b string) bool {
	ua, errA := url.Parse(strings.TrimRight(a, "/"))
	ub, errB := url.Parse(strings.TrimRight(b, "/"))
	return errA == nil && errB == nil && ua.Host != "" &&
		strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host) && ua.Path == ub.Path
}

// OnThisMachine reports whether a hub URL's host is a loopback address or localhost.
func OnThisMachine(hubURL string) bool {
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

// Same reports whether two sources, as AppInfo.Extra.Source shows them, are the same: hub
// spaces by hub and space ID, others by their text.
func Same(a, b string) bool {
	if a == b {
		return true
	}
	hubA, spaceA, okA := SpaceOf(a)
	hubB, spaceB, okB := SpaceOf(b)
	return okA && okB && spaceA == spaceB && SameHub(hubA, hubB)
}

// RedactURL hides the credentials of a URL by the rule of hub.RedactUserinfo (the whole user
// information becomes "xxxxx"), for logs, API answers and errors. An scp-style git address
// (git@host:path) keeps its user: an SSH login name, not a credential.
func RedactURL(raw string) string {
	if u, err := url.Parse(raw); err != nil {
		return RedactText(raw)
	} else if u.User != nil {
		return hub.RedactUserinfo(u)
	}
	return raw
}

// urlWithUserinfo finds URLs with credentials in text, to the authority's last @ (passwords hold @).
var urlWithUserinfo = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s?#'"]*@`) })

// RedactText hides the credentials of every URL in s, whole, as RedactURL does.
func RedactText(s string) string {
	return urlWithUserinfo().ReplaceAllString(s, "${1}xxxxx@")
}
