package mqtt_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/robothub/robothub/adapters/mqtt"
	"github.com/robothub/robothub/adapters/mqtt/broker"
)

// Two clients with one client id (two robots flashed with one fleet id): the broker gives the
// session to the second and tells the first it was taken over. The first says so and stops
// reconnecting, instead of taking it back and being taken over again, forever.
func TestATakenOverClientStopsReconnecting(t *testing.T) {
	const password = "takeover-broker-password"
	b, err := broker.Start("127.0.0.1:0", password, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func(onTakenOver func()) *mqtt.Client {
		t.Helper()
		c, err := mqtt.Connect(ctx, mqtt.Config{URL: b.URL(), ClientID: "robot-twin", Password: password, SessionExpiry: time.Hour,
			OnTakenOver: onTakenOver, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AwaitConnection(ctx); err != nil {
			t.Fatal(err)
		}
		return c
	}
	takenOver := make(chan struct{}, 2)
	first := connect(func() { takenOver <- struct{}{} })
	second := connect(func() { takenOver <- struct{}{} })
	defer second.Close(context.Background())
	select {
	case <-takenOver:
	case <-ctx.Done():
		t.Fatal("the first client was not told that the second took its session")
	}
	select {
	case <-first.Done():
	case <-ctx.Done():
		t.Fatal("the first client is still reconnecting after its session was taken over")
	}
	// The second keeps the session: it publishes, and was never taken over in return.
	if err := second.Publish(ctx, "robothub/v1/robots/robot-twin/status", []byte("{}"), false); err != nil {
		t.Fatalf("the second client after the takeover: %v", err)
	}
	select {
	case <-takenOver:
		t.Fatal("the session was taken over a second time")
	default:
	}
}
