package webhook

import (
	"context"
	"sync"
	"time"
)

// deliveryContext is a handler's context: the request's values and cancellation, and the handler's
// deadline. It makes its Done channel (and ties it to the request's) only when a handler asks for
// it, so that a handler that never looks at its context costs no cancellation bookkeeping: a
// receiver runs one per delivery, and context.WithTimeout was a third of its own cost per request.
type deliveryContext struct {
	parent   context.Context
	deadline time.Time

	mu         sync.Mutex
	done       chan struct{}
	err        error
	stopParent func() bool
}

func newDeliveryContext(parent context.Context, timeout time.Duration) *deliveryContext {
	return &deliveryContext{parent: parent, deadline: time.Now().Add(timeout)}
}

func (c *deliveryContext) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *deliveryContext) Value(key any) any { return c.parent.Value(key) }

func (c *deliveryContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		switch {
		case c.err != nil:
			close(c.done)
		case c.parent.Err() != nil:
			c.cancelLocked(c.parent.Err())
		default:
			c.stopParent = context.AfterFunc(c.parent, func() { c.cancel(c.parent.Err()) })
		}
	}
	return c.done
}

func (c *deliveryContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil && c.parent.Err() != nil {
		c.cancelLocked(c.parent.Err())
	}
	return c.err
}

// cancel ends the context with err (context.DeadlineExceeded when the handler's time is up).
func (c *deliveryContext) cancel(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelLocked(err)
}

func (c *deliveryContext) cancelLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
}

// release unties the context from the request's once the handler has returned.
func (c *deliveryContext) release() {
	c.mu.Lock()
	stop := c.stopParent
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}
