package hubemu

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
)

// writeRecord stores a webhook's API record (the JSON that list and get return) in its record
// column. Every write of a webhook calls it in the same transaction, so the column is never stale.
func writeRecord(ctx context.Context, tx *sql.Tx, id string) error {
	list, err := loadWebhooks(ctx, tx, "w.id = ?", id)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return notFound("webhook", id)
	}
	rec, err := json.Marshal(recordOf(list[0]))
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, "UPDATE webhooks SET record = ? WHERE id = ?", string(rec), id)
	return err
}

// fillRecords writes the record of webhooks stored before the record column existed.
func (s *store) fillRecords(ctx context.Context) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, "SELECT id FROM webhooks WHERE record = ''")
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		for _, id := range ids {
			if err := writeRecord(ctx, tx, id); err != nil {
				return fmt.Errorf("webhook %s: %w", id, err)
			}
		}
		return rows.Err()
	})
}

// listCache keeps each user's encoded webhook list, the hub's most frequent answer. Every change of
// a webhook goes through this Emulator, which rebuilds the user's entry once the change is committed
// (refreshList), so that lists are read from memory, and the cost of reading SQLite falls on the
// rarer writes. Hence one data directory is served by one emulator process at a time (robothub hub
// token create, the other writer, does not touch webhooks).
type listCache struct {
	mu    sync.Mutex
	gen   map[string]uint64 // bumped by forget: a list read before a change is not kept after it
	lists map[string][]byte
}

func (c *listCache) get(userID string) ([]byte, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists[userID], c.gen[userID]
}

func (c *listCache) put(userID string, gen uint64, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen[userID] != gen {
		return
	}
	if c.lists == nil {
		c.lists = map[string][]byte{}
	}
	c.lists[userID] = b
}

func (c *listCache) forget(userID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == nil {
		c.gen = map[string]uint64{}
	}
	c.gen[userID]++
	delete(c.lists, userID)
}

// refreshList forgets the user's cached list and builds it again. Call it after a committed change
// of one of the user's webhooks. If the rebuild fails, the next list reads SQLite.
func (e *Emulator) refreshList(ctx context.Context, userID string) {
	e.lists.forget(userID)
	if _, err := e.webhookListJSON(context.WithoutCancel(ctx), userID); err != nil {
		e.log.Warn("rebuilding a webhook list", "err", err)
	}
}

// webhookListJSON returns the user's webhooks as the hub's bare JSON array of records.
func (e *Emulator) webhookListJSON(ctx context.Context, userID string) ([]byte, error) {
	cached, gen := e.lists.get(userID)
	if cached != nil {
		return cached, nil
	}
	b, err := e.readWebhookList(ctx, userID)
	if err != nil {
		return nil, err
	}
	e.lists.put(userID, gen, b)
	return b, nil
}

// readWebhookList joins the stored records without decoding them (the covering index webhooks_list
// serves the scan).
func (e *Emulator) readWebhookList(ctx context.Context, userID string) ([]byte, error) {
	rows, err := e.db.r.QueryContext(ctx, "SELECT record FROM webhooks w WHERE user_id = ? ORDER BY "+creationOrder, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var b bytes.Buffer
	b.WriteByte('[')
	var rec sql.RawBytes
	for n := 0; rows.Next(); n++ {
		if err := rows.Scan(&rec); err != nil {
			return nil, err
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(rec)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	b.WriteString("]\n")
	return b.Bytes(), nil
}
