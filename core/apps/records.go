package apps

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/google/renameio/v2/maybe"
)

// Files the manager keeps in its data directory.
const (
	installedFile  = "installed-apps.json" // where each installed app came from
	startupFile    = "startup-app.json"    // the startup app chosen through the API
	runningAppFile = "running-app.json"    // the app process running now, to find it after a crash
)

// installRecord is what the daemon remembers about an installed app beyond its entry point.
type installRecord struct {
	Source     string     `json:"source"` // as given at install (redacted); see Space and Hub
	SourceKind SourceKind `json:"source_kind"`
	// Space and Hub say which hub space a hub_space app came from: the space ID and the hub's base
	// URL, empty for the daemon's own hub (--hub-url), wherever it listens today (origin.go).
	Space       string    `json:"space,omitempty"`
	Hub         string    `json:"hub,omitempty"`
	Package     string    `json:"package"`
	Revision    string    `json:"revision,omitempty"` // the git commit installed, for git and hub space sources
	InstalledAt time.Time `json:"installed_at"`
	// Dependencies are the distributions (normalized names) that installs of Package brought into
	// the venv, or that it took over from a removed app: removing it removes those no other app needs.
	Dependencies []string `json:"dependencies,omitempty"`
	// LastUpdate is the app's last update job (a push to its space, or Update on the dashboard):
	// kept so that an update that failed in the background shows, with its error, after a restart too.
	LastUpdate *UpdateRecord `json:"last_update,omitempty"`
}

type startupConfig struct {
	StartupApp string `json:"startup_app"`
}

// runningApp identifies an app process well enough to find it again after a daemon crash.
type runningApp struct {
	Name    string `json:"name"`
	PID     int    `json:"pid"`
	Started int64  `json:"started_ms"` // the process start time (procinfo.Identity): guards against PID reuse
}

// readJSON decodes path into v; a missing file leaves v untouched and is not an error.
func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func writeJSONAtomic(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(data, '\n'))
}

// WriteFileAtomic replaces path with data so that a crash leaves either the old or the new file,
// never a torn one (renameio: a temporary file, synced, renamed over; a plain write on Windows,
// where no daemon runs). The daemon's state files and the toolchain's journal are written this
// way, readable by the daemon's user only.
func WriteFileAtomic(path string, data []byte) error {
	return maybe.WriteFile(path, data, 0o600)
}

// loadRecords reads installed-apps.json. One that cannot be read whole (torn by a crash of another
// tool, edited by hand) must not keep the robot from starting: it is kept aside as
// installed-apps.json.corrupt-<time>, the records before the damage are kept, and the apps
// themselves are found again in the venv (discovery), those without a record listed without their
// source until they are installed again.
func (m *Manager) loadRecords() {
	p := m.path(installedFile)
	data, err := os.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return
	case err == nil:
		if err = json.Unmarshal(data, &m.records); err == nil {
			return
		}
	default:
		msg := fmt.Sprintf("%s cannot be read (%v): installed apps are listed from the apps venv without their source", p, err)
		m.log.Error(msg)
		m.warnings = append(m.warnings, msg)
		return
	}
	m.records = salvageRecords(data)
	aside := p + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000Z")
	if rerr := os.Rename(p, aside); rerr != nil {
		aside = "not kept aside: " + rerr.Error()
	}
	msg := fmt.Sprintf("%s is corrupt (%v) and was kept aside as %s; %d app record(s) recovered, other installed apps are listed from the apps venv without their source",
		p, err, aside, len(m.records))
	m.log.Error(msg)
	m.warnings = append(m.warnings, msg)
	if err := writeJSONAtomic(p, m.records); err != nil {
		m.log.Warn("saving the recovered installed-app records", "err", err)
	}
}

// salvageRecords decodes the records of a damaged installed-apps.json up to the damage.
func salvageRecords(data []byte) map[string]installRecord {
	out := map[string]installRecord{}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return out
	}
	for dec.More() {
		t, err := dec.Token()
		name, ok := t.(string)
		if err != nil || !ok {
			break
		}
		var rec installRecord
		if err := dec.Decode(&rec); err != nil {
			break
		}
		if AppNamePattern().MatchString(name) {
			out[name] = rec
		}
	}
	return out
}
