package webhook

import (
	"context"
	"errors"
	"testing"
	"time"
)

type ctxKey struct{}

func TestDeliveryContext(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	defer cancelParent()

	// The deadline cancels it, whether or not Done was asked for before.
	for _, early := range []bool{true, false} {
		c := newDeliveryContext(parent, time.Hour)
		if d, ok := c.Deadline(); !ok || time.Until(d) < 59*time.Minute {
			t.Fatalf("Deadline() = %v, %v", d, ok)
		}
		if c.Value(ctxKey{}) != "v" {
			t.Fatal("values of the request's context are lost")
		}
		var done <-chan struct{}
		if early {
			done = c.Done()
		}
		if c.Err() != nil {
			t.Fatal("Err before the deadline")
		}
		c.cancel(context.DeadlineExceeded)
		if !early {
			done = c.Done()
		}
		select {
		case <-done:
		case <-time.After(time.Second):
			t.Fatalf("Done not closed after the deadline (Done asked for early: %v)", early)
		}
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Fatalf("Err() = %v", c.Err())
		}
		c.release()
	}

	// The request's cancellation (the client went away) reaches it.
	c := newDeliveryContext(parent, time.Hour)
	done := c.Done()
	cancelParent()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("Done not closed when the request's context was cancelled")
	}
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("Err() = %v", c.Err())
	}

	// Asked after the request is gone: already done, and Err agrees.
	late := newDeliveryContext(parent, time.Hour)
	if !errors.Is(late.Err(), context.Canceled) {
		t.Fatalf("Err() = %v", late.Err())
	}
	select {
	case <-late.Done():
	default:
		t.Fatal("Done open although Err is set")
	}
}
