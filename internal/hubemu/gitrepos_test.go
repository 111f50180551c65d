package hubemu

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestDiffRefs(t *testing.T) {
	before := map[string]string{"refs/heads/main": "a1", "refs/heads/dev": "b1", "refs/tags/v1": "c1"}
	after := map[string]string{"refs/heads/main": "a2", "refs/tags/v1": "c1", "refs/heads/new": "d1"}
	want := []refChange{
		{Ref: "refs/heads/dev", Old: "b1", New: ""},
		{Ref: "refs/heads/main", Old: "a1", New: "a2"},
		{Ref: "refs/heads/new", Old: "", New: "d1"},
	}
	if got := diffRefs(before, after); !reflect.DeepEqual(got, want) {
		t.Fatalf("diffRefs = %+v, want %+v", got, want)
	}
	if got := diffRefs(after, after); len(got) != 0 {
		t.Fatalf("no change gave %+v", got)
	}
}

func TestRepositoriesOfAnInMemoryEmulatorGoAtClose(t *testing.T) {
	e, err := Open(context.Background(), Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	root := e.repos.root
	if err := e.repos.create(context.Background(), "alice/wave"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "spaces", "alice", "wave.git", "HEAD")); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("after Close the temporary repositories are still at %s: %v", root, err)
	}

	// A file-backed emulator keeps them beside the database.
	dir := t.TempDir()
	e, err = Open(context.Background(), Config{DSN: filepath.Join(dir, "hub.db"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if e.repos.root != filepath.Join(dir, "repos") {
		t.Fatalf("repositories at %s, want beside the database", e.repos.root)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "repos")); err != nil {
		t.Fatalf("Close removed the repositories of a file-backed emulator: %v", err)
	}
}
