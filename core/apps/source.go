package apps

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/robothub/robothub/core/fault"
)

// installTempPrefix names the temporary directory of an install job.
const installTempPrefix = "robot-app-install-"

// source is where an install takes its package from.
type source struct {
	shown    string     // as logged and stored: credentials redacted
	kind     SourceKind // hub_space, git or local
	cloneURL string     // for hub_space and git
	path     string     // for local
	token    string     // a hub token for this install only (install-private-space); never logged
}

var (
	hubSpacePath = regexp.MustCompile(`^/spaces/[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*/?$`)
	scpGitURL    = regexp.MustCompile(`^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[A-Za-z0-9._/~-]+$`)
)

// parseSource classifies an app's url: a hub space URL (<hub>/spaces/<user>/<app>), another git
// URL, or an absolute path to a directory on the robot.
func parseSource(raw string) (source, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return source{}, fault.Invalidf("url: required: a hub space URL (<hub>/spaces/<user>/<app>), a git URL or an absolute local path")
	case len(s) > 2048:
		return source{}, fault.Invalidf("url: longer than 2048 characters")
	case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' }):
		return source{}, fault.Invalidf("url: must not contain spaces or control characters")
	case strings.HasPrefix(s, "-"):
		return source{}, fault.Invalidf("url: must not start with '-'")
	}
	if strings.HasPrefix(s, "file://") {
		u, err := url.Parse(s)
		if err != nil || u.Path == "" {
			return source{}, fault.Invalidf("url: %s is not a valid file:// URL", s)
		}
		s = u.Path
	}
	if strings.HasPrefix(s, "/") {
		clean := filepath.Clean(s)
		info, err := os.Stat(clean)
		if err != nil || !info.IsDir() {
			return source{}, fault.Invalidf("url: local path %s is not a directory on the robot", clean)
		}
		// Checked before a job copies the directory, which for / would be the whole disk.
		if !isPackage(clean) {
			return source{}, fault.Invalidf("url: local path %s is not a Python package: it has no pyproject.toml or setup.py", clean)
		}
		return source{shown: clean, kind: SourceLocal, path: clean}, nil
	}
	if scpGitURL.MatchString(s) {
		return source{shown: s, kind: SourceGit, cloneURL: s}, nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return source{}, fault.Invalidf("url: %s is not a hub space URL, a git URL or an absolute local path", truncate(s, 200))
	}
	if !slices.Contains([]string{"http", "https", "ssh", "git"}, u.Scheme) {
		return source{}, fault.Invalidf("url: scheme %s is not one of http, https, ssh, git, file", u.Scheme)
	}
	kind := SourceGit
	if strings.HasPrefix(u.Scheme, "http") && hubSpacePath.MatchString(u.Path) && u.RawQuery == "" && u.Fragment == "" {
		kind = SourceHubSpace
		u.Path = strings.TrimSuffix(u.Path, "/")
	}
	return source{shown: RedactURL(u.String()), kind: kind, cloneURL: u.String()}, nil
}

func isPackage(dir string) bool {
	return exists(filepath.Join(dir, "pyproject.toml")) || exists(filepath.Join(dir, "setup.py"))
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
