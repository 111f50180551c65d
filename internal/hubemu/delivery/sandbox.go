package delivery

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
)

// A job runs a hub user's command on this machine as the hub's own user, so the operating system
// alone would let it read everything the hub can: the database (webhook secrets, token hashes),
// the repositories of other users' private spaces, the token file. Jobs therefore run sandboxed:
// on Linux with Landlock (sandbox_linux.go), which lets a process give up access to every file
// outside a list, for itself and its children, without privileges. The job sees, read-only, the
// system's directories and its PATH, and read-write its own run directory (its HOME and TMPDIR) and
// a few devices (/dev/null, /dev/urandom, ...); nothing else exists for it. Where no sandbox can be
// made (macOS, Windows, a Linux older than 5.13 or with Landlock off), job runs are refused with a
// run error that says why, rather than run with the hub's access.
//
// Decided over the other ways: a separate uid works only when the hub runs as root and still
// leaves world-readable files readable; a private mount namespace needs user namespaces (often off)
// and a re-exec to set up the mounts. Landlock needs neither, costs one ruleset per run (see
// BenchmarkJobStart), and also keeps the job from ptracing, or signalling, the hub.

// systemReadDirs are the directories a job reads (and runs programs from): the system's programs,
// libraries and configuration, and /proc and /sys, whose entries of processes outside the sandbox
// Landlock hides (it refuses ptrace-mode access to them).
var systemReadDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/run", "/proc", "/sys"}

// jobDevices are the device files a job reads and writes. Not /dev as a whole: a hub run as root
// could read the disk under the database through its block device.
var jobDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// jobReadDirs returns the directories a job may read: the system's, then each absolute directory of
// jobPath and extra; a directory that holds one of private (the database's directory, the
// repositories, the token file) is left out and returned in skipped, so that a PATH entry such as
// the hub's own data directory, or "/", never opens the hub's files to jobs.
func jobReadDirs(jobPath string, extra, private []string) (dirs, skipped []string) {
	cands := append(append(slices.Clone(systemReadDirs), filepath.SplitList(jobPath)...), extra...)
	seen := map[string]bool{}
	for _, d := range cands {
		if !filepath.IsAbs(d) {
			continue // a relative PATH entry means the run directory, which the job has anyway
		}
		d = filepath.Clean(d)
		if seen[d] {
			continue
		}
		seen[d] = true
		if holdsAny(d, private) {
			skipped = append(skipped, d)
			continue
		}
		dirs = append(dirs, d)
	}
	return dirs, skipped
}

// errNoSandbox is the error of a job run where no sandbox can be made.
var errNoSandbox = errors.New("this system cannot keep a job out of the hub's files (that needs Linux 5.13 or later with Landlock on), so this hub runs no jobs")

// holdsAny says whether dir is, or holds, one of paths (compared after resolving symbolic links
// where they exist).
func holdsAny(dir string, paths []string) bool {
	dir = resolved(dir)
	for _, p := range paths {
		if p == "" {
			continue
		}
		p = resolved(p)
		if p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

func resolved(p string) string {
	p, _ = filepath.Abs(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
