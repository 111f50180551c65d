package hubemu

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

// MemoryDSN is an in-memory database: everything is lost when the Emulator closes. For tests.
const MemoryDSN = ":memory:"

// store holds the two handles on the database: one connection for writes (SQLite allows one writer
// at a time; a pool of one makes writers queue in Go instead of failing with SQLITE_BUSY) and a pool
// for reads, which in WAL mode never wait for the writer. An in-memory database lives in a single
// connection, so both handles are that connection.
type store struct {
	w *sql.DB
	r *sql.DB
}

func openStore(ctx context.Context, dsn string) (*store, error) {
	if dsn == MemoryDSN {
		db, err := sql.Open("sqlite", "file::memory:?_pragma=foreign_keys(1)&_txlock=immediate")
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
		s := &store{w: db, r: db}
		if err := s.migrate(ctx); err != nil {
			db.Close()
			return nil, err
		}
		return s, nil
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
	s := &store{w: w, r: r}
	if err := s.migrate(ctx); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *store) close() error {
	err := s.w.Close()
	if s.r != s.w {
		if rerr := s.r.Close(); err == nil {
			err = rerr
		}
	}
	return err
}

func (s *store) migrate(ctx context.Context) error {
	var have int
	if err := s.w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return fmt.Errorf("opening the hub database: %w", err)
	}
	if have > len(migrations) {
		return fmt.Errorf("the hub database has schema version %d; this robothub knows up to %d: use a newer robothub", have, len(migrations))
	}
	for v := have; v < len(migrations); v++ {
		err := s.tx(ctx, func(tx *sql.Tx) error {
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
		return s.fillRecords(ctx) // webhooks written before version 2 have no record yet
	}
	return nil
}

// tx runs fn in a write transaction, committed when fn returns nil.
func (s *store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// querier is a *sql.DB or a *sql.Tx: reads inside a write transaction must use the transaction
// (an in-memory database has a single connection, which the transaction holds).
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// placeholders returns "?,?,?" for n values.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}
