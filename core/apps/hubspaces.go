package apps

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/robothub/robothub/core/apps/catalog"
	"github.com/robothub/robothub/core/apps/origin"
	"github.com/robothub/robothub/core/fault"
)

// ErrNoHubToken is returned when a private space is asked for and the daemon has no hub token.
var ErrNoHubToken = errors.New("no hub token: set HF_TOKEN (or the hub's token file) in the daemon's environment to install private spaces")

// SpaceIDPattern is a space ID on the hub: <user>/<space>.
var SpaceIDPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)
})

// InstallPrivateSpaceWithToken starts a job that installs the space spaceID ("<user>/<app>") of the
// daemon's hub, git reading it with token (else the daemon's hub token): install-private-space.
// The token is not stored: update checks and updates of the space need the daemon's own token.
func (m *Manager) InstallPrivateSpaceWithToken(spaceID, token string) (*Job, error) {
	spaceID = strings.TrimSpace(spaceID)
	if !SpaceIDPattern().MatchString(spaceID) {
		return nil, fault.Invalidf("space_id: %s is not <user>/<space>", truncate(spaceID, 100))
	}
	if m.cfg.HubURL == "" {
		return nil, fault.Refusedf("No hub is configured (--hub-url none): private spaces cannot be installed")
	}
	if token = cmp.Or(strings.TrimSpace(token), m.cfg.HubToken); token == "" {
		return nil, ErrNoHubToken
	}
	src, err := origin.Parse(strings.TrimRight(m.cfg.HubURL, "/") + "/spaces/" + spaceID)
	if err != nil {
		return nil, err
	}
	src.Token = token
	return m.installSource(src), nil
}

// gitAuthEnv gives git the hub token as an Authorization header for the hub's URLs only, when src
// is on the daemon's hub, in GIT_CONFIG_* variables: never on a command line (ps shows those), in
// .git/config or in a log.
func (m *Manager) gitAuthEnv(src source) []string {
	token := cmp.Or(src.Token, m.cfg.HubToken)
	if token == "" || m.cfg.HubURL == "" || src.Kind != SourceHubSpace {
		return nil
	}
	hub, err := url.Parse(strings.TrimRight(m.cfg.HubURL, "/"))
	if err != nil {
		return nil
	}
	u, err := url.Parse(src.CloneURL)
	if err != nil || u.Scheme != hub.Scheme || u.Host != hub.Host || u.User != nil {
		return nil
	}
	basic := base64.StdEncoding.EncodeToString([]byte("user:" + token))
	return []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http." + hub.String() + "/.extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + basic,
	}
}

// UpdateApp updates app name from its recorded source (see Update): the anchor's update/{app_name}.
func (m *Manager) UpdateApp(name string) (*Job, error) {
	info, err := m.App(name)
	if err != nil {
		return nil, err
	}
	if info.Extra.Source == "" {
		return nil, fault.Refusedf("App '%s' was not installed through the daemon: it has no source to update from", name)
	}
	return m.Update(info.Extra.Source, "")
}

// AppUpdateStatus is the update check of one app (the anchor's shape).
type AppUpdateStatus struct {
	AppName         string  `json:"app_name"`
	SpaceID         string  `json:"space_id"`
	InstalledSHA    string  `json:"installed_sha"`
	LatestSHA       string  `json:"latest_sha"`
	UpdateAvailable bool    `json:"update_available"`
	LastModified    *string `json:"last_modified"`
}

// AppUpdates answers an update check: apps with an update, how many were checked, how many not.
type AppUpdates struct {
	AppsWithUpdates []AppUpdateStatus `json:"apps_with_updates"`
	AppsChecked     int               `json:"apps_checked"`
	AppsSkipped     int               `json:"apps_skipped"`
	// Errors names the sources that could not be reached (our extension).
	Errors []string `json:"errors,omitempty"`
}

// updateCheckTTL is how long an update check is reused unless forced, as the anchor does.
const updateCheckTTL = 5 * time.Minute

type updateCache struct {
	mu      sync.Mutex
	at      time.Time
	result  *AppUpdates
	changed uint64 // installs since the result: any install makes it stale
}

// CheckUpdates compares installed revisions with their sources' heads (git ls-remote), cached.
func (m *Manager) CheckUpdates(ctx context.Context, force bool) (*AppUpdates, error) {
	c := &m.updates
	c.mu.Lock()
	defer c.mu.Unlock()
	if !force && c.result != nil && time.Since(c.at) < updateCheckTTL && c.changed == m.installCount.Load() {
		return c.result, nil
	}
	bySource := map[string][]AppInfo{}
	res := &AppUpdates{AppsWithUpdates: []AppUpdateStatus{}}
	for _, a := range m.List() {
		if a.Extra.Revision == "" || (a.Extra.SourceKind != SourceHubSpace && a.Extra.SourceKind != SourceGit) {
			res.AppsSkipped++
			continue
		}
		bySource[a.Extra.Source] = append(bySource[a.Extra.Source], a)
	}
	for _, shown := range slices.Sorted(maps.Keys(bySource)) {
		list := bySource[shown]
		src, err := origin.Parse(shown)
		var head string
		if err == nil {
			head, err = m.remoteHead(ctx, src)
		}
		if err != nil {
			res.AppsSkipped += len(list)
			res.Errors = append(res.Errors, fmt.Sprintf("%s: %v", shown, err))
			m.log.Warn("checking for updates", "source", shown, "err", err)
			continue
		}
		id := src.Shown // "<user>/<space>" for a hub space
		if _, sid, ok := strings.Cut(src.CloneURL, "/spaces/"); ok && src.Kind == SourceHubSpace {
			id = sid
		}
		for _, a := range list {
			res.AppsChecked++
			if head != a.Extra.Revision {
				res.AppsWithUpdates = append(res.AppsWithUpdates, AppUpdateStatus{
					AppName: a.Name, SpaceID: id, InstalledSHA: a.Extra.Revision, LatestSHA: head, UpdateAvailable: true,
				})
			}
		}
	}
	c.result, c.at, c.changed = res, time.Now(), m.installCount.Load()
	return res, nil
}

func (m *Manager) remoteHead(ctx context.Context, src source) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "ls-remote", "--", src.CloneURL, "HEAD")
	cmd.Env = append(append(os.Environ(), "GIT_TERMINAL_PROMPT=0", gitProtocols), m.gitAuthEnv(src)...)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return "", fmt.Errorf("git ls-remote: %s", RedactText(strings.TrimSpace(string(ee.Stderr))))
	}
	if err != nil {
		return "", err
	}
	sha, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if !revisionPattern().MatchString(sha) {
		return "", fmt.Errorf("git ls-remote: no HEAD")
	}
	return sha, nil
}

// gitProtocols are the only protocols git may use for a URL from outside.
const gitProtocols = "GIT_ALLOW_PROTOCOL=http:https:ssh:git:file"

// revisionPattern is a git commit name: 7 to 64 hex digits (SHA-1 or SHA-256, possibly abbreviated).
var revisionPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{7,64}$`) })

// Update starts a job that brings the apps installed from rawURL (as AppInfo.Extra.Source shows
// it) up to date, as a push to an app's space triggers: unless all are already at revision (when
// given), it installs the package again, then restarts the running app if it is one of them. The
// same update delivered twice installs once.
func (m *Manager) Update(rawURL, revision string) (*Job, error) {
	src, err := origin.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	revision = strings.ToLower(strings.TrimSpace(revision))
	if revision != "" && !revisionPattern().MatchString(revision) {
		return nil, fault.Invalidf("revision: %s is not a git commit (7 to 64 hex digits)", truncate(revision, 80))
	}
	// A push to a space is news for the catalog too (a new app, a new title): whoever asks for an
	// update of a space, the app store fetches the catalog afresh next time.
	if src.Kind == SourceHubSpace {
		m.catalog.Invalidate()
	}
	from := m.appsFrom(src.Shown)
	if len(from) == 0 {
		return nil, fault.NotFoundf("No installed app comes from %s: install it first", src.Shown)
	}
	var names []string
	for _, a := range from {
		names = append(names, a.Name)
	}
	return m.startJob("update", src.Shown, names, func(ctx context.Context, job *Job) ([]string, error) {
		before := m.appsFrom(src.Shown)
		m.noteUpdate(before, UpdateRecord{JobID: job.ID(), Status: JobInProgress, Revision: revision, Started: time.Now().UTC()})
		names, err := m.update(ctx, job, src, revision, before)
		done := UpdateRecord{JobID: job.ID(), Status: JobDone, Revision: revision, Started: job.Info().Created.UTC(), Finished: new(time.Now().UTC())}
		if err != nil {
			done.Status, done.Error = JobFailed, RedactText(err.Error())
		} else if done.Revision == "" && len(names) > 0 {
			if a, err := m.App(names[0]); err == nil {
				done.Revision = a.Extra.Revision
			}
		}
		m.noteUpdate(before, done)
		return names, err
	}), nil
}

// noteUpdate records u as the last update of apps, and keeps it with their install records.
func (m *Manager) noteUpdate(apps []AppInfo, u UpdateRecord) {
	m.listMu.Lock()
	defer m.listMu.Unlock()
	changed := false
	for _, a := range apps {
		if rec, ok := m.records[a.Name]; ok {
			rec.LastUpdate = new(u)
			m.records[a.Name] = rec
			changed = true
		}
	}
	if !changed {
		return
	}
	if err := writeJSONAtomic(m.path(installedFile), m.records); err != nil {
		m.log.Warn("saving the last update of apps", "err", err)
	}
	set := m.apps.Load()
	m.buildLocked(set.found, set.stamp)
}

func (m *Manager) update(ctx context.Context, job *Job, src source, revision string, before []AppInfo) ([]string, error) {
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

func (m *Manager) appsFrom(shown string) []AppInfo {
	return slices.DeleteFunc(slices.Clone(m.installed().list), func(a AppInfo) bool { return !origin.Same(a.Extra.Source, shown) })
}

// AppTag is the README tag that makes a hub space an app of the catalog (catalog.AppTag).
const AppTag = catalog.AppTag
