package apps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

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
	j.PreviousVersion = m.py.InstalledVersion(dist)
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
	if err := m.py.Repair(j.NewWheel); err != nil {
		m.log.Warn("removing the files of the interrupted install", "wheel", j.NewWheel, "err", err)
	}
	var err error
	switch {
	case j.PreviousWheel != "" && exists(j.PreviousWheel):
		fmt.Fprintf(log, "Reinstalling %s %s from %s\n", j.Package, j.PreviousVersion, j.PreviousWheel)
		err = m.py.Install(ctx, log, j.PreviousWheel)
	case j.PreviousVersion == "":
		fmt.Fprintf(log, "Uninstalling %s, which was not installed before the interrupted job\n", j.Package)
		err = m.py.Uninstall(ctx, log, j.Package)
	case j.NewWheel == "":
		m.log.Warn("the wheel of the removed version was not kept: completing the interrupted removal", "package", j.Package)
		err = m.py.Uninstall(ctx, log, j.Package)
	case j.NewWheel != "" && exists(j.NewWheel):
		m.log.Warn("the wheel of the previous version was not kept: completing the interrupted install instead",
			"package", j.Package, "previous_version", j.PreviousVersion)
		err = m.py.Install(ctx, log, j.NewWheel)
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
