package apps

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/robothub/robothub/core/apps/origin"
)

// noToolchain is a Toolchain that is never called: these tests only read and migrate records.
type noToolchain struct{ Toolchain }

// An app installed from `robothub dev` on its default ports must update from the same local hub
// once `robothub dev` listens on other ports (issue 24: the update cloned from :7861, where nothing
// listened, and failed with "git exited with code 128"). Old records are migrated to the space.
func TestInstalledSpaceFollowsTheDaemonsHub(t *testing.T) {
	data := t.TempDir()
	old := map[string]installRecord{
		"my_app":    {Source: "http://127.0.0.1:7861/spaces/local/my_app", SourceKind: legacyHubSpace, Package: "my_app", Revision: "abc1234"},
		"other_hub": {Source: "https://hub.example/spaces/alice/wave", SourceKind: SourceHubSpace, Package: "wave"},
		"from_git":  {Source: "https://git.example/alice/app.git", SourceKind: SourceGit, Package: "app"},
	}
	b, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, installedFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := NewManager(Config{DataDir: data, Toolchain: noToolchain{}, SDK: fstest.MapFS{}, HubURL: "http://127.0.0.1:22861"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"my_app":    "http://127.0.0.1:22861/spaces/local/my_app", // the daemon's hub, where it is today
		"other_hub": "https://hub.example/spaces/alice/wave",      // another hub stays that hub
		"from_git":  "https://git.example/alice/app.git",
	} {
		if got := m.sourceOf(m.records[name]); got != want {
			t.Errorf("%s updates from %s, want %s", name, got, want)
		}
	}
	// The migration is saved: the record names the space, and the hub only when it is not the daemon's.
	var saved map[string]installRecord
	b, err = os.ReadFile(filepath.Join(data, installedFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	if r := saved["my_app"]; r.Space != "local/my_app" || r.Hub != "" || r.SourceKind != SourceHubSpace {
		t.Errorf("saved my_app: %+v", r)
	}
	if r := saved["other_hub"]; r.Space != "alice/wave" || r.Hub != "https://hub.example" {
		t.Errorf("saved other_hub: %+v", r)
	}

	// A push names the space at the hub's address today; an older address of the same hub is the same space.
	if !origin.Same("http://127.0.0.1:22861/spaces/local/my_app", "http://127.0.0.1:22861/spaces/local/my_app/") ||
		origin.Same("http://127.0.0.1:22861/spaces/local/my_app", "http://127.0.0.1:22861/spaces/local/other") ||
		origin.Same("https://hub.example/spaces/alice/wave", "https://hub2.example/spaces/alice/wave") {
		t.Error("sameSource")
	}
}
