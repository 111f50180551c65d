package localhub_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub"
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

func TestModelsAreServedForTheHubsDownloadAPI(t *testing.T) {
	models := t.TempDir()
	if err := os.MkdirAll(filepath.Join(models, "opencv", "faces"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(models, "opencv", "faces", "model.onnx"), []byte("weights"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := localhub.Open(context.Background(), localhub.Config{Logger: slog.New(slog.DiscardHandler), ModelsDir: models})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()
	c, err := hub.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	snap, err := c.SnapshotDownload(context.Background(), "model", "opencv/faces", "", cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(snap.Dir, "model.onnx")); err != nil || string(data) != "weights" {
		t.Fatalf("downloaded %q, %v", data, err)
	}
	if _, err := c.SnapshotDownload(context.Background(), "model", "opencv/nothing", "", cache, nil); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("a missing model: %v, want not found", err)
	}
	// The models' catch-all answers nothing else: unknown paths stay 404, other methods 405.
	for path, want := range map[string]int{
		"GET /opencv/faces/resolve/main/model.onnx":    200,
		"GET /opencv/faces/resolve/main/other.onnx":    404,
		"GET /opencv/faces/resolve/main/%2e%2e/x.onnx": 404,
		"GET /nowhere":     404,
		"POST /api/spaces": 405,
	} {
		method, p, _ := strings.Cut(path, " ")
		req, _ := http.NewRequest(method, srv.URL+p, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}
