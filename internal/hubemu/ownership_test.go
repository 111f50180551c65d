package hubemu_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// TestEmitOnlyOnOwnRepos: through the HTTP API, a user emits events only on its own repos (403
// naming the repo otherwise), moves only its own repos into its own namespace, and changes
// visibility only with a repo.config event. Anyone may open a discussion on a public repo.
func TestEmitOnlyOnOwnRepos(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	bob, _, err := h.emu.CreateToken(t.Context(), "bob", hubemu.RoleWrite, "t")
	if err != nil {
		t.Fatal(err)
	}
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo", Action: "create"})
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/hidden", Scope: "repo.config", Action: "update", Private: ptr(true)})

	refused := []struct {
		name   string
		token  string
		in     hubemu.EmitInput
		status int
		want   string
	}{
		{"push to another's repo", bob, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update"}, 403,
			"repo: model:alice/bert belongs to alice: you (bob) may emit events only on your own repos"},
		{"make another's repo private", bob, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.config", Action: "update", Private: ptr(true)}, 403, "model:alice/bert belongs to alice"},
		{"delete another's repo", bob, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo", Action: "delete"}, 403, "model:alice/bert"},
		{"move another's repo to oneself", bob, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo", Action: "move", MovedTo: "bob/bert"}, 403, "model:alice/bert"},
		{"move one's repo into another's namespace", h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo", Action: "move", MovedTo: "bob/bert"}, 403,
			"movedTo: bob/bert is not in your namespace"},
		{"create a repo in another's namespace", bob, hubemu.EmitInput{Repo: "model:carol/new", Scope: "repo", Action: "create"}, 403, "model:carol/new belongs to carol"},
		{"private on a push", h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo.content", Action: "update", Private: ptr(true)}, 400,
			"private: a repo's visibility changes only with a repo.config update event"},
		{"private on a discussion", bob, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "discussion", Action: "create", Private: ptr(false)}, 400, "private:"},
		{"close another's discussion", bob, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "discussion", Action: "update", Discussion: &hubemu.DiscussionInput{Status: "closed"}}, 403, "model:alice/bert"},
		{"discussion on a private repo of another", bob, hubemu.EmitInput{Repo: "model:alice/hidden", Scope: "discussion", Action: "create"}, 403, "model:alice/hidden"},
	}
	for _, c := range refused {
		status, body, _ := h.call("POST", "/api/emulator/events", c.token, c.in)
		if status != c.status || !strings.Contains(string(body), c.want) {
			t.Errorf("%s: %d %s, want %d with %q", c.name, status, body, c.status, c.want)
		}
	}
	// Nothing changed: alice's repo is still hers, public, at its name.
	res := h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo", Action: "update"})
	if p := payloadOf(t, res); p.Repo.Private || p.Repo.Name != "alice/bert" {
		t.Fatalf("after the refused events: %s", res.Payload)
	}
	// What the public hub lets anyone do: a discussion (and a comment) on a public repo, by bob.
	d := payloadOf(t, h.emit(bob, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "discussion", Action: "create", Discussion: &hubemu.DiscussionInput{Title: "Hi"}}))
	if d.Discussion == nil || d.Discussion.Num != 1 {
		t.Fatalf("bob's discussion: %s", d.Raw)
	}
	h.emit(bob, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "discussion.comment", Action: "create", Comment: &hubemu.CommentInput{Content: "ok"}})
	// The owner moves within its namespace.
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "repo", Action: "move", MovedTo: "alice/bert2"})
}

// TestPrivateRepoEventsReachOnlyReaders: an event on a private repo goes to the owner's webhooks
// only; another user's webhook watching the repo, or its owner, gets nothing from it (and gets the
// public repo's events, so the filter is not a broken webhook).
func TestPrivateRepoEventsReachOnlyReaders(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	bob, _, err := h.emu.CreateToken(t.Context(), "bob", hubemu.RoleWrite, "t")
	if err != nil {
		t.Fatal(err)
	}
	rc := newReceiver(t, "s")
	mine := h.createWebhook(h.token, map[string]any{"url": rc.url(), "watched": watch("user:alice"), "secret": "s"})
	bobsByRepo := h.createWebhook(bob, map[string]any{"url": rc.url(), "watched": watch("model:alice/secret", "model:alice/open"), "secret": "s"})
	bobsByOwner := h.createWebhook(bob, map[string]any{"url": rc.url(), "watched": watch("user:alice"), "secret": "s"})

	targets := func(res hubemu.EmitResult) string {
		var ids []string
		for _, d := range res.Deliveries {
			switch d.WebhookID {
			case mine.ID:
				ids = append(ids, "mine")
			case bobsByRepo.ID:
				ids = append(ids, "bob-repo")
			case bobsByOwner.ID:
				ids = append(ids, "bob-owner")
			}
		}
		return strings.Join(ids, ",")
	}
	got := []string{
		targets(h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/secret", Scope: "repo.config", Action: "update", Private: ptr(true)})),
		targets(h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/secret", Scope: "repo.content", Action: "update"})),
		targets(h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/open", Scope: "repo.content", Action: "update"})),
	}
	sortEach := func(s string) string {
		parts := strings.Split(s, ",")
		slices.Sort(parts)
		return strings.Join(parts, ",")
	}
	want := []string{"mine", "mine", "bob-owner,bob-repo,mine"}
	for i := range got {
		if sortEach(got[i]) != want[i] {
			t.Errorf("event %d went to %q, want %q", i, got[i], want[i])
		}
	}
}
