package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/robothub/robothub/internal/hubemu"
)

func (q queries) Discussion(ctx context.Context, repoID string, num int) (*hubemu.Discussion, error) {
	d := &hubemu.Discussion{Num: num}
	var created int64
	err := q.q.QueryRowContext(ctx, `SELECT title, is_pull_request, status, author_id, merge_commit_id, deleted, created_at
		FROM discussions WHERE repo_id = ? AND num = ?`, repoID, num).
		Scan(&d.Title, &d.IsPullRequest, &d.Status, &d.AuthorID, &d.MergeCommitID, &d.Deleted, &created)
	if err != nil {
		return nil, notFound(fmt.Sprintf("discussion #%d", num), err)
	}
	d.CreatedAt = fromMS(created)
	return d, nil
}

func (t *tx) PutDiscussion(ctx context.Context, repoID string, d *hubemu.Discussion) error {
	return t.exec(ctx, `INSERT INTO discussions (repo_id, num, title, is_pull_request, status, author_id, merge_commit_id, deleted, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (repo_id, num) DO UPDATE SET title = excluded.title, status = excluded.status,
		merge_commit_id = excluded.merge_commit_id, deleted = excluded.deleted`,
		repoID, d.Num, d.Title, d.IsPullRequest, d.Status, d.AuthorID, d.MergeCommitID, d.Deleted, ms(d.CreatedAt))
}

func (t *tx) InsertDiscussionEvent(ctx context.Context, ev hubemu.DiscussionEvent) error {
	return t.exec(ctx, `INSERT INTO discussion_events (id, repo_id, num, type, author_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		ev.ID, ev.RepoID, ev.Num, ev.Type, ev.AuthorID, string(ev.Data), ms(ev.CreatedAt))
}

func (t *tx) SetDiscussionEventData(ctx context.Context, id string, data []byte) error {
	return t.exec(ctx, "UPDATE discussion_events SET data = ? WHERE id = ?", string(data), id)
}

func (q queries) LatestComment(ctx context.Context, repoID string, num int) (string, []byte, error) {
	var id, data string
	err := q.q.QueryRowContext(ctx, `SELECT id, data FROM discussion_events WHERE repo_id = ? AND num = ? AND type = 'comment'
		ORDER BY created_at DESC, rowid DESC LIMIT 1`, repoID, num).Scan(&id, &data)
	return id, []byte(data), notFound("comment", err)
}

const discussionColumns = `d.num, d.title, d.status, d.created_at, d.is_pull_request, d.merge_commit_id, COALESCE(u.name, ''),
	(SELECT COUNT(*) FROM discussion_events c WHERE c.repo_id = d.repo_id AND c.num = d.num AND c.type = 'comment')
	FROM discussions d LEFT JOIN users u ON u.id = d.author_id`

func scanDiscussion(row rowScanner, repo *hubemu.Repo) (hubemu.DiscussionRecord, string, error) {
	var rec hubemu.DiscussionRecord
	var created int64
	var author, merge string
	if err := row.Scan(&rec.Num, &rec.Title, &rec.Status, &created, &rec.IsPullRequest, &merge, &author, &rec.NumComments); err != nil {
		return rec, "", err
	}
	rec.CreatedAt = fromMS(created)
	rec.Author = map[string]any{"name": author, "type": "user"}
	rec.Repo = map[string]any{"name": repo.Name, "type": repo.Type}
	rec.TopReactions = []any{}
	return rec, merge, nil
}

func (q queries) Discussions(ctx context.Context, repo *hubemu.Repo, dq hubemu.DiscussionQuery) ([]hubemu.DiscussionRecord, int, error) {
	where, args := "d.repo_id = ? AND d.deleted = 0", []any{repo.ID}
	if dq.PullRequests != nil {
		where += " AND d.is_pull_request = ?"
		args = append(args, *dq.PullRequests)
	}
	switch dq.Status {
	case "open":
		where += " AND d.status IN ('open', 'draft')"
	case "closed":
		where += " AND d.status IN ('closed', 'merged')"
	}
	if dq.Author != "" {
		where += " AND u.name = ?"
		args = append(args, dq.Author)
	}
	var count int
	if err := q.q.QueryRowContext(ctx, "SELECT COUNT(*) FROM discussions d LEFT JOIN users u ON u.id = d.author_id WHERE "+where, args...).Scan(&count); err != nil {
		return nil, 0, err
	}
	rows, err := q.q.QueryContext(ctx, "SELECT "+discussionColumns+" WHERE "+where+" ORDER BY d.num DESC LIMIT ? OFFSET ?",
		append(args, dq.Limit, dq.Offset)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var list []hubemu.DiscussionRecord
	for rows.Next() {
		rec, _, err := scanDiscussion(rows, repo)
		if err != nil {
			return nil, 0, err
		}
		list = append(list, rec)
	}
	return list, count, rows.Err()
}

func (q queries) DiscussionDetails(ctx context.Context, repo *hubemu.Repo, num int) (*hubemu.DiscussionDetails, error) {
	rec, merge, err := scanDiscussion(q.q.QueryRowContext(ctx, "SELECT "+discussionColumns+" WHERE d.repo_id = ? AND d.num = ? AND d.deleted = 0", repo.ID, num), repo)
	if err != nil {
		return nil, notFound(fmt.Sprintf("discussion #%d", num), err)
	}
	out := &hubemu.DiscussionDetails{DiscussionRecord: rec, MergeCommitID: merge}
	rows, err := q.q.QueryContext(ctx, `SELECT e.id, e.type, e.created_at, COALESCE(u.name, ''), e.data FROM discussion_events e
		LEFT JOIN users u ON u.id = e.author_id WHERE e.repo_id = ? AND e.num = ? ORDER BY e.created_at, e.rowid`, repo.ID, num)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var ev hubemu.DiscussionEventRecord
		var created int64
		var author, data string
		if err := rows.Scan(&ev.ID, &ev.Type, &created, &author, &data); err != nil {
			return nil, err
		}
		ev.CreatedAt, ev.Author, ev.Data = fromMS(created), map[string]any{"name": author, "type": "user"}, json.RawMessage(data)
		out.Events = append(out.Events, ev)
	}
	return out, rows.Err()
}
