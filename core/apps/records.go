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
	journalFile    = "install-journal.json" // an app package change under way (journal.go)
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
