package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/robothub/robothub/internal/hubemu"
)

func (q queries) RepoByName(ctx context.Context, typ, name string) (*hubemu.Repo, error) {
	r := &hubemu.Repo{Type: typ, Name: name}
	var created int64
	err := q.q.QueryRowContext(ctx, "SELECT id, owner_id, private, head_sha, discussion_count, created_at FROM repos WHERE type = ? AND name = ?", typ, name).
		Scan(&r.ID, &r.OwnerID, &r.Private, &r.HeadSha, &r.Discussions, &created)
	if err != nil {
		return nil, notFound(typ+":"+name, err)
	}
	r.CreatedAt = fromMS(created)
	return r, nil
}

func (t *tx) InsertRepo(ctx context.Context, r *hubemu.Repo) error {
	err := t.exec(ctx, "INSERT INTO repos (id, type, name, owner_id, private, head_sha, discussion_count, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		r.ID, r.Type, r.Name, r.OwnerID, r.Private, r.HeadSha, r.Discussions, ms(r.CreatedAt))
	return exists(r, err)
}

func (t *tx) UpdateRepo(ctx context.Context, r *hubemu.Repo) error {
	err := t.exec(ctx, "UPDATE repos SET name = ?, owner_id = ?, private = ?, head_sha = ?, discussion_count = ? WHERE id = ?",
		r.Name, r.OwnerID, r.Private, r.HeadSha, r.Discussions, r.ID)
	return exists(r, err)
}

func exists(r *hubemu.Repo, err error) error {
	if err != nil && uniqueViolation(err) {
		return fmt.Errorf("%s:%s: %w", r.Type, r.Name, hubemu.ErrExists)
	}
	return err
}

func (t *tx) DeleteRepo(ctx context.Context, repoID string) error {
	return t.exec(ctx, "DELETE FROM repos WHERE id = ?", repoID)
}

func (t *tx) InsertSpace(ctx context.Context, repoID string, st hubemu.SpaceState) error {
	tags, card, files := spaceJSON(st)
	return t.exec(ctx, "INSERT INTO spaces (repo_id, sdk, tags, card_data, files, last_modified) VALUES (?, ?, ?, ?, ?, ?)",
		repoID, st.SDK, tags, card, files, ms(st.Modified))
}

func (t *tx) UpdateSpace(ctx context.Context, repoID string, st hubemu.SpaceState) error {
	tags, card, files := spaceJSON(st)
	return t.exec(ctx, "UPDATE spaces SET sdk = ?, tags = ?, card_data = ?, files = ?, last_modified = ? WHERE repo_id = ?",
		st.SDK, tags, card, files, ms(st.Modified), repoID)
}

func spaceJSON(st hubemu.SpaceState) (tags, card, files string) {
	t, _ := json.Marshal(st.Tags)
	c, _ := json.Marshal(st.CardData)
	f, _ := json.Marshal(st.Files)
	tags, card, files = string(t), string(c), string(f)
	if st.Tags == nil {
		tags = "[]"
	}
	if st.CardData == nil {
		card = "{}"
	}
	if st.Files == nil {
		files = "[]"
	}
	return tags, card, files
}

const spaceColumns = `r.id, r.name, r.private, r.head_sha, r.created_at, r.owner_id, u.name,
	s.sdk, s.tags, s.card_data, s.files, s.last_modified
	FROM spaces s JOIN repos r ON r.id = s.repo_id JOIN users u ON u.id = r.owner_id`

type rowScanner interface{ Scan(dest ...any) error }

func scanSpace(row rowScanner) (*hubemu.Space, error) {
	sp := &hubemu.Space{}
	var created, modified int64
	var tags, card, files string
	if err := row.Scan(&sp.RepoID, &sp.Name, &sp.Private, &sp.HeadSha, &created, &sp.OwnerID, &sp.Owner,
		&sp.SDK, &tags, &card, &files, &modified); err != nil {
		return nil, err
	}
	sp.CreatedAt, sp.LastModified = fromMS(created), fromMS(modified)
	if err := json.Unmarshal([]byte(tags), &sp.Tags); err != nil {
		return nil, fmt.Errorf("space %s: stored tags: %w", sp.Name, err)
	}
	if err := json.Unmarshal([]byte(card), &sp.CardData); err != nil {
		return nil, fmt.Errorf("space %s: stored card data: %w", sp.Name, err)
	}
	if err := json.Unmarshal([]byte(files), &sp.Files); err != nil {
		return nil, fmt.Errorf("space %s: stored files: %w", sp.Name, err)
	}
	return sp, nil
}

func (q queries) SpaceByName(ctx context.Context, name string) (*hubemu.Space, error) {
	sp, err := scanSpace(q.q.QueryRowContext(ctx, "SELECT "+spaceColumns+" WHERE r.type = 'space' AND r.name = ?", name))
	return sp, notFound("space "+name, err)
}

func (q queries) Spaces(ctx context.Context, viewerID, author string) ([]*hubemu.Space, error) {
	query := "SELECT " + spaceColumns + " WHERE (r.private = 0 OR r.owner_id = ?)"
	args := []any{viewerID}
	if author != "" {
		query += " AND u.name = ?"
		args = append(args, author)
	}
	query += " ORDER BY s.last_modified DESC, r.name"
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*hubemu.Space
	for rows.Next() {
		sp, err := scanSpace(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sp)
	}
	return out, rows.Err()
}

func (q queries) SpaceTags(ctx context.Context, repoID string) ([]string, bool, error) {
	var tags string
	err := q.q.QueryRowContext(ctx, "SELECT tags FROM spaces WHERE repo_id = ?", repoID).Scan(&tags)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var out []string
	if err := json.Unmarshal([]byte(tags), &out); err != nil {
		return nil, false, fmt.Errorf("stored tags of repo %s: %w", repoID, err)
	}
	return out, true, nil
}

func (t *tx) InsertEvent(ctx context.Context, ev hubemu.Event) error {
	return t.exec(ctx, "INSERT INTO events (id, repo_id, emitter_id, scope, action, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
		ev.ID, ev.RepoID, ev.EmitterID, ev.Scope, ev.Action, string(ev.Payload), ms(ev.CreatedAt))
}
