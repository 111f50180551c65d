package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run with -only keeps the other rows as they were, dated: rows written before the date column
// get the date of the part that held them.
func TestGeneratedRowsKeepsEachRowWithItsDate(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	old := "# Benchmarks\n\n" + beginMark + "\n\nMeasured by `make bench` on 2026-11-25 16:15 UTC in 16m58s.\n\n" +
		"| Area | What | Target | Measured | Met | Compared in the same run | Command |\n|---|---|---|---|---|---|---|\n" +
		"| Local hub | Deliveries | ≥ 1,000/s | 4565–4820/s | yes |  | `go test -bench '^Benchmark(ListWebhooks|Delivery)$' ./internal/hubemu` |\n" +
		"| Receiver | Parse | ≤ 10 µs/op | 3.8 µs | yes | x | `go test ./core/webhook` | 2026-11-26 |\n" +
		"\n" + endMark + "\n\nHand-written notes | not a row\n"
	if err := os.WriteFile(doc, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := generatedRows(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("rows %q, want the two of the generated part", rows)
	}
	if got := rows[rowKey("Local hub", "Deliveries")]; !strings.HasSuffix(got, "./internal/hubemu` | 2026-11-25 |") {
		t.Errorf("an undated row: %q, want the part's date appended", got)
	}
	if got := rows[rowKey("Receiver", "Parse")]; !strings.HasSuffix(got, "| 2026-11-26 |") || strings.Count(got, "2026-11-26") != 1 {
		t.Errorf("a dated row: %q, want it unchanged", got)
	}
}
