package hubemu_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

type discussionItem struct {
	Num           int       `json:"num"`
	Title         string    `json:"title"`
	Status        string    `json:"status"`
	CreatedAt     time.Time `json:"createdAt"`
	IsPullRequest bool      `json:"isPullRequest"`
	Author        struct{ Name string }
	Repo          struct{ Name, Type string }
	NumComments   int `json:"numComments"`
}

type discussionPage struct {
	Discussions     []discussionItem `json:"discussions"`
	Count           int              `json:"count"`
	Start           int              `json:"start"`
	NumItemsPerPage int              `json:"numItemsPerPage"`
}

// An event on a discussion carries the state the earlier events left: a status change keeps the
// title and isPullRequest, a comment keeps everything, and mergeCommitId stays once merged.
func TestDiscussionEventsKeepState(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	pr := h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "discussion", Action: "create",
		Discussion: &hubemu.DiscussionInput{Title: "Fix the card", IsPullRequest: true}, Comment: &hubemu.CommentInput{Content: "please"}})
	p := payloadOf(t, pr)
	if p.Discussion.Num != 1 || p.Discussion.Title != "Fix the card" || !p.Discussion.IsPullRequest || p.Discussion.Status != "open" {
		t.Fatalf("create: %+v", p.Discussion)
	}
	id := p.Discussion.ID

	merged := payloadOf(t, h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "discussion", Action: "update",
		Discussion: &hubemu.DiscussionInput{Status: "merged"}}))
	d := merged.Discussion
	if d.ID != id || d.Title != "Fix the card" || !d.IsPullRequest || d.Status != "merged" || d.Changes == nil || len(d.Changes.MergeCommitID) != 40 {
		t.Fatalf("merge kept no state: %+v %+v", d, d.Changes)
	}
	mergeCommit := d.Changes.MergeCommitID

	comment := payloadOf(t, h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "discussion.comment", Action: "create",
		Comment: &hubemu.CommentInput{Content: "thanks"}}))
	d = comment.Discussion
	if d.Title != "Fix the card" || !d.IsPullRequest || d.Status != "merged" || d.Changes.MergeCommitID != mergeCommit || comment.Comment.Content != "thanks" {
		t.Fatalf("comment after merge: %+v %+v", d, d.Changes)
	}
	edited := payloadOf(t, h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "discussion.comment", Action: "update",
		Comment: &hubemu.CommentInput{Content: "thanks a lot"}}))
	if edited.Comment.ID != comment.Comment.ID || edited.Comment.Content != "thanks a lot" {
		t.Fatalf("an edit changes the latest comment: %+v, was %+v", edited.Comment, comment.Comment)
	}

	// A plain discussion cannot be merged, nor become a pull request.
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "discussion", Action: "create", Discussion: &hubemu.DiscussionInput{Title: "Question"}})
	for _, tt := range []struct {
		in  hubemu.DiscussionInput
		msg string
	}{
		{hubemu.DiscussionInput{Num: 2, Status: "merged"}, "is for pull requests"},
		{hubemu.DiscussionInput{Num: 2, IsPullRequest: true}, "is a discussion, not a pull request"},
		{hubemu.DiscussionInput{Num: 7}, "has no discussion #7"},
	} {
		status, body, _ := h.call("POST", "/api/emulator/events", h.token, hubemu.EmitInput{Repo: "model:alice/bert", Scope: "discussion", Action: "update", Discussion: &tt.in})
		if status != 400 || !strings.Contains(string(body), tt.msg) {
			t.Errorf("%+v: %d %s, want %q", tt.in, status, body, tt.msg)
		}
	}
}

// get_repo_discussions and get_discussion_details read what the events made.
func TestDiscussionsListing(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	bob, _, _ := h.emu.CreateToken(t.Context(), "bob", hubemu.RoleWrite, "t")
	h.createSpace(h.token, "wave", false)
	h.emit(h.token, hubemu.EmitInput{Repo: "space:alice/wave", Scope: "discussion", Action: "create",
		Discussion: &hubemu.DiscussionInput{Title: "Add a dance"}, Comment: &hubemu.CommentInput{Content: "it would be fun"}})
	h.emit(bob, hubemu.EmitInput{Repo: "space:alice/wave", Scope: "discussion", Action: "create",
		Discussion: &hubemu.DiscussionInput{Title: "Faster waves", IsPullRequest: true}})
	h.emit(h.token, hubemu.EmitInput{Repo: "space:alice/wave", Scope: "discussion", Action: "update",
		Discussion: &hubemu.DiscussionInput{Num: 1, Status: "closed", Title: "Add a dance (later)"}})
	h.emit(bob, hubemu.EmitInput{Repo: "space:alice/wave", Scope: "discussion.comment", Action: "create",
		Discussion: &hubemu.DiscussionInput{Num: 1}, Comment: &hubemu.CommentInput{Content: "ok"}})

	var page discussionPage
	h.mustCall("GET", "/api/spaces/alice/wave/discussions?p=0", "", nil, 200, &page)
	if page.Count != 2 || page.Start != 0 || page.NumItemsPerPage != 50 || len(page.Discussions) != 2 {
		t.Fatalf("page %+v", page)
	}
	prItem, disc := page.Discussions[0], page.Discussions[1]
	if prItem.Num != 2 || !prItem.IsPullRequest || prItem.Author.Name != "bob" || prItem.Status != "open" || prItem.Repo.Name != "alice/wave" || prItem.Repo.Type != "space" {
		t.Fatalf("newest first, the pull request: %+v", prItem)
	}
	if disc.Num != 1 || disc.Title != "Add a dance (later)" || disc.Status != "closed" || disc.Author.Name != "alice" || disc.NumComments != 2 || disc.CreatedAt.IsZero() {
		t.Fatalf("the discussion: %+v", disc)
	}
	for query, want := range map[string]string{
		"type=pull_request": "2", "type=discussion": "1", "status=open": "2", "status=closed": "1", "author=alice": "1", "author=carol": "",
	} {
		h.mustCall("GET", "/api/spaces/alice/wave/discussions?"+query, "", nil, 200, &page)
		var nums []string
		for _, d := range page.Discussions {
			nums = append(nums, fmt.Sprint(d.Num))
		}
		if strings.Join(nums, ",") != want {
			t.Errorf("%s: %v, want %s", query, nums, want)
		}
	}

	var details struct {
		discussionItem
		Events []struct {
			Type   string
			Author struct{ Name string }
			Data   map[string]any
		}
		Changes            map[string]string
		FilesWithConflicts []string
	}
	h.mustCall("GET", "/api/spaces/alice/wave/discussions/1", "", nil, 200, &details)
	var kinds []string
	for _, ev := range details.Events {
		kinds = append(kinds, ev.Type+"/"+ev.Author.Name)
	}
	if got := strings.Join(kinds, " "); got != "comment/alice title-change/alice status-change/alice comment/bob" {
		t.Fatalf("history %s", got)
	}
	if latest := details.Events[0].Data["latest"].(map[string]any); latest["raw"] != "it would be fun" {
		t.Fatalf("first comment %v", details.Events[0].Data)
	}
	h.mustCall("GET", "/api/spaces/alice/wave/discussions/2", "", nil, 200, &details)
	if details.Changes["base"] != "refs/heads/main" || details.FilesWithConflicts == nil {
		t.Fatalf("pull request details %+v", details)
	}
	h.mustCall("GET", "/api/spaces/alice/wave/discussions/3", "", nil, 404, nil)
	h.mustCall("GET", "/api/spaces/alice/nope/discussions", h.token, nil, 404, nil)

	// Discussions of a model that only events made are listed too; a private repo's only to its owner.
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/secret", Scope: "repo.config", Action: "update", Private: ptr(true)})
	h.emit(h.token, hubemu.EmitInput{Repo: "model:alice/secret", Scope: "discussion", Action: "create"})
	h.mustCall("GET", "/api/models/alice/secret/discussions", "", nil, 401, nil)
	h.mustCall("GET", "/api/models/alice/secret/discussions", bob, nil, 404, nil)
	h.mustCall("GET", "/api/models/alice/secret/discussions", h.token, nil, 200, &page)
	if page.Count != 1 {
		t.Fatalf("owner's private model: %+v", page)
	}
}

func ptr[T any](v T) *T { return &v }

// payloadOf decodes the payload of an emitted event.
func payloadOf(t *testing.T, res hubemu.EmitResult) *webhook.Payload {
	t.Helper()
	p, err := webhook.Parse(res.Payload)
	if err != nil {
		t.Fatalf("payload %s: %v", res.Payload, err)
	}
	return p
}
