package apps

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"

	"github.com/robothub/robothub/core/fault"
)

// revisionPattern is a git commit name: 7 to 64 hex digits (SHA-1 or SHA-256, possibly abbreviated).
var revisionPattern = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// Update starts a job that brings the apps installed from rawURL up to date: unless every one of
// them is already at revision (when given), it installs the package again from rawURL, then, if the
// running app is one of them, restarts it so that it runs the new code. This is what a push to an
// app's space triggers. The same update delivered twice installs once: the second job finds the
// apps at that revision.
//
// rawURL must be the source of at least one installed app (as AppInfo.Extra.Source shows it).
func (m *Manager) Update(rawURL, revision string) (*Job, error) {
	src, err := parseSource(rawURL)
	if err != nil {
		return nil, err
	}
	revision = strings.ToLower(strings.TrimSpace(revision))
	if revision != "" && !revisionPattern.MatchString(revision) {
		return nil, fault.Invalidf("revision: %s is not a git commit (7 to 64 hex digits)", truncate(revision, 80))
	}
	if len(m.appsFrom(src.shown)) == 0 {
		return nil, fault.NotFoundf("No installed app comes from %s: install it first", src.shown)
	}
	return m.startJob("update", src.shown, func(ctx context.Context, job *Job) ([]string, error) { return m.update(ctx, job, src, revision) }), nil
}

func (m *Manager) update(ctx context.Context, job *Job, src source, revision string) ([]string, error) {
	before := m.appsFrom(src.shown)
	if revision != "" && len(before) > 0 {
		upToDate := true
		var names []string
		for _, a := range before {
			names = append(names, a.Name)
			upToDate = upToDate && strings.HasPrefix(a.Extra.Revision, revision)
		}
		if upToDate {
			job.Logf("%s already at revision %s: nothing to do", strings.Join(names, ", "), revision)
			return names, nil
		}
	}
	names, err := m.install(ctx, job, src, true)
	if err != nil {
		return nil, err
	}
	if st := m.Status(); st != nil && st.State.Active() && slices.Contains(names, st.Info.Name) {
		job.Logf("Restarting %s to run the new version", st.Info.Name)
		if _, err := m.Restart(); err != nil {
			return names, fmt.Errorf("installed, but restarting %s failed: %w", st.Info.Name, err)
		}
	}
	return names, nil
}

// appsFrom returns the installed apps whose recorded source is shown.
func (m *Manager) appsFrom(shown string) []AppInfo {
	var out []AppInfo
	for _, a := range m.installed().list {
		if a.Extra.Source == shown {
			out = append(out, a)
		}
	}
	return out
}

// gitHead returns the commit checked out in a git work tree.
func gitHead(ctx context.Context, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
