package hubemu_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// fillWebhooks gives user alice n URL webhooks, each watching two items.
func fillWebhooks(b testing.TB, emu *localhub.Emulator, n int, url string) (token string) {
	ctx := context.Background()
	token, user, err := emu.CreateToken(ctx, "alice", hubemu.RoleWrite, "bench")
	if err != nil {
		b.Fatal(err)
	}
	secret := "bench-secret"
	for i := range n {
		items := []hub.WatchedItem{{Type: "user", Name: "alice"}, {Type: "model", Name: fmt.Sprintf("alice/model-%d", i)}}
		u := fmt.Sprintf("%s?n=%d", url, i)
		if _, err := emu.CreateWebhook(ctx, user.ID, hubemu.WebhookInput{URL: &u, Watched: &items, Secret: &secret}); err != nil {
			b.Fatal(err)
		}
	}
	return token
}

// BenchmarkListWebhooks measures GET /api/settings/webhooks over loopback HTTP with 1,000
// webhooks in a file database, and reports the p50 and p99 latency of one call: "repeat" lists an
// unchanged set (served from the list cache), "after-change" changes one webhook before each list
// (the change itself is not timed), so every list is read from SQLite.
func BenchmarkListWebhooks(b *testing.B) {
	emu, err := localhub.Open(context.Background(), localhub.Config{DSN: filepath.Join(b.TempDir(), "hub.db"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer emu.Close()
	token := fillWebhooks(b, emu, 1000, "https://example.com/hook")
	p, err := emu.Authenticate(context.Background(), token)
	if err != nil {
		b.Fatal(err)
	}
	list, err := emu.Webhooks(context.Background(), p.User.ID)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("repeat", func(b *testing.B) { benchList(b, emu, token, nil) })
	b.Run("after-change", func(b *testing.B) {
		n := 0
		benchList(b, emu, token, func() {
			n++
			if _, err := emu.SetWebhookDisabled(context.Background(), p.User.ID, list[n%len(list)].ID, n%2 == 0); err != nil {
				b.Fatal(err)
			}
		})
	})
}

func benchList(b *testing.B, emu *localhub.Emulator, token string, change func()) {
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/api/settings/webhooks", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	get := func() int64 {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
		return n
	}
	get() // warm up the connection and the page cache
	lat := make([]time.Duration, 0, b.N)
	var size int64
	b.ResetTimer()
	for range b.N {
		if change != nil {
			b.StopTimer()
			change()
			b.StartTimer()
		}
		start := time.Now()
		size = get()
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(size), "bytes/list")
}

// BenchmarkDelivery measures delivery to a local receiver: each operation is one delivery (an
// event fanned out to 100 webhooks makes 100), timed from the first Emit until the receiver has
// got every payload. The store is a file database; each attempt is recorded in it.
func BenchmarkDelivery(b *testing.B) {
	var received atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		received.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer receiver.Close()
	emu, err := localhub.Open(context.Background(), localhub.Config{
		DSN: filepath.Join(b.TempDir(), "hub.db"), Logger: slog.New(slog.DiscardHandler), TriggerLimit: -1, AllowDeliveryTo: loopback,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer emu.Close()
	const fanout = 100
	token := fillWebhooks(b, emu, fanout, receiver.URL)
	p, err := emu.Authenticate(context.Background(), token)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- emu.Run(ctx) }()
	defer func() { cancel(); <-done }()

	events := (b.N + fanout - 1) / fanout
	want := int64(events * fanout)
	b.ResetTimer()
	start := time.Now()
	for range events {
		if _, err := emu.Emit(ctx, p, hubemu.EmitInput{Repo: "model:alice/bench", Scope: "repo.content", Action: "update"}); err != nil {
			b.Fatal(err)
		}
	}
	for received.Load() < want {
		if time.Since(start) > 5*time.Minute {
			b.Fatalf("%d of %d delivered", received.Load(), want)
		}
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(want)/elapsed.Seconds(), "deliveries/s")
}
