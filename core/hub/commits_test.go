package hub_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub"
)

// Commit makes a commit through the commit API of the local hub; the space then lists the files.
func TestCommitThroughTheLocalHub(t *testing.T) {
	lh := newLocalHub(t)
	c := lh.Client(t, "alice", "write")
	ctx := t.Context()
	if _, err := c.CreateRepo(ctx, hub.CreateRepoRequest{Type: "space", ID: "wave", SDK: "static"}); err != nil {
		t.Fatal(err)
	}
	first, err := c.Commit(ctx, hub.CommitRequest{RepoType: "space", RepoID: "alice/wave", Summary: "Add the app",
		Files: []hub.CommitFile{{Path: "README.md", Content: []byte("---\ntags: [robot_python_app]\n---\n")}, {Path: "wave/main.py", Content: []byte("x = 1\n")}, {Path: "old/a.txt", Content: []byte("a")}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.OID) != 40 || !strings.HasSuffix(first.URL, "/spaces/alice/wave/commit/"+first.OID) {
		t.Fatalf("commit %+v", first)
	}
	second, err := c.Commit(ctx, hub.CommitRequest{RepoType: "space", RepoID: "alice/wave", Summary: "Tidy", ParentCommit: first.OID,
		DeletedFolders: []string{"old"}, Files: []hub.CommitFile{{Path: "wave/main.py", Content: []byte("x = 2\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := c.SpaceInfo(ctx, "alice/wave")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, s := range sp.Siblings {
		files = append(files, s.RFilename)
	}
	if sp.SHA != second.OID || strings.Join(files, ",") != "README.md,wave/main.py" || len(sp.Tags) == 0 || sp.Tags[0] != "robot_python_app" {
		t.Fatalf("space after two commits: sha %s files %v tags %v", sp.SHA, files, sp.Tags)
	}
	last := lh.bodies[len(lh.bodies)-2]
	if !strings.Contains(last, `{"key":"deletedFolder","value":{"path":"old"}}`) {
		t.Fatalf("NDJSON sent: %s", last)
	}

	// A stale parent is a conflict; nothing is retried.
	_, err = c.Commit(ctx, hub.CommitRequest{RepoType: "space", RepoID: "alice/wave", Summary: "late", ParentCommit: first.OID,
		Files: []hub.CommitFile{{Path: "x", Content: []byte("x")}}})
	if !errors.Is(err, fault.ErrRefused) {
		t.Fatalf("stale parent: %v", err)
	}
	for _, bad := range []hub.CommitRequest{
		{RepoType: "space", RepoID: "wave", Summary: "m"},
		{RepoType: "space", RepoID: "alice/wave"},
		{RepoType: "bucket", RepoID: "alice/wave", Summary: "m"},
		{RepoType: "space", RepoID: "alice/wave", Summary: "m", Files: []hub.CommitFile{{Path: "/abs"}}},
	} {
		var ve *hub.ValidationError
		if _, err := c.Commit(ctx, bad); !errors.As(err, &ve) {
			t.Errorf("%+v: %v, want a ValidationError", bad, err)
		}
	}
}
