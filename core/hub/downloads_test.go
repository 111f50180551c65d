package hub_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/testkit/hubtest"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// datasetHub serves a local hub with one dataset, local/moves, whose files are given.
func datasetHub(t *testing.T, files map[string]string) *hubtest.Hub {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, "local", "moves", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return hubtest.Start(t, localhub.Config{DatasetsDir: dir})
}

func TestSnapshotDownloadCachesADatasetAndReadsItOffline(t *testing.T) {
	srv := datasetHub(t, map[string]string{"nod.json": `{"time":[0]}`, "data/wave.json": `{"time":[1]}`, "README.md": "# moves"})
	c, err := hub.New(srv.URL, hub.WithRetry(hub.RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	ctx := context.Background()
	onlyJSON := func(f string) bool { return strings.HasSuffix(f, ".json") }
	snap, err := c.SnapshotDownload(ctx, "dataset", "local/moves", "", cache, onlyJSON)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Cached || len(snap.Commit) != 40 {
		t.Fatalf("snapshot %+v: want a fresh download at a 40-hex commit", snap)
	}
	if got, _ := os.ReadFile(filepath.Join(snap.Dir, "data", "wave.json")); string(got) != `{"time":[1]}` {
		t.Fatalf("data/wave.json: %q", got)
	}
	if _, err := os.Stat(filepath.Join(snap.Dir, "README.md")); !os.IsNotExist(err) {
		t.Fatalf("README.md was not wanted, yet it is there (%v)", err)
	}
	if want := filepath.Join(cache, "datasets--local--moves", "snapshots", snap.Commit); snap.Dir != want {
		t.Fatalf("snapshot in %s, want the Python client's layout %s", snap.Dir, want)
	}

	srv.Close() // the hub goes away: the cached snapshot of main is what is left
	again, err := c.SnapshotDownload(ctx, "dataset", "local/moves", "main", cache, onlyJSON)
	if err != nil {
		t.Fatalf("offline: %v", err)
	}
	if !again.Cached || again.Dir != snap.Dir {
		t.Fatalf("offline snapshot %+v, want the cached %s", again, snap.Dir)
	}
	if _, err := c.SnapshotDownload(ctx, "dataset", "local/other", "", cache, nil); err == nil {
		t.Fatal("a dataset never downloaded was found offline")
	}
}

func TestSnapshotDownloadOfAMissingDatasetIsNotFound(t *testing.T) {
	srv := datasetHub(t, map[string]string{"nod.json": "{}"})
	c, _ := hub.New(srv.URL)
	_, err := c.SnapshotDownload(context.Background(), "dataset", "local/nope", "", t.TempDir(), nil)
	if !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("got %v, want not found", err)
	}
}

// A hub (or something posing as one) that lists a file outside the repo gets nothing written.
func TestSnapshotDownloadRefusesFileNamesThatLeaveTheCache(t *testing.T) {
	for _, name := range []string{"../../escape.json", "/etc/x.json", `a\..\b.json`, "a/./b.json"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/revision/") {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"sha":"0123456789abcdef0123456789abcdef01234567","siblings":[{"rfilename":` + quote(name) + `}]}`))
				return
			}
			_, _ = w.Write([]byte("pwned"))
		}))
		c, _ := hub.New(srv.URL)
		cache := t.TempDir()
		_, err := c.SnapshotDownload(context.Background(), "dataset", "local/moves", "", filepath.Join(cache, "inner"), nil)
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), "not a clean relative path") {
			t.Fatalf("%q: got %v, want a refusal", name, err)
		}
		if _, err := os.Stat(filepath.Join(cache, "escape.json")); !os.IsNotExist(err) {
			t.Fatalf("%q: a file was written outside the cache", name)
		}
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }

// Issue 30, item 7: a file over 64 MiB was cut at 64 MiB and cached as complete, and a snapshot had
// no total cap. A file over its cap, and files together over the snapshot's, are errors naming the
// file and the cap; nothing cut short is in the cache, and the ref is not written.
func TestSnapshotDownloadCapsFilesAndTheWhole(t *testing.T) {
	srv := datasetHub(t, map[string]string{"a.json": strings.Repeat("a", 3000), "b.json": strings.Repeat("b", 3000), "c.json": "{}"})
	ctx := context.Background()
	for _, c := range []struct {
		name           string
		file, snapshot int64
		want           string
	}{
		{"a file over its cap", 2048, 0, "the file a.json of dataset local/moves is larger than the cap of 2 KiB per file"},
		{"the files over the snapshot's cap", 0, 5000, "holds more than the cap of 4.8828125 KiB per snapshot (reached at the file b.json)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			client, err := hub.New(srv.URL, hub.WithRetry(hub.RetryPolicy{MaxAttempts: 1}), hub.WithDownloadCaps(c.file, c.snapshot))
			if err != nil {
				t.Fatal(err)
			}
			cache := t.TempDir()
			_, err = client.SnapshotDownload(ctx, "dataset", "local/moves", "main", cache, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, fault.ErrUpstream) {
				t.Fatalf("got %v, want an upstream error with %q", err, c.want)
			}
			_ = filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if fi, _ := d.Info(); fi.Size() != 3000 && fi.Size() != 2 {
						t.Errorf("the cache holds %s of %d bytes: a file cut short", p, fi.Size())
					}
				}
				return nil
			})
			if _, err := hub.CachedSnapshot(cache, "dataset", "local/moves", "main"); !errors.Is(err, fault.ErrNotFound) {
				t.Errorf("the refused snapshot is taken for complete: %v", err)
			}
		})
	}
	// Within the caps (the defaults here), it downloads.
	client, _ := hub.New(srv.URL)
	if _, err := client.SnapshotDownload(ctx, "dataset", "local/moves", "main", t.TempDir(), nil); err != nil {
		t.Fatal(err)
	}
}
