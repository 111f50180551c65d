package apps

import (
	"archive/zip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Files the manager keeps in its data directory.
const (
	installedFile  = "installed-apps.json"  // where each installed app came from
	startupFile    = "startup-app.json"     // the startup app chosen through the API
	runningAppFile = "running-app.json"     // the app process running now, to find it after a crash
	journalFile    = "install-journal.json" // an app package change under way (below)
	wheelsDir      = "wheels"               // the kept wheel of each installed package
)

// installRecord is what the daemon remembers about an installed app beyond its entry point.
type installRecord struct {
	Source      string     `json:"source"`
	SourceKind  SourceKind `json:"source_kind"`
	Package     string     `json:"package"`
	Revision    string     `json:"revision,omitempty"` // the git commit installed, for git and hub space sources
	InstalledAt time.Time  `json:"installed_at"`
}

type startupConfig struct {
	StartupApp string `json:"startup_app"`
}

// runningApp identifies an app process well enough to find it again after a daemon crash.
type runningApp struct {
	Name    string `json:"name"`
	PID     int    `json:"pid"`
	Started int64  `json:"started_ms"` // the process start time (procgroup.Identity): guards against PID reuse
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
	return writeFileAtomic(path, append(data, '\n'))
}

// writeFileAtomic replaces path with data so that a crash leaves either the old or the new file,
// never a torn one: write a temporary file, sync it, rename it over, sync the directory.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err = tmp.Write(data); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// installJournal describes a package change under way. A pip killed halfway (crash, power cut,
// SIGKILL) leaves a package half replaced, old files moved into "~"-named directories. So a job
// first journals the package and the kept wheel (<data-dir>/wheels/<package>/) of the version
// before; a daemon that finds a journal at start puts that version back, then forgets it.
type installJournal struct {
	Job             string `json:"job"`
	Package         string `json:"package"`          // the distribution being changed
	PreviousVersion string `json:"previous_version"` // its version before, "" if it was not installed
	PreviousWheel   string `json:"previous_wheel"`   // the kept wheel of that version, "" if none
	NewWheel        string `json:"new_wheel"`        // the wheel being installed, "" for a removal
	TempDir         string `json:"temp_dir"`         // the job's temporary directory, removed on recovery
}

// beginChange writes the journal of a change to package dist, before pip touches the venv.
func (m *Manager) beginChange(job *Job, dist, newWheel, tempDir string) error {
	j := installJournal{Job: job.ID(), Package: dist, NewWheel: newWheel, TempDir: tempDir}
	j.PreviousVersion = m.venv.installedVersion(dist)
	if j.PreviousVersion != "" {
		j.PreviousWheel = m.keptWheel(dist, j.PreviousVersion)
	}
	if err := writeJSONAtomic(m.path(journalFile), j); err != nil {
		return fmt.Errorf("writing the install journal: %w", err)
	}
	return nil
}

// endChange forgets the journal once the venv holds the change in full.
func (m *Manager) endChange() error {
	if err := os.Remove(m.path(journalFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the install journal: %w", err)
	}
	return nil
}

func (m *Manager) wheelDir(dist string) string {
	return filepath.Join(m.cfg.DataDir, wheelsDir, normalizeDist(dist))
}

func (m *Manager) keptWheel(dist, version string) string {
	entries, _ := os.ReadDir(m.wheelDir(dist))
	for _, e := range entries {
		// Wheel file names are <name>-<version>-<tags>.whl, with - in the name written as _.
		if parts := strings.Split(e.Name(), "-"); len(parts) >= 3 && parts[1] == version && strings.HasSuffix(e.Name(), ".whl") {
			return filepath.Join(m.wheelDir(dist), e.Name())
		}
	}
	return ""
}

// keepWheel copies wheel into dist's wheel directory (atomically: a torn copy is never kept).
func (m *Manager) keepWheel(dist, wheel string) error {
	data, err := os.ReadFile(wheel)
	if err == nil {
		err = os.MkdirAll(m.wheelDir(dist), 0o755)
	}
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(m.wheelDir(dist), filepath.Base(wheel)), data)
}

// pruneWheels removes dist's kept wheels other than keep ("" removes them all).
func (m *Manager) pruneWheels(dist, keep string) {
	dir := m.wheelDir(dist)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != filepath.Base(keep) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	if keep == "" {
		_ = os.Remove(dir)
	}
}

// recoverInterruptedChange undoes, at start, a package change a killed daemon left half done.
func (m *Manager) recoverInterruptedChange(ctx context.Context, log io.Writer) error {
	var j installJournal
	if err := readJSON(m.path(journalFile), &j); err != nil {
		return err
	}
	if j.Package == "" {
		return nil
	}
	m.log.Warn("repairing the apps venv: a previous daemon was stopped while it changed an app package",
		"package", j.Package, "job", j.Job, "previous_version", j.PreviousVersion)
	if site, err := m.venv.SitePackages(); err == nil {
		// pip moves the files it replaces into directories named ~<name>; only pip makes them.
		leftovers, _ := filepath.Glob(filepath.Join(site, "~*"))
		for _, p := range leftovers {
			_ = os.RemoveAll(p)
		}
		// pip writes a package's record last: only the wheel knows a half-installed wheel's files.
		if j.NewWheel != "" && exists(j.NewWheel) {
			if err := removeWheelFiles(site, j.NewWheel); err != nil {
				m.log.Warn("removing the files of the interrupted install", "wheel", j.NewWheel, "err", err)
			}
		}
	}
	var err error
	switch {
	case j.PreviousWheel != "" && exists(j.PreviousWheel):
		fmt.Fprintf(log, "Reinstalling %s %s from %s\n", j.Package, j.PreviousVersion, j.PreviousWheel)
		err = m.venv.Pip(ctx, log, "install", "--no-index", "--no-deps", "--force-reinstall", j.PreviousWheel)
	case j.PreviousVersion == "":
		fmt.Fprintf(log, "Uninstalling %s, which was not installed before the interrupted job\n", j.Package)
		err = m.venv.Pip(ctx, log, "uninstall", "--yes", j.Package)
	case j.NewWheel == "":
		m.log.Warn("the wheel of the removed version was not kept: completing the interrupted removal", "package", j.Package)
		err = m.venv.Pip(ctx, log, "uninstall", "--yes", j.Package)
	case j.NewWheel != "" && exists(j.NewWheel):
		m.log.Warn("the wheel of the previous version was not kept: completing the interrupted install instead",
			"package", j.Package, "previous_version", j.PreviousVersion)
		err = m.venv.Pip(ctx, log, "install", "--no-index", "--no-deps", "--force-reinstall", j.NewWheel)
	default:
		m.log.Error("cannot put back the previous version: its wheel was not kept; install the app again",
			"package", j.Package, "previous_version", j.PreviousVersion)
	}
	if err != nil {
		return fmt.Errorf("repairing %s after an interrupted job: %w", j.Package, err)
	}
	if j.TempDir != "" && filepath.Dir(j.TempDir) == filepath.Clean(os.TempDir()) && strings.HasPrefix(filepath.Base(j.TempDir), installTempPrefix) {
		_ = os.RemoveAll(j.TempDir)
	}
	return m.endChange()
}

// removeWheelFiles removes wheel's files from site-packages, their .pyc files and emptied dirs.
func removeWheelFiles(site, wheel string) error {
	zr, err := zip.OpenReader(wheel)
	if err != nil {
		return err
	}
	defer zr.Close()
	dirs := map[string]bool{}
	for _, f := range zr.File {
		first, _, _ := strings.Cut(f.Name, "/")
		if !filepath.IsLocal(f.Name) || strings.HasSuffix(first, ".data") || strings.HasSuffix(f.Name, "/") {
			continue // outside site-packages (scripts, headers) or not a file
		}
		p := filepath.Join(site, filepath.FromSlash(f.Name))
		_ = os.Remove(p)
		if stem, ok := strings.CutSuffix(filepath.Base(p), ".py"); ok {
			compiled, _ := filepath.Glob(filepath.Join(filepath.Dir(p), "__pycache__", stem+".*.pyc"))
			for _, c := range compiled {
				_ = os.Remove(c)
			}
			dirs[filepath.Join(filepath.Dir(p), "__pycache__")] = true
		}
		for d := filepath.Dir(p); d != site && strings.HasPrefix(d, site); d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	// Deepest first, so that a parent is empty once its children are gone.
	for _, d := range slices.SortedFunc(maps.Keys(dirs), func(a, b string) int { return len(b) - len(a) }) {
		_ = os.Remove(d) // fails, as it should, when the directory still holds something
	}
	return nil
}
