package spaces_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
	"github.com/robothub/robothub/internal/hubemu/spaces"
)

// commitBody is an NDJSON commit of n new files, 100 to a folder, each with its own content.
func commitBody(n int) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	_ = enc.Encode(map[string]any{"key": "header", "value": map[string]string{"summary": "many files"}})
	for i := range n {
		content := base64.StdEncoding.EncodeToString([]byte("file " + strconv.Itoa(i) + "\n"))
		_ = enc.Encode(map[string]any{"key": "file", "value": map[string]string{
			"path": fmt.Sprintf("data/d%04d/f%06d.txt", i/100, i), "content": content, "encoding": "base64"}})
	}
	return b.Bytes()
}

// BenchmarkCommit measures one commit of 10,000 and of 100,000 operations (the cap) through the
// commit API, into a space that already holds as many files: parsing the body, planning every
// operation against the parent's files, and writing the commit. Target: linear (issue 20 item 4:
// 10k took 5.9 s, 20k 27 s).
func BenchmarkCommit(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(strconv.Itoa(n/1000)+"k", func(b *testing.B) {
			ctx := context.Background()
			emu, err := localhub.Open(ctx, localhub.Config{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer emu.Close()
			token, _, err := emu.CreateToken(ctx, "alice", hubemu.RoleWrite, "bench")
			if err != nil {
				b.Fatal(err)
			}
			alice, err := emu.Authenticate(ctx, token)
			if err != nil {
				b.Fatal(err)
			}
			body := commitBody(n)
			var total time.Duration
			for i := range b.N {
				b.StopTimer()
				name := "bench" + strconv.Itoa(i)
				if _, err := emu.CreateSpace(ctx, alice, spaces.CreateRepoInput{Name: name, Type: "space"}); err != nil {
					b.Fatal(err)
				}
				// The parent holds n files already, at other paths: planning sees them all.
				if _, err := emu.Commit(ctx, alice, "alice/"+name, "main", bytes.NewReader(bytes.ReplaceAll(body, []byte("data/"), []byte("old/")))); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := time.Now()
				if _, err := emu.Commit(ctx, alice, "alice/"+name, "main", bytes.NewReader(body)); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
			}
			b.ReportMetric(total.Seconds()/float64(b.N), "s/commit")
		})
	}
}
