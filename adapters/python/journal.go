package python

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/robothub/robothub/core/apps"
)

// Files of a venv's StateDir.
const (
	journalFile = "install-journal.json" // a package change under way
	wheelsDir   = "wheels"               // the kept wheel of each installed package
)

// journal describes a package change under way. A pip killed halfway (crash, power cut, SIGKILL)
// leaves a package half replaced, old files moved into "~"-named directories. So a change first
// journals the package and the kept wheel (<state>/wheels/<package>/) of the version before; a
// Recover that finds a journal puts that version back, then forgets it.
type journal struct {
	Job             string `json:"job"`
	Package         string `json:"package"`          // the distribution being changed
	PreviousVersion string `json:"previous_version"` // its version before, "" if it was not installed
	PreviousWheel   string `json:"previous_wheel"`   // the kept wheel of that version, "" if none
	NewWheel        string `json:"new_wheel"`        // the wheel being installed, "" for a removal
	TempDir         string `json:"temp_dir"`         // the job's temporary directory, removed on recovery
}

// BeginChange journals a change of distribution dist (to newWheel; "" for a removal) by job,
// before anything touches the venv. tempDir, the job's own directory, goes on recovery.
func (v *Venv) BeginChange(job, dist, newWheel, tempDir string) error {
	if v.StateDir == "" {
		return errors.New("the venv has no state directory to journal its changes in")
	}
	j := journal{Job: job, Package: dist, NewWheel: newWheel, TempDir: tempDir}
	if j.PreviousVersion = v.InstalledVersion(dist); j.PreviousVersion != "" {
		j.PreviousWheel = v.keptWheel(dist, j.PreviousVersion)
	}
	data, err := json.MarshalIndent(j, "", "  ")
	if err == nil {
		err = apps.WriteFileAtomic(filepath.Join(v.StateDir, journalFile), append(data, '\n'))
	}
	if err != nil {
		return fmt.Errorf("writing the install journal: %w", err)
	}
	return nil
}

// EndChange forgets the journal: the venv holds the change in full, or pip undid it. After a
// change that succeeded, keep is the wheel now installed ("" after a removal): it is kept, and
// dist's other kept wheels go; after one that failed, pass abandoned.
func (v *Venv) EndChange(log io.Writer, dist, keep string, abandoned bool) error {
	if !abandoned {
		if keep != "" {
			if err := v.keepWheel(dist, keep); err != nil {
				fmt.Fprintf(log, "Warning: keeping the wheel to restore this version after an interrupted install failed: %v\n", err)
			}
		}
		dir := v.wheelDir(dist)
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
	if err := os.Remove(filepath.Join(v.StateDir, journalFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the install journal: %w", err)
	}
	return nil
}

// Recover undoes a package change that a killed process left half done, as its journal says.
func (v *Venv) Recover(ctx context.Context, log io.Writer) error {
	var j journal
	data, err := os.ReadFile(filepath.Join(v.StateDir, journalFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = json.Unmarshal(data, &j)
	}
	if err != nil {
		return fmt.Errorf("reading the install journal: %w", err)
	}
	if j.Package == "" {
		return nil
	}
	fmt.Fprintf(log, "repairing the apps venv: a previous daemon was stopped while job %s changed package %s (version before: %q)\n", j.Job, j.Package, j.PreviousVersion)
	if err := v.repair(j.NewWheel); err != nil {
		fmt.Fprintf(log, "removing the files of the interrupted install of %s: %v\n", j.NewWheel, err)
	}
	switch {
	case j.PreviousWheel != "" && exists(j.PreviousWheel):
		fmt.Fprintf(log, "Reinstalling %s %s from %s\n", j.Package, j.PreviousVersion, j.PreviousWheel)
		err = v.Install(ctx, log, j.PreviousWheel)
	case j.PreviousVersion == "":
		fmt.Fprintf(log, "Uninstalling %s, which was not installed before the interrupted job\n", j.Package)
		err = v.Uninstall(ctx, log, j.Package)
	case j.NewWheel == "":
		fmt.Fprintf(log, "The wheel of the removed version was not kept: completing the interrupted removal of %s\n", j.Package)
		err = v.Uninstall(ctx, log, j.Package)
	case exists(j.NewWheel):
		fmt.Fprintf(log, "The wheel of %s %s was not kept: completing the interrupted install instead\n", j.Package, j.PreviousVersion)
		err = v.Install(ctx, log, j.NewWheel)
	default:
		fmt.Fprintf(log, "Cannot put back %s %s: its wheel was not kept; install the app again\n", j.Package, j.PreviousVersion)
	}
	if err != nil {
		return fmt.Errorf("repairing %s after an interrupted job: %w", j.Package, err)
	}
	if j.TempDir != "" && filepath.Dir(j.TempDir) == filepath.Clean(os.TempDir()) {
		_ = os.RemoveAll(j.TempDir)
	}
	return v.EndChange(log, j.Package, "", true)
}

// repair removes what an installer killed halfway left in site-packages: pip's backup directories
// (named ~<name>; only pip makes them) and, since pip writes a package's record last, the files of
// wheel ("" for none), which only the wheel itself lists.
func (v *Venv) repair(wheel string) error {
	site, err := v.SitePackages()
	if err != nil {
		return err
	}
	leftovers, _ := filepath.Glob(filepath.Join(site, "~*"))
	for _, p := range leftovers {
		_ = os.RemoveAll(p)
	}
	if wheel == "" || !exists(wheel) {
		return nil
	}
	lay, err := v.installLayout(context.Background())
	if err != nil {
		return err
	}
	files, err := wheelFiles(wheel, lay)
	if err != nil {
		return err
	}
	removeFiles(site, files)
	return nil
}

func (v *Venv) wheelDir(dist string) string {
	return filepath.Join(v.StateDir, wheelsDir, Normalize(dist))
}

func (v *Venv) keptWheel(dist, version string) string {
	entries, _ := os.ReadDir(v.wheelDir(dist))
	for _, e := range entries {
		if _, ver := wheelName(e.Name()); ver == version {
			return filepath.Join(v.wheelDir(dist), e.Name())
		}
	}
	return ""
}

// keepWheel copies wheel into dist's wheel directory (atomically: a torn copy is never kept).
func (v *Venv) keepWheel(dist, wheel string) error {
	data, err := os.ReadFile(wheel)
	if err == nil {
		err = os.MkdirAll(v.wheelDir(dist), 0o755)
	}
	if err != nil {
		return err
	}
	return apps.WriteFileAtomic(filepath.Join(v.wheelDir(dist), filepath.Base(wheel)), data)
}
