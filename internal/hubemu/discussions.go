package hubemu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/robothub/robothub/core/fault"

	"github.com/robothub/robothub/core/webhook"
)

// Discussions exist on this hub through the events emitted on them (robothub hub emit, POST
// /api/emulator/events): each discussion event updates the stored discussion, so that the next
// event carries its state (title, isPullRequest, status, mergeCommitId once merged) and the
// hub's discussion API lists it, as the public Python client's get_repo_discussions and
// get_discussion_details (hf discussions list and info) read it.

// DiscussionsPerPage is the page size of the discussion listing, as on the public hub.
const DiscussionsPerPage = 50

// Discussion is a stored discussion.
type Discussion struct {
	Num           int
	Title         string
	IsPullRequest bool
	Status        string // open, closed, merged, draft
	AuthorID      string
	MergeCommitID string
	Deleted       bool
	CreatedAt     time.Time
}

// DiscussionEvent is one entry of a discussion's history: a comment, a status or a title change.
type DiscussionEvent struct {
	ID        string
	RepoID    string
	Num       int
	Type      string // comment, status-change, title-change
	AuthorID  string
	Data      []byte // JSON, as the discussion's details show it
	CreatedAt time.Time
}

// discussionEvent applies a discussion or discussion.comment event to the stored discussion and
// returns the discussion and comment its payload carries. Fields the input leaves out keep their
// stored value; a new discussion gets the next number of the repo.
func (e *Emulator) discussionEvent(ctx context.Context, tx Tx, by Principal, repo *Repo, in EmitInput, web, api string, now time.Time) (*webhook.Discussion, *webhook.Comment, error) {
	d := in.Discussion
	if d == nil {
		d = &DiscussionInput{}
	}
	creating := in.Scope == webhook.ScopeDiscussion && in.Action == "create"
	num := d.Num
	switch {
	case creating && num != 0 && num != repo.Discussions+1:
		return nil, nil, errorf(fault.Invalid, "discussion.num: a new discussion of %s:%s is #%d (leave num out)", repo.Type, repo.Name, repo.Discussions+1)
	case creating:
		repo.Discussions++
		num = repo.Discussions
	case num == 0:
		num = repo.Discussions
	}
	if num <= 0 || num > repo.Discussions {
		return nil, nil, errorf(fault.Invalid, "discussion: %s:%s has no discussion #%d (emit a discussion create first)", repo.Type, repo.Name, max(num, 1))
	}
	row, err := tx.Discussion(ctx, repo.ID, num)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, nil, err
	}
	isNew := row == nil // a new discussion, or one emitted before discussions were stored
	if isNew {
		row = &Discussion{Num: num, IsPullRequest: d.IsPullRequest, Status: "open", AuthorID: by.User.ID, CreatedAt: now.UTC().Truncate(time.Millisecond)}
		row.Title = fmt.Sprintf("Discussion #%d", num)
		if d.IsPullRequest {
			row.Title = fmt.Sprintf("Pull request #%d", num)
		}
	}
	if row.Deleted {
		return nil, nil, errorf(fault.Invalid, "discussion: #%d of %s:%s was deleted", num, repo.Type, repo.Name)
	}
	if d.IsPullRequest && !row.IsPullRequest {
		return nil, nil, errorf(fault.Invalid, "discussion.isPullRequest: #%d of %s:%s is a discussion, not a pull request", num, repo.Type, repo.Name)
	}
	oldTitle, oldStatus := row.Title, row.Status
	if d.Title != "" {
		row.Title = d.Title
	}
	if d.Status != "" {
		switch d.Status {
		case "open", "closed":
		case "merged", "draft":
			if !row.IsPullRequest {
				return nil, nil, errorf(fault.Invalid, "discussion.status: %q is for pull requests; #%d is a discussion", d.Status, num)
			}
		default:
			return nil, nil, errorf(fault.Invalid, "discussion.status: %q is not one of open, closed, merged, draft", d.Status)
		}
		row.Status = d.Status
	}
	if row.Status == "merged" && row.MergeCommitID == "" {
		row.MergeCommitID = newSha()
	}
	if in.Scope == webhook.ScopeDiscussion && in.Action == "delete" {
		row.Deleted = true
	}
	if err := tx.PutDiscussion(ctx, repo.ID, row); err != nil {
		return nil, nil, err
	}

	dweb := fmt.Sprintf("%s/discussions/%d", web, num)
	disc := &webhook.Discussion{
		// The same discussion keeps the same ID across events: derive it from the repo and number.
		ID: discussionID(repo.ID, num), Num: num, Title: row.Title, Status: row.Status,
		URL:    webhook.URL{Web: dweb, API: fmt.Sprintf("%s/discussions/%d", api, num)},
		Author: webhook.Ref{ID: row.AuthorID}, IsPullRequest: row.IsPullRequest,
	}
	if row.IsPullRequest {
		disc.Changes = &webhook.DiscussionChanges{Base: "refs/heads/main", MergeCommitID: row.MergeCommitID}
	}
	// The discussion's history, as its details show it.
	if !isNew && row.Title != oldTitle {
		if err := addDiscussionEvent(ctx, tx, repo.ID, num, "title-change", by.User.ID, map[string]string{"from": oldTitle, "to": row.Title}, now); err != nil {
			return nil, nil, err
		}
	}
	if !isNew && row.Status != oldStatus {
		if err := addDiscussionEvent(ctx, tx, repo.ID, num, "status-change", by.User.ID, map[string]string{"status": row.Status}, now); err != nil {
			return nil, nil, err
		}
	}
	if in.Scope != webhook.ScopeDiscussionComment && !creating {
		return disc, nil, nil
	}
	c := in.Comment
	if c == nil {
		c = &CommentInput{}
	}
	comment := &webhook.Comment{Author: webhook.Ref{ID: by.User.ID}, Hidden: c.Hidden}
	if !c.Hidden {
		comment.Content = c.Content // the hub leaves out the content of a hidden comment
	}
	data := commentData{Hidden: c.Hidden, Latest: commentText{Raw: c.Content, HTML: c.Content}}
	if in.Scope == webhook.ScopeDiscussionComment && in.Action == "update" {
		// An edit changes the latest comment of the discussion, which keeps its ID.
		id, raw, err := tx.LatestComment(ctx, repo.ID, num)
		comment.ID = id
		switch {
		case errors.Is(err, ErrNotFound):
			return nil, nil, errorf(fault.Invalid, "comment: discussion #%d of %s:%s has no comment to update", num, repo.Type, repo.Name)
		case err != nil:
			return nil, nil, err
		}
		var old commentData
		_ = json.Unmarshal(raw, &old)
		data.Edited, data.NumEdits = true, old.NumEdits+1
		enc, _ := json.Marshal(data)
		if err := tx.SetDiscussionEventData(ctx, comment.ID, enc); err != nil {
			return nil, nil, err
		}
	} else {
		comment.ID = NewID(now)
		if err := insertDiscussionEvent(ctx, tx, comment.ID, repo.ID, num, "comment", by.User.ID, data, now); err != nil {
			return nil, nil, err
		}
	}
	comment.URL = webhook.URL{Web: dweb + "#" + comment.ID}
	return disc, comment, nil
}

type commentText struct {
	Raw  string `json:"raw"`
	HTML string `json:"html"`
}

// commentData is the data of a comment in a discussion's details, in the public hub's shape.
type commentData struct {
	Edited   bool        `json:"edited"`
	Hidden   bool        `json:"hidden"`
	NumEdits int         `json:"numEdits"`
	Latest   commentText `json:"latest"`
}

func addDiscussionEvent(ctx context.Context, tx Tx, repoID string, num int, typ, authorID string, data any, now time.Time) error {
	return insertDiscussionEvent(ctx, tx, NewID(now), repoID, num, typ, authorID, data, now)
}

func insertDiscussionEvent(ctx context.Context, tx Tx, id, repoID string, num int, typ, authorID string, data any, now time.Time) error {
	enc, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return tx.InsertDiscussionEvent(ctx, DiscussionEvent{ID: id, RepoID: repoID, Num: num, Type: typ, AuthorID: authorID, Data: enc, CreatedAt: now})
}

// DiscussionRepo returns the repo of type and name if viewer (nil: anonymous) may see its
// discussions: any repo that exists here (emitted events make models and datasets too).
func (e *Emulator) DiscussionRepo(ctx context.Context, viewer *Principal, typ, name string) (*Repo, error) {
	repo, err := e.db.RepoByName(ctx, typ, name)
	if errors.Is(err, ErrNotFound) || (err == nil && repo.Private && (viewer == nil || viewer.User.ID != repo.OwnerID)) {
		return nil, RepoNotFound(viewer == nil, name)
	}
	return repo, err
}

// DiscussionRecord is a discussion in the public hub's listing.
type DiscussionRecord struct {
	Num           int            `json:"num"`
	Title         string         `json:"title"`
	Status        string         `json:"status"`
	CreatedAt     time.Time      `json:"createdAt"`
	IsPullRequest bool           `json:"isPullRequest"`
	Author        map[string]any `json:"author"`
	Repo          map[string]any `json:"repo"`
	NumComments   int            `json:"numComments"`
	Pinned        bool           `json:"pinned"`
	TopReactions  []any          `json:"topReactions"`
}

// DiscussionPage is a page of a repo's discussions, newest first, as the public hub lists them.
type DiscussionPage struct {
	Discussions     []DiscussionRecord `json:"discussions"`
	Count           int                `json:"count"`
	Start           int                `json:"start"`
	NumItemsPerPage int                `json:"numItemsPerPage"`
}

// Discussions lists page (from 0) of a repo's discussions, DiscussionsPerPage a page.
func (e *Emulator) Discussions(ctx context.Context, repo *Repo, q DiscussionQuery, page int) (*DiscussionPage, error) {
	q.Offset, q.Limit = page*DiscussionsPerPage, DiscussionsPerPage
	list, count, err := e.db.Discussions(ctx, repo, q)
	if err != nil {
		return nil, err
	}
	if list == nil {
		list = []DiscussionRecord{}
	}
	return &DiscussionPage{Discussions: list, Count: count, Start: q.Offset, NumItemsPerPage: DiscussionsPerPage}, nil
}

// DiscussionEventRecord is one entry of a discussion's history.
type DiscussionEventRecord struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"createdAt"`
	Author    map[string]any  `json:"author"`
	Data      json.RawMessage `json:"data"`
}

// DiscussionView is one discussion with its history (comments, status and title changes), in
// the public hub's shape.
type DiscussionView struct {
	DiscussionRecord
	Events             []DiscussionEventRecord `json:"events"`
	Changes            map[string]string       `json:"changes,omitempty"`
	FilesWithConflicts any                     `json:"filesWithConflicts,omitempty"` // [] for a pull request
}

// DiscussionDetails returns one discussion of a repo with its history.
func (e *Emulator) DiscussionDetails(ctx context.Context, repo *Repo, num int) (*DiscussionView, error) {
	d, err := e.db.DiscussionDetails(ctx, repo, num)
	if errors.Is(err, ErrNotFound) {
		return nil, errorf(fault.NotFound, "%s %s has no discussion #%d", repo.Type, repo.Name, num)
	}
	if err != nil {
		return nil, err
	}
	out := &DiscussionView{DiscussionRecord: d.DiscussionRecord, Events: d.Events}
	if out.Events == nil {
		out.Events = []DiscussionEventRecord{}
	}
	if d.IsPullRequest {
		out.Changes = map[string]string{"base": "refs/heads/main"}
		if d.MergeCommitID != "" {
			out.Changes["mergeCommitId"] = d.MergeCommitID
		}
		out.FilesWithConflicts = []string{}
	}
	return out, nil
}
