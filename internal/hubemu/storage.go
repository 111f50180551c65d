package hubemu

import (
	"errors"
	"fmt"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// storageFailure reports whether err is the database failing to write because of its disk: full,
// read-only or failing. That is the operator's to fix, not a bug: the API answers 507 with the
// database's path, and SQLite has rolled the change back.
func storageFailure(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
			return true
		}
	}
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EROFS)
}

// StoreError is the failure that stops Run: the database refused a read or a write. Nothing is lost
// by the stop (see Run), so the fix is the operator's: make room or make the disk writable, and
// start the hub again.
type StoreError struct {
	Database string // the database file (or MemoryDSN)
	Doing    string // what Run was doing, such as "recording deliveries"
	Err      error
}

func (e *StoreError) Error() string {
	if storageFailure(e.Err) {
		return fmt.Sprintf("the hub cannot write its database %s (%s): %v", e.Database, e.Doing, e.Err)
	}
	return fmt.Sprintf("the hub database %s failed (%s): %v", e.Database, e.Doing, e.Err)
}

func (e *StoreError) Unwrap() error { return e.Err }

func (e *Emulator) storeFailed(doing string, err error) error {
	return &StoreError{Database: e.dsn, Doing: doing, Err: err}
}
