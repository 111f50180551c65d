package localhub_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/robothub/robothub/internal/hubemu/localhub"
)

func TestRepositoriesOfAnInMemoryEmulatorGoAtClose(t *testing.T) {
	e, err := localhub.Open(context.Background(), localhub.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	root := e.ReposDir()
	if err := e.Git().Create(context.Background(), "alice/wave"); err != nil {
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
	e, err = localhub.Open(context.Background(), localhub.Config{DSN: filepath.Join(dir, "hub.db"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if e.ReposDir() != filepath.Join(dir, "repos") {
		t.Fatalf("repositories at %s, want beside the database", e.ReposDir())
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "repos")); err != nil {
		t.Fatalf("Close removed the repositories of a file-backed emulator: %v", err)
	}
}
