package hub_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/internal/hubemu"
)

// BenchmarkClientList measures Client.List against an in-process emulator holding 1,000 webhooks:
// the request, the transfer and decoding the records.
func BenchmarkClientList(b *testing.B) {
	lh := newLocalHub(b)
	c := lh.Client(b, "alice", hubemu.RoleWrite)
	ctx := context.Background()
	for i := range 1000 {
		_, err := c.Create(ctx, hub.CreateRequest{URL: fmt.Sprintf("https://example.com/h/%d", i),
			Watched: []hub.WatchedItem{{Type: "user", Name: "alice"}, {Type: "model", Name: fmt.Sprintf("alice/m-%d", i)}}})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		list, err := c.List(ctx)
		if err != nil || len(list) != 1000 {
			b.Fatalf("%d webhooks, %v", len(list), err)
		}
	}
}
