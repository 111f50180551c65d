package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/robothub/robothub/internal/hubemu"
)

func (q queries) UserByName(ctx context.Context, name string) (hubemu.User, error) {
	u := hubemu.User{Name: name}
	var created int64
	err := q.q.QueryRowContext(ctx, "SELECT id, kind, created_at FROM users WHERE name = ?", name).Scan(&u.ID, &u.Kind, &created)
	u.CreatedAt = fromMS(created)
	return u, notFound("user "+name, err)
}

func (q queries) Users(ctx context.Context) ([]hubemu.User, error) {
	rows, err := q.q.QueryContext(ctx, "SELECT id, name, kind, created_at FROM users ORDER BY created_at, name")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []hubemu.User
	for rows.Next() {
		var u hubemu.User
		var created int64
		if err := rows.Scan(&u.ID, &u.Name, &u.Kind, &created); err != nil {
			return nil, err
		}
		u.CreatedAt = fromMS(created)
		out = append(out, u)
	}
	return out, rows.Err()
}

func (q queries) HasTokens(ctx context.Context) (bool, error) {
	var one int
	err := q.q.QueryRowContext(ctx, "SELECT 1 FROM tokens LIMIT 1").Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (q queries) PrincipalByToken(ctx context.Context, hash string) (hubemu.Principal, error) {
	var p hubemu.Principal
	var created int64
	err := q.q.QueryRowContext(ctx, `SELECT u.id, u.name, u.kind, u.created_at, t.name, t.role
		FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = ?`, hash).
		Scan(&p.User.ID, &p.User.Name, &p.User.Kind, &created, &p.TokenName, &p.Role)
	p.User.CreatedAt = fromMS(created)
	return p, notFound("token", err)
}

func (t *tx) CreateUser(ctx context.Context, u hubemu.User) error {
	return t.exec(ctx, "INSERT INTO users (id, name, kind, created_at) VALUES (?, ?, ?, ?)", u.ID, u.Name, u.Kind, ms(u.CreatedAt))
}

func (t *tx) CreateToken(ctx context.Context, tok hubemu.Token) error {
	return t.exec(ctx, "INSERT INTO tokens (hash, user_id, name, role, created_at) VALUES (?, ?, ?, ?, ?)",
		tok.Hash, tok.UserID, tok.Name, tok.Role, ms(tok.CreatedAt))
}
