package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/robothub/robothub/core/webhook"
)

// BenchmarkLogAction is the log route's own work per delivery: the line's encoding and its write
// (to io.Discard: the write's system call is the load benchmark's), on the hub's 1 KB example
// payload as the hub sends it, compact.
func BenchmarkLogAction(b *testing.B) {
	pretty, err := os.ReadFile("../../core/webhook/testdata/payloads/discussion-create-pr.json")
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, pretty); err != nil {
		b.Fatal(err)
	}
	p, err := webhook.Parse(buf.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	h := NewBuilder(Config{Output: io.Discard, Logger: slog.New(slog.DiscardHandler)}).logAction("bench")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h(context.Background(), p, nil); err != nil {
			b.Fatal(err)
		}
	}
}
