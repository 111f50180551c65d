package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/hubemu"
)

func TestWhoAmIGivesTheRole(t *testing.T) {
	lh := newLocalHub(t)
	ctx := context.Background()
	for role, canWrite := range map[string]bool{hubemu.RoleWrite: true, hubemu.RoleRead: false} {
		me, err := lh.Client(t, "alice", role).WhoAmI(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if me.Name != "alice" || me.Role() != role || me.CanWrite("alice") != canWrite {
			t.Errorf("whoami with a %s token: %+v", role, me)
		}
	}
	anon, _ := hub.New(lh.URL)
	if _, err := anon.WhoAmI(ctx); !errors.Is(err, fault.ErrUnauthenticated) {
		t.Fatalf("whoami without a token: %v", err)
	}
}

func TestSpacesThroughTheClient(t *testing.T) {
	lh := newLocalHub(t)
	ctx := context.Background()
	alice := lh.Client(t, "alice", hubemu.RoleWrite)
	reader := lh.Client(t, "alice", hubemu.RoleRead)

	created, err := alice.CreateRepo(ctx, hub.CreateRepoRequest{Type: "space", ID: "wave", SDK: "static"})
	if err != nil {
		t.Fatal(err)
	}
	if created.Name != "alice/wave" || created.URL != hubemu.DefaultPublicURL+"/spaces/alice/wave" {
		t.Fatalf("created %+v", created)
	}
	if last := lh.bodies[len(lh.bodies)-1]; !strings.Contains(last, `"organization":null`) || !strings.Contains(last, `"type":"space"`) {
		t.Fatalf("create sent %s", last)
	}
	if _, err := alice.CreateRepo(ctx, hub.CreateRepoRequest{Type: "space", ID: "alice/wave"}); !errors.Is(err, fault.ErrRefused) {
		t.Fatalf("a second create: %v, want a conflict", err)
	}
	if _, err := reader.CreateRepo(ctx, hub.CreateRepoRequest{Type: "space", ID: "other"}); !errors.Is(err, fault.ErrForbidden) {
		t.Fatalf("create with a read token: %v, want forbidden", err)
	}
	if _, err := alice.CreateRepo(ctx, hub.CreateRepoRequest{Type: "space", ID: "private-one", Private: true}); err != nil {
		t.Fatal(err)
	}

	sent := len(lh.bodies)
	for _, r := range []hub.CreateRepoRequest{
		{Type: "", ID: "x"}, {Type: "space", ID: ""}, {Type: "space", ID: "a/b/c"}, {Type: "space", ID: "a b"},
		{Type: "space", ID: "x", SDK: "flask"}, {Type: "model", ID: "x", SDK: "static"},
	} {
		if _, err := alice.CreateRepo(ctx, r); !errors.Is(err, fault.ErrInvalid) {
			t.Errorf("create %+v: %v, want a validation error", r, err)
		}
	}
	if len(lh.bodies) != sent {
		t.Fatalf("invalid requests were sent: %v", lh.bodies[sent:])
	}

	anon, _ := hub.New(lh.URL)
	list, err := anon.ListSpaces(ctx, hub.SpaceQuery{Filter: []string{"static"}, Author: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "alice/wave" || list[0].SDK != "static" || list[0].Private {
		t.Fatalf("anonymous listing %+v", list)
	}
	if list, err = alice.ListSpaces(ctx, hub.SpaceQuery{}); err != nil || len(list) != 2 {
		t.Fatalf("alice's listing %+v %v", list, err)
	}
	if _, err := anon.SpaceInfo(ctx, "alice/private-one"); !errors.Is(err, fault.ErrUnauthenticated) {
		t.Fatalf("anonymous info of a private space: %v", err)
	}
	info, err := alice.SpaceInfo(ctx, "alice/private-one")
	if err != nil || !info.Private || info.SHA != "" {
		t.Fatalf("info %+v %v", info, err)
	}
	if got := alice.SpaceGitURL("alice/wave"); got != lh.URL+"/spaces/alice/wave" {
		t.Fatalf("git URL %s", got)
	}

	if err := alice.DeleteRepo(ctx, "space", "wave"); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.SpaceInfo(ctx, "alice/wave"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("info of a deleted space: %v", err)
	}
	if err := alice.DeleteRepo(ctx, "space", "wave"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("deleting twice: %v", err)
	}
}

func TestCanWriteRoles(t *testing.T) {
	w := &hub.WhoAmI{Name: "alice"}
	for role, want := range map[string]bool{"write": true, "admin": true, "read": false, "": false} {
		w.Auth.AccessToken.Role = role
		if got := w.CanWrite("alice"); got != want {
			t.Errorf("role %q: %v", role, got)
		}
	}
	w.Auth.AccessToken.Role = "fineGrained"
	if w.CanWrite("alice") {
		t.Error("a fine-grained token without permissions can write")
	}
	if err := json.Unmarshal([]byte(`{"name":"alice","auth":{"accessToken":{"role":"fineGrained","fineGrained":{"scoped":[{"entity":{"type":"user","name":"alice"},"permissions":["repo.content.read","repo.write"]}]}}}}`), w); err != nil {
		t.Fatal(err)
	}
	if !w.CanWrite("alice") || w.CanWrite("acme") {
		t.Error("a fine-grained token with repo.write on alice: can write to alice's repos, and only those")
	}
}
