//go:build linux

// Package faultfs gives fault tests a filesystem that fails: a tiny tmpfs mounted for one test,
// which can be filled to the last byte or remounted read-only. Mounting needs root (or
// CAP_SYS_ADMIN); where that is refused the test is skipped with the reason. Permission bits are
// no substitute: root writes through them, a read-only mount stops everyone. It is imported by
// tests only.
package faultfs

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// Tmpfs mounts a tmpfs of size bytes (rounded up to pages) on a new temporary directory and
// unmounts it when the test ends.
func Tmpfs(t testing.TB, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size="+strconv.Itoa(size)+",mode=0755"); err != nil {
		t.Skipf("cannot mount a tmpfs for this fault test (needs root or CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting the test tmpfs %s: %v", dir, err)
		}
	})
	return dir
}

// ReadOnly remounts the tmpfs at dir read-only, or writable again when writable is true.
func ReadOnly(t testing.TB, dir string, readOnly bool) {
	t.Helper()
	flags := uintptr(syscall.MS_REMOUNT | syscall.MS_NOSUID | syscall.MS_NODEV)
	if readOnly {
		flags |= syscall.MS_RDONLY
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", flags, ""); err != nil {
		t.Fatalf("remounting %s (read-only %v): %v", dir, readOnly, err)
	}
}

// Fill writes a file in dir until the filesystem is full, and returns its path: remove it to free
// the space again.
func Fill(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			break
		}
	}
	// The last partial block: fill the remaining bytes too.
	for {
		if _, err := f.Write(block[:1]); err != nil {
			break
		}
	}
	return path
}
