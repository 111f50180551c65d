package hubemu

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/robothub/robothub/core/fault"

	"github.com/robothub/robothub/core/webhook"
)

// Discussions exist on this hub through the events emitted on them (robothub hub emit, POST
// /api/emulator/events): each discussion event updates the stored discussion, so that the next
// event carries its state (title, isPullRequest, status, mergeCommitId once merged) and the
// hub's discussion API lists it, as the public Python client's get_repo_discussions and
// get_discussion_details (hf discussions list and info) read it:
//
//	GET /api/{models|datasets|spaces}/{owner}/{name}/discussions?p=&type=&status=&author=
//	GET /api/{models|datasets|spaces}/{owner}/{name}/discussions/{num}

// discussionsPerPage is the page size of the discussion listing, as on the public hub.
const discussionsPerPage = 50

// discussionRow is a stored discussion.
type discussionRow struct {
	num           int
	title         string
	isPullRequest bool
	status        string
	authorID      string
	mergeCommitID string
	deleted       bool
	createdAt     time.Time
}

func loadDiscussion(ctx context.Context, q querier, repoID string, num int) (*discussionRow, error) {
	d := &discussionRow{num: num}
	var created int64
	err := q.QueryRowContext(ctx, `SELECT title, is_pull_request, status, author_id, merge_commit_id, deleted, created_at
		FROM discussions WHERE repo_id = ? AND num = ?`, repoID, num).
		Scan(&d.title, &d.isPullRequest, &d.status, &d.authorID, &d.mergeCommitID, &d.deleted, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	d.createdAt = fromMS(created)
	return d, err
}

// discussionEvent applies a discussion or discussion.comment event to the stored discussion and
// returns the discussion and comment its payload carries. Fields the input leaves out keep their
// stored value; a new discussion gets the next number of the repo.
func (e *Emulator) discussionEvent(ctx context.Context, tx *sql.Tx, by Principal, repo *repoRow, in EmitInput, web, api string, now time.Time) (*webhook.Discussion, *webhook.Comment, error) {
	d := in.Discussion
	if d == nil {
		d = &DiscussionInput{}
	}
	creating := in.Scope == webhook.ScopeDiscussion && in.Action == "create"
	num := d.Num
	switch {
	case creating && num != 0 && num != repo.discussions+1:
		return nil, nil, errorf(fault.Invalid, "discussion.num: a new discussion of %s:%s is #%d (leave num out)", repo.typ, repo.name, repo.discussions+1)
	case creating:
		repo.discussions++
		num = repo.discussions
	case num == 0:
		num = repo.discussions
	}
	if num <= 0 || num > repo.discussions {
		return nil, nil, errorf(fault.Invalid, "discussion: %s:%s has no discussion #%d (emit a discussion create first)", repo.typ, repo.name, max(num, 1))
	}
	row, err := loadDiscussion(ctx, tx, repo.id, num)
	if err != nil {
		return nil, nil, err
	}
	isNew := row == nil // a new discussion, or one emitted before discussions were stored
	if isNew {
		row = &discussionRow{num: num, isPullRequest: d.IsPullRequest, status: "open", authorID: by.User.ID, createdAt: now.UTC().Truncate(time.Millisecond)}
		row.title = fmt.Sprintf("Discussion #%d", num)
		if d.IsPullRequest {
			row.title = fmt.Sprintf("Pull request #%d", num)
		}
	}
	if row.deleted {
		return nil, nil, errorf(fault.Invalid, "discussion: #%d of %s:%s was deleted", num, repo.typ, repo.name)
	}
	if d.IsPullRequest && !row.isPullRequest {
		return nil, nil, errorf(fault.Invalid, "discussion.isPullRequest: #%d of %s:%s is a discussion, not a pull request", num, repo.typ, repo.name)
	}
	oldTitle, oldStatus := row.title, row.status
	if d.Title != "" {
		row.title = d.Title
	}
	if d.Status != "" {
		switch d.Status {
		case "open", "closed":
		case "merged", "draft":
			if !row.isPullRequest {
				return nil, nil, errorf(fault.Invalid, "discussion.status: %q is for pull requests; #%d is a discussion", d.Status, num)
			}
		default:
			return nil, nil, errorf(fault.Invalid, "discussion.status: %q is not one of open, closed, merged, draft", d.Status)
		}
		row.status = d.Status
	}
	if row.status == "merged" && row.mergeCommitID == "" {
		row.mergeCommitID = newSha()
	}
	if in.Scope == webhook.ScopeDiscussion && in.Action == "delete" {
		row.deleted = true
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO discussions (repo_id, num, title, is_pull_request, status, author_id, merge_commit_id, deleted, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (repo_id, num) DO UPDATE SET title = excluded.title, status = excluded.status,
		merge_commit_id = excluded.merge_commit_id, deleted = excluded.deleted`,
		repo.id, num, row.title, row.isPullRequest, row.status, row.authorID, row.mergeCommitID, row.deleted, ms(row.createdAt)); err != nil {
		return nil, nil, err
	}

	dweb := fmt.Sprintf("%s/discussions/%d", web, num)
	disc := &webhook.Discussion{
		// The same discussion keeps the same ID across events: derive it from the repo and number.
		ID: discussionID(repo.id, num), Num: num, Title: row.title, Status: row.status,
		URL:    webhook.URL{Web: dweb, API: fmt.Sprintf("%s/discussions/%d", api, num)},
		Author: webhook.Ref{ID: row.authorID}, IsPullRequest: row.isPullRequest,
	}
	if row.isPullRequest {
		disc.Changes = &webhook.DiscussionChanges{Base: "refs/heads/main", MergeCommitID: row.mergeCommitID}
	}
	// The discussion's history, as its details show it.
	if !isNew && row.title != oldTitle {
		if err := addDiscussionEvent(ctx, tx, repo.id, num, "title-change", by.User.ID, map[string]string{"from": oldTitle, "to": row.title}, now); err != nil {
			return nil, nil, err
		}
	}
	if !isNew && row.status != oldStatus {
		if err := addDiscussionEvent(ctx, tx, repo.id, num, "status-change", by.User.ID, map[string]string{"status": row.status}, now); err != nil {
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
		var raw string
		err := tx.QueryRowContext(ctx, `SELECT id, data FROM discussion_events WHERE repo_id = ? AND num = ? AND type = 'comment'
			ORDER BY created_at DESC, rowid DESC LIMIT 1`, repo.id, num).Scan(&comment.ID, &raw)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil, nil, errorf(fault.Invalid, "comment: discussion #%d of %s:%s has no comment to update", num, repo.typ, repo.name)
		case err != nil:
			return nil, nil, err
		}
		var old commentData
		_ = json.Unmarshal([]byte(raw), &old)
		data.Edited, data.NumEdits = true, old.NumEdits+1
		enc, _ := json.Marshal(data)
		if _, err := tx.ExecContext(ctx, "UPDATE discussion_events SET data = ? WHERE id = ?", string(enc), comment.ID); err != nil {
			return nil, nil, err
		}
	} else {
		comment.ID = newID(now)
		if err := insertDiscussionEvent(ctx, tx, comment.ID, repo.id, num, "comment", by.User.ID, data, now); err != nil {
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

func addDiscussionEvent(ctx context.Context, tx *sql.Tx, repoID string, num int, typ, authorID string, data any, now time.Time) error {
	return insertDiscussionEvent(ctx, tx, newID(now), repoID, num, typ, authorID, data, now)
}

func insertDiscussionEvent(ctx context.Context, tx *sql.Tx, id, repoID string, num int, typ, authorID string, data any, now time.Time) error {
	enc, err := json.Marshal(data)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO discussion_events (id, repo_id, num, type, author_id, data, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, id, repoID, num, typ, authorID, string(enc), ms(now))
	return err
}

// discussionRepo returns the repo of a /api/{type}/{owner}/{name}/discussions route if viewer may
// see it: any repo that exists here (emitted events make models and datasets too).
func (e *Emulator) discussionRepo(ctx context.Context, r *http.Request, viewer *Principal) (*repoRow, string, error) {
	types := map[string]string{"models": "model", "datasets": "dataset", "spaces": "space"}
	typ, ok := types[r.PathValue("type")]
	name := r.PathValue("owner") + "/" + r.PathValue("name")
	if !ok {
		return nil, "", errorf(fault.NotFound, "no such route: %s %s", r.Method, r.URL.Path)
	}
	repo := &repoRow{typ: typ, name: name}
	err := e.db.r.QueryRowContext(ctx, "SELECT id, owner_id, private FROM repos WHERE type = ? AND name = ?", typ, name).
		Scan(&repo.id, &repo.ownerID, &repo.private)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && repo.private && (viewer == nil || viewer.User.ID != repo.ownerID)) {
		return nil, "", repoNotFound(viewer == nil, name)
	}
	if err != nil {
		return nil, "", err
	}
	return repo, typ, nil
}

// discussionRecord is a discussion in the public hub's listing.
type discussionRecord struct {
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

const discussionColumns = `d.num, d.title, d.status, d.created_at, d.is_pull_request, d.merge_commit_id, COALESCE(u.name, ''),
	(SELECT COUNT(*) FROM discussion_events c WHERE c.repo_id = d.repo_id AND c.num = d.num AND c.type = 'comment')
	FROM discussions d LEFT JOIN users u ON u.id = d.author_id`

func scanDiscussion(row rowScanner, repo *repoRow) (discussionRecord, string, error) {
	var rec discussionRecord
	var created int64
	var author, merge string
	if err := row.Scan(&rec.Num, &rec.Title, &rec.Status, &created, &rec.IsPullRequest, &merge, &author, &rec.NumComments); err != nil {
		return rec, "", err
	}
	rec.CreatedAt = fromMS(created)
	rec.Author = map[string]any{"name": author, "type": "user"}
	rec.Repo = map[string]any{"name": repo.name, "type": repo.typ}
	rec.TopReactions = []any{}
	return rec, merge, nil
}

// handleDiscussions lists a repo's discussions, newest first, 50 a page (p from 0).
func (e *Emulator) handleDiscussions(w http.ResponseWriter, r *http.Request, viewer *Principal) error {
	repo, _, err := e.discussionRepo(r.Context(), r, viewer)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	where, args := "d.repo_id = ? AND d.deleted = 0", []any{repo.id}
	switch t := q.Get("type"); t {
	case "", "all":
	case "discussion", "pull_request":
		where += " AND d.is_pull_request = ?"
		args = append(args, t == "pull_request")
	default:
		return errorf(fault.Invalid, "type: %q is not one of all, discussion, pull_request", t)
	}
	switch s := q.Get("status"); s {
	case "", "all":
	case "open":
		where += " AND d.status IN ('open', 'draft')"
	case "closed":
		where += " AND d.status IN ('closed', 'merged')"
	default:
		return errorf(fault.Invalid, "status: %q is not one of all, open, closed", s)
	}
	if a := q.Get("author"); a != "" {
		where += " AND u.name = ?"
		args = append(args, a)
	}
	page := 0
	if p := q.Get("p"); p != "" {
		if page, err = strconv.Atoi(p); err != nil || page < 0 {
			return errorf(fault.Invalid, "p: %q is not a page number (from 0)", p)
		}
	}
	var count int
	if err := e.db.r.QueryRowContext(r.Context(), "SELECT COUNT(*) FROM discussions d LEFT JOIN users u ON u.id = d.author_id WHERE "+where, args...).Scan(&count); err != nil {
		return err
	}
	rows, err := e.db.r.QueryContext(r.Context(), "SELECT "+discussionColumns+" WHERE "+where+" ORDER BY d.num DESC LIMIT ? OFFSET ?",
		append(args, discussionsPerPage, page*discussionsPerPage)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	list := []discussionRecord{}
	for rows.Next() {
		rec, _, err := scanDiscussion(rows, repo)
		if err != nil {
			return err
		}
		list = append(list, rec)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"discussions": list, "count": count, "start": page * discussionsPerPage, "numItemsPerPage": discussionsPerPage})
	return nil
}

// discussionEventRecord is one entry of a discussion's history.
type discussionEventRecord struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"createdAt"`
	Author    map[string]any  `json:"author"`
	Data      json.RawMessage `json:"data"`
}

// handleDiscussion answers one discussion with its history: comments, status and title changes.
func (e *Emulator) handleDiscussion(w http.ResponseWriter, r *http.Request, viewer *Principal) error {
	repo, _, err := e.discussionRepo(r.Context(), r, viewer)
	if err != nil {
		return err
	}
	num, err := strconv.Atoi(r.PathValue("num"))
	if err != nil || num < 1 {
		return errorf(fault.Invalid, "%q is not a discussion number", r.PathValue("num"))
	}
	rec, merge, err := scanDiscussion(e.db.r.QueryRowContext(r.Context(), "SELECT "+discussionColumns+" WHERE d.repo_id = ? AND d.num = ? AND d.deleted = 0", repo.id, num), repo)
	if errors.Is(err, sql.ErrNoRows) {
		return errorf(fault.NotFound, "%s %s has no discussion #%d", repo.typ, repo.name, num)
	}
	if err != nil {
		return err
	}
	rows, err := e.db.r.QueryContext(r.Context(), `SELECT e.id, e.type, e.created_at, COALESCE(u.name, ''), e.data FROM discussion_events e
		LEFT JOIN users u ON u.id = e.author_id WHERE e.repo_id = ? AND e.num = ? ORDER BY e.created_at, e.rowid`, repo.id, num)
	if err != nil {
		return err
	}
	defer rows.Close()
	events := []discussionEventRecord{}
	for rows.Next() {
		var ev discussionEventRecord
		var created int64
		var author, data string
		if err := rows.Scan(&ev.ID, &ev.Type, &created, &author, &data); err != nil {
			return err
		}
		ev.CreatedAt, ev.Author, ev.Data = fromMS(created), map[string]any{"name": author, "type": "user"}, json.RawMessage(data)
		events = append(events, ev)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	out := struct {
		discussionRecord
		Events             []discussionEventRecord `json:"events"`
		Changes            map[string]string       `json:"changes,omitempty"`
		FilesWithConflicts any                     `json:"filesWithConflicts,omitempty"` // [] for a pull request
	}{discussionRecord: rec, Events: events}
	if rec.IsPullRequest {
		out.Changes = map[string]string{"base": "refs/heads/main"}
		if merge != "" {
			out.Changes["mergeCommitId"] = merge
		}
		out.FilesWithConflicts = []string{}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
