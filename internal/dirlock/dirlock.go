// Package dirlock keeps two long-running processes off one data directory: two hub emulators on one
// database would deliver every pending event twice, and a second robot daemon would stop the first
// one's app as an orphan it left behind.
package dirlock

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// errLocked is what lockFile returns when another process holds the lock.
var errLocked = errors.New("locked by another process")

// Lock is a held lock; Release lets the next process in.
type Lock struct{ f *os.File }

// Acquire takes an exclusive flock on path (created if missing) and writes this process's PID
// into it. The kernel drops the lock when the process dies, however it dies, so a SIGKILLed
// process leaves no stale lock. what names the directory's owner in the error, e.g. "robot-daemon".
func Acquire(path, what string) (*Lock, error) {
	// The lock is held through a read-only descriptor: a file open for writing would keep the
	// data dir's filesystem from being remounted read-only (EBUSY) while the process runs.
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := lockFile(f); err != nil {
		defer f.Close()
		if errors.Is(err, errLocked) {
			holder := "another process"
			if b, rerr := os.ReadFile(path); rerr == nil {
				if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 0 {
					holder = fmt.Sprintf("PID %d", pid)
				}
			}
			return nil, fmt.Errorf("%s is in use by another %s (%s); stop it first, or give this one its own data directory", path, what, holder)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	// Best effort: the PID only makes the error of a second process clearer, and a full disk must
	// not keep the first one from starting.
	_ = os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	return &Lock{f: f}, nil
}

// Release drops the lock. The file stays: removing it would let a third process lock a new file
// while a second still waits on the old one.
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}
