package release_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/robothub/robothub/core/release"
	"github.com/robothub/robothub/internal/testkit/faultfs"
)

// A full disk in the middle of a download is an error naming it; the partial program is removed
// and the running release's links are untouched.
func TestFullDiskMidDownload(t *testing.T) {
	key := signingKey(t)
	r := repo{}
	publish(t, r, key, "1.2.0")
	dir := faultfs.Tmpfs(t, 64<<10)
	l := release.Layout{Dir: dir}
	running := filepath.Join(t.TempDir(), "robot-daemon")
	if err := os.WriteFile(running, []byte("running"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := l.Swap(running, running); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fill"), make([]byte, 50<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	err := fetch(r, key, "1.2.0", "amd64", l.Program(mustVersion(t, "1.2.0")))
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("error %v, want no space left on device", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "1.2.0")); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	if l.Current() != running {
		t.Errorf("current: %q, want the running %q", l.Current(), running)
	}
}

// Launch: the current link's program runs; a pending release that keeps failing to become ready
// is swapped back after MaxStarts starts, and the record says why.
func TestLaunchRollsBackAReleaseThatNeverBecomesReady(t *testing.T) {
	dir := t.TempDir()
	l := release.Layout{Dir: dir}
	installed := filepath.Join(dir, "installed")
	next := filepath.Join(dir, "1.2.0", "robot-daemon")
	for _, p := range []string{installed, next} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if exec, rec, err := l.Launch(installed, time.Now()); err != nil || exec != "" || rec != nil {
		t.Fatalf("no release yet: exec %q rec %v err %v, want the installed program", exec, rec, err)
	}
	if err := l.Swap(next, installed); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	rec := &release.Record{ID: "j1", From: "1.1.0", To: "1.2.0", FromProgram: installed, ToProgram: next, State: release.StateStarting,
		MaxStarts: 2, Probation: time.Minute, Swapped: now}
	if err := l.WriteRecord(rec); err != nil {
		t.Fatal(err)
	}
	for start := 1; start <= 2; start++ {
		exec, rec, err := l.Launch(installed, now)
		if err != nil || exec != next || rec.Starts != start {
			t.Fatalf("start %d: exec %q starts %v err %v, want %s", start, exec, rec, err, next)
		}
	}
	exec, rec, err := l.Launch(installed, now)
	if err != nil || exec != "" {
		t.Fatalf("third start: exec %q err %v, want the installed program back", exec, err)
	}
	if rec.State != release.StateRolledBack || rec.Error != "1.2.0 started twice without becoming ready" || l.Current() != installed {
		t.Fatalf("record %+v, current %q", rec, l.Current())
	}
	if last := rec.Logs[len(rec.Logs)-1]; !strings.Contains(last, "rolled back to 1.1.0: 1.2.0 started twice without becoming ready") {
		t.Errorf("log: %q", last)
	}
	// Once ready and past its probation, a release is no longer counted.
	if err := l.Swap(next, installed); err != nil {
		t.Fatal(err)
	}
	rec = &release.Record{From: "1.1.0", To: "1.2.0", FromProgram: installed, ToProgram: next, State: release.StateReady,
		MaxStarts: 2, Probation: time.Minute, Ready: now.Add(-2 * time.Minute)}
	l.WriteRecord(rec)
	for range 4 {
		if exec, _, _ := l.Launch(installed, now); exec != next {
			t.Fatalf("a release past its probation: exec %q", exec)
		}
	}
}
