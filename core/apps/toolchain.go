package apps

import (
	"context"
	"io"
	"io/fs"
)

// Toolchain is the Python packaging of the apps venv that the manager drives: creating the venv,
// building, resolving, checking, installing and removing packages, and reading what is installed.
// adapters/python implements it; the daemon wires it in (core imports nothing of internal).
// Every method that runs a command stops it, with its whole process group, at the end of ctx.
type Toolchain interface {
	// VenvDir is the venv directory; Python its interpreter.
	VenvDir() string
	Python() string
	// Ensure makes the venv usable: created if missing, pip completed, setuptools and wheel present.
	Ensure(ctx context.Context, log io.Writer) error
	// Stamp changes whenever a package is added to or removed from the venv.
	Stamp() string
	// InstalledVersion is the version of distribution dist in the venv itself ("" if none).
	InstalledVersion(dist string) string
	// Needs lists (normalized) the distributions of the venv that the installed distribution dist
	// needs, directly or through others.
	Needs(dist string) (map[string]bool, error)
	// EntryPoints lists the entry points of group across what the venv's Python sees.
	EntryPoints(ctx context.Context, group string) ([]InstalledEntryPoint, error)
	// InstallSDK installs the embedded SDK (pyproject.toml, robot_sdk/) at version, replacing
	// what is installed; no dependencies, no index.
	InstallSDK(ctx context.Context, log io.Writer, sdk fs.FS, version string) error
	// BuildWheel builds the package source in srcDir into a wheel in outDir, offline, and reads it.
	BuildWheel(ctx context.Context, log io.Writer, srcDir, outDir string) (Wheel, error)
	// Resolve resolves requirements against the venv and downloads (building where needed) into
	// dir every distribution the venv lacks, without installing anything.
	Resolve(ctx context.Context, log io.Writer, req Resolution) ([]Wheel, error)
	// Check refuses a package whose wheel, or the wheel of one of its dependencies, would install
	// anything over the runtime (the SDK, the installer, the standard library, Python's start-up
	// hooks), over another installed distribution, or over one another.
	Check(ctx context.Context, pkg Wheel, deps []Wheel) error
	// Install installs wheel files, and only them: no index, no dependencies, replacing what is there.
	Install(ctx context.Context, log io.Writer, wheels ...string) error
	// Uninstall removes distributions from the venv.
	Uninstall(ctx context.Context, log io.Writer, dists ...string) error
	// BeginChange journals, before anything changes, a change by job of distribution dist to
	// newWheel ("" for a removal); EndChange forgets it, keeping the wheel keep to put back after
	// a later interrupted change (abandoned: the change failed and was undone). Recover, at start,
	// puts back what a change that a killed daemon left half done had replaced.
	BeginChange(job, dist, newWheel, tempDir string) error
	EndChange(log io.Writer, dist, keep string, abandoned bool) error
	Recover(ctx context.Context, log io.Writer) error
}

// Prestarter is a Toolchain that can start the processes of a build and an install before they
// are needed, so that their start-up overlaps getting the package (adapters/python: Python's and
// pip's imports). stop ends those that no BuildWheel or Install took.
type Prestarter interface {
	Prestart() (stop func())
}

// Wheel is a built or downloaded wheel file and what its metadata says.
type Wheel struct {
	Path        string
	Name        string                  // the distribution name, as METADATA spells it
	Version     string                  // its version
	Requires    []string                // Requires-Dist entries that apply without an extra
	EntryPoints map[string][]EntryPoint // entry_points.txt, by group
}

// EntryPoint is one line of an entry-point group: name = module:attr.
type EntryPoint struct {
	Name, Module, Attr string
}

// InstalledEntryPoint is an entry point of an installed distribution, with the source file of its
// module ("" when the distribution does not list it).
type InstalledEntryPoint struct {
	EntryPoint
	Dist, Version, Summary, File string
}

// Resolution asks for requirements to be resolved against the venv.
type Resolution struct {
	Requirements []string // PEP 508 requirements
	// Upgrade takes the newest allowed versions of the requirements installed in the venv itself;
	// those the system provides (through system site packages) stay.
	Upgrade bool
	// Held are requirements resolved with the others but never upgraded (the SDK's own, which an
	// app's update must not move).
	Held []string
	Dir  string // where the wheels go
}
