package store

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/hubemu"
)

func TestListFollowsEveryChange(t *testing.T) {
	ctx := context.Background()
	e, err := openHub(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, alice, _ := e.CreateToken(ctx, "alice", hubemu.RoleWrite, "")
	_, bob, _ := e.CreateToken(ctx, "bob", hubemu.RoleWrite, "")
	list := func(user hubemu.User) []map[string]any {
		t.Helper()
		b, err := e.db.WebhookListJSON(ctx, user.ID)
		if err != nil {
			t.Fatal(err)
		}
		var out []map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		return out
	}
	if got := list(alice); len(got) != 0 {
		t.Fatalf("empty list %v", got)
	}
	url, watched := "https://e.com/a", []hub.WatchedItem{{Type: "user", Name: "alice"}}
	w, err := e.CreateWebhook(ctx, alice.ID, hubemu.WebhookInput{URL: &url, Watched: &watched})
	if err != nil {
		t.Fatal(err)
	}
	if got := list(alice); len(got) != 1 || got[0]["disabled"] != false {
		t.Fatalf("after create %v", got)
	}
	list(bob) // fill bob's entry: alice's changes must not disturb it
	if _, err := e.SetWebhookDisabled(ctx, alice.ID, w.ID, true); err != nil {
		t.Fatal(err)
	}
	if got := list(alice); got[0]["disabled"] != true {
		t.Fatalf("after disable %v", got)
	}
	url2 := "https://e.com/b"
	if _, err := e.UpdateWebhook(ctx, alice.ID, w.ID, hubemu.WebhookInput{URL: &url2}); err != nil {
		t.Fatal(err)
	}
	if got := list(alice); got[0]["url"] != url2 {
		t.Fatalf("after update %v", got)
	}
	if err := e.DeleteWebhook(ctx, alice.ID, w.ID); err != nil {
		t.Fatal(err)
	}
	if got := list(alice); len(got) != 0 {
		t.Fatalf("after delete %v", got)
	}
	if got := list(bob); len(got) != 0 {
		t.Fatalf("bob %v", got)
	}
}

// TestMigrationFillsRecordsOfOlderWebhooks opens a database as version 1 left it (no record column,
// no delivery kind, no spaces, no emitters) and checks that the migrations give every webhook its record.
func TestMigrationFillsRecordsOfOlderWebhooks(t *testing.T) {
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), "hub.db")
	e, err := openHub(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	_, alice, _ := e.CreateToken(ctx, "alice", hubemu.RoleWrite, "")
	url, watched := "https://e.com/a", []hub.WatchedItem{{Type: "model", Name: "alice/bert"}}
	w, err := e.CreateWebhook(ctx, alice.ID, hubemu.WebhookInput{URL: &url, Watched: &watched})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"DROP TABLE discussion_events", "DROP TABLE discussions", "DROP TABLE spaces", "DROP INDEX deliveries_due_by_kind", "ALTER TABLE deliveries DROP COLUMN kind",
		"DROP INDEX webhooks_in_creation_order", "ALTER TABLE webhooks DROP COLUMN record",
		"DROP INDEX deliveries_by_webhook_emitter", "ALTER TABLE deliveries DROP COLUMN emitter_id", "ALTER TABLE events DROP COLUMN emitter_id", "PRAGMA user_version = 1"} {
		if _, err := e.db.w.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	e.Close()

	e, err = openHub(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var version int
	if err := e.db.r.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil || version != len(migrations) {
		t.Fatalf("version %d %v", version, err)
	}
	b, err := e.db.WebhookListJSON(ctx, alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []hubemu.WebhookRecord
	if err := json.Unmarshal(b, &got); err != nil || len(got) != 1 || got[0].ID != w.ID || !slices.Equal(got[0].Watched, watched) {
		t.Fatalf("list %s %v", b, err)
	}
}

func TestNewerDatabaseIsRefused(t *testing.T) {
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), "hub.db")
	e, err := openHub(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.w.ExecContext(ctx, "PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	e.Close()
	if _, err := openHub(ctx, dsn); err == nil || !strings.Contains(err.Error(), "schema version 99") {
		t.Fatalf("err %v", err)
	}
}

// BenchmarkReadWebhookList measures what a list costs without HTTP, on every call:
// reading and joining 1,000 stored records from a file database.
func BenchmarkReadWebhookList(b *testing.B) {
	ctx := context.Background()
	e, err := openHub(ctx, filepath.Join(b.TempDir(), "hub.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	_, alice, _ := e.CreateToken(ctx, "alice", hubemu.RoleWrite, "")
	for i := range 1000 {
		url := fmt.Sprintf("https://example.com/h/%d", i)
		watched := []hub.WatchedItem{{Type: "user", Name: "alice"}, {Type: "model", Name: fmt.Sprintf("alice/m-%d", i)}}
		if _, err := e.CreateWebhook(ctx, alice.ID, hubemu.WebhookInput{URL: &url, Watched: &watched}); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := e.db.WebhookListJSON(ctx, alice.ID); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// testHub is the hub's services on a DB, to drive the store as the hub does.
type testHub struct {
	*hubemu.Emulator
	db *DB
}

func (h *testHub) Close() error { return h.db.Close() }

func openHub(ctx context.Context, dsn string) (*testHub, error) {
	db, err := Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return &testHub{Emulator: hubemu.New(hubemu.Config{Logger: slog.New(slog.DiscardHandler)}, db, nil), db: db}, nil
}

// TestDatabaseIsOwnerOnly: a hub.db an older robothub made 0644 is 0600 once opened, with its
// write-ahead log and shared memory.
func TestDatabaseIsOwnerOnly(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no unix modes")
	}
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), "hub.db")
	e, err := openHub(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	if err := os.Chmod(dsn, 0o644); err != nil {
		t.Fatal(err)
	}
	e, err = openHub(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, _, err := e.CreateToken(ctx, "alice", hubemu.RoleWrite, ""); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{dsn, dsn + "-wal", dsn + "-shm"} {
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if perm := st.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s is %04o, want 0600", filepath.Base(name), perm)
		}
	}
}

// A user's list is read from an index in creation order, not sorted on every request (the sort of
// 1,000 records was a third of the list's time: BenchmarkListWebhooks).
func TestWebhookListReadsInOrder(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+webhookListQuery, "user")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(plan, "; ")
	if !strings.Contains(got, "USING INDEX webhooks_in_creation_order") || strings.Contains(got, "TEMP B-TREE") {
		t.Errorf("the list's query plan: %s; want a search of webhooks_in_creation_order and no sort", got)
	}
}
