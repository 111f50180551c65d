// Package store keeps the local hub's state in SQLite (modernc.org/sqlite, pure Go): users and
// tokens, webhooks, source jobs, repos and spaces, events, deliveries with their attempts, job runs
// and discussions. It is the only package of the hub with SQL: the schema and its migrations, and
// every query. DB implements hubemu.Store.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"syscall"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/robothub/robothub/internal/hubemu"
)

// DB holds the two handles on the database: one connection for writes (SQLite allows one writer at
// a time; a pool of one makes writers queue in Go instead of failing with SQLITE_BUSY) and a pool
// for reads, which in WAL mode never wait for the writer. An in-memory database lives in a single
// connection, so both handles are that connection.
type DB struct {
	queries
	w, r *sql.DB
	dsn  string
}

var _ hubemu.Store = (*DB)(nil)

// Open opens the database dsn (a file path, or hubemu.MemoryDSN), creating and migrating it.
func Open(ctx context.Context, dsn string) (*DB, error) {
	if dsn == "" {
		dsn = hubemu.MemoryDSN
	}
	db := &DB{dsn: dsn}
	if dsn == hubemu.MemoryDSN {
		conn, err := sql.Open("sqlite", "file::memory:?_pragma=foreign_keys(1)&_txlock=immediate")
		if err != nil {
			return nil, err
		}
		conn.SetMaxOpenConns(1)
		conn.SetMaxIdleConns(1)
		conn.SetConnMaxLifetime(0)
		conn.SetConnMaxIdleTime(0)
		db.w, db.r = conn, conn
	} else {
		if err := makePrivate(dsn); err != nil {
			return nil, err
		}
		pragmas := "_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
		base := "file:" + (&url.URL{Path: dsn}).EscapedPath()
		w, err := sql.Open("sqlite", base+"?"+pragmas+"&_txlock=immediate")
		if err != nil {
			return nil, err
		}
		w.SetMaxOpenConns(1)
		r, err := sql.Open("sqlite", base+"?"+pragmas+"&_pragma=query_only(1)")
		if err != nil {
			w.Close()
			return nil, err
		}
		r.SetMaxOpenConns(8)
		db.w, db.r = w, r
	}
	db.queries = queries{q: db.r}
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Close closes the database.
func (db *DB) Close() error {
	err := db.w.Close()
	if db.r != db.w {
		if rerr := db.r.Close(); err == nil {
			err = rerr
		}
	}
	return err
}

// Database is the database's file path, or hubemu.MemoryDSN.
func (db *DB) Database() string { return db.dsn }

func (db *DB) migrate(ctx context.Context) error {
	var have int
	if err := db.w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return fmt.Errorf("opening the hub database: %w", err)
	}
	if have > len(migrations) {
		return fmt.Errorf("the hub database has schema version %d; this robothub knows up to %d: use a newer robothub", have, len(migrations))
	}
	for v := have; v < len(migrations); v++ {
		err := db.sqlTx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1))
			return err
		})
		if err != nil {
			return fmt.Errorf("migrating the hub database to version %d: %w", v+1, err)
		}
	}
	if have < 2 {
		return db.fillRecords(ctx) // webhooks written before version 2 have no record yet
	}
	return nil
}

// Update runs fn in a write transaction, committed when fn returns nil. A failure of the disk is
// a *hubemu.DiskError.
func (db *DB) Update(ctx context.Context, fn func(hubemu.Tx) error) error {
	err := db.sqlTx(ctx, func(t *sql.Tx) error { return fn(&tx{queries: queries{q: t}, tx: t}) })
	if err != nil && diskFailure(err) {
		return &hubemu.DiskError{Database: db.dsn, Err: err}
	}
	return err
}

func (db *DB) sqlTx(ctx context.Context, fn func(*sql.Tx) error) error {
	t, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(t); err != nil {
		_ = t.Rollback()
		return err
	}
	return t.Commit()
}

// diskFailure reports whether err is the database failing to write because of its disk: full,
// read-only or failing.
func diskFailure(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
			return true
		}
	}
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EROFS)
}

// uniqueViolation reports whether err is a UNIQUE constraint refusing a row.
func uniqueViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

// querier is a *sql.DB or a *sql.Tx: reads inside a write transaction must use the transaction
// (an in-memory database has a single connection, which the transaction holds).
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// queries are the reads of hubemu.Reads, on the read pool or in a transaction.
type queries struct{ q querier }

// tx is a write transaction: hubemu.Tx.
type tx struct {
	queries
	tx *sql.Tx
}

func (t *tx) exec(ctx context.Context, query string, args ...any) error {
	_, err := t.tx.ExecContext(ctx, query, args...)
	return err
}

// placeholders returns "?,?,?" for n values.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// notFound wraps hubemu.ErrNotFound for a missing row.
func notFound(what string, err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, hubemu.ErrNotFound)
	}
	return err
}
