package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// makePrivate makes the database file dsn, and the write-ahead log, shared-memory and journal files
// SQLite keeps beside it, readable by their owner only (0600), whatever the umask: the database holds
// webhook secrets and token hashes. A missing database file is created 0600 before SQLite opens it,
// and SQLite gives the files it makes beside a database the database's own mode (its unix VFS does
// so, umask or not), so nothing is ever readable by others, not even for a moment. Files an older
// robothub left 0644 are tightened.
func makePrivate(dsn string) error {
	f, err := os.OpenFile(dsn, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		err = f.Chmod(0o600) // the umask may have taken bits from the owner too
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("making the hub database %s: %w", dsn, err)
		}
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("making the hub database %s: %w", dsn, err)
	}
	for _, name := range []string{dsn, dsn + "-wal", dsn + "-shm", dsn + "-journal"} {
		st, err := os.Stat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil && st.Mode().Perm() != 0o600 {
			err = os.Chmod(name, 0o600)
		}
		if err != nil {
			return fmt.Errorf("making the hub database %s private (mode 0600): %w", name, err)
		}
	}
	return nil
}
