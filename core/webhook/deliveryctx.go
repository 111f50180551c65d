package webhook

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// deliveryCtx is the context a handler runs with: the request's context, ended also by the
// handler timeout; when it ends before the handler returns, the receiver answers 503 at once
// (answerTimeout) while the handler finishes in the background.
//
// It does what context.WithTimeout(r.Context()) with a context.AfterFunc on it did, for less: that
// pair cost 8 allocations and about a quarter of the receiver's own time per delivery under load
// (two child maps on cancelCtxs, a timer context, the after-func context; pprof of
// BenchmarkReceiverLoad: 0.27 s of serveWebhook's 0.99 s). Here one timer both ends the context
// and answers, and the request's context is watched only once the handler asks for Done: a handler
// that never selects on Done (most return in microseconds) pays for no watch, and one that checks
// Err sees the request's end there.
type deliveryCtx struct {
	parent   context.Context
	deadline time.Time
	timer    *handlerTimer

	// What answerTimeout needs when the context ends first.
	srv *Server
	w   http.ResponseWriter
	r   *http.Request
	rt  *route

	mu        sync.Mutex
	done      chan struct{} // made by the first Done; closed when the context ends
	err       error         // why it ended: DeadlineExceeded, the request's error, or Canceled on release
	stopWatch func() bool   // stops the watch on the request's context
	answering sync.WaitGroup
}

// delivery is what one delivery allocates for its handler: the payload and the context.
type delivery struct {
	payload Payload
	ctx     deliveryCtx
}

// start starts the handler's context: its timeout runs from now.
func (dl *delivery) start(s *Server, w http.ResponseWriter, r *http.Request, rt *route) *deliveryCtx {
	d := &dl.ctx
	d.parent, d.deadline, d.srv, d.w, d.r, d.rt = r.Context(), time.Now().Add(s.timeout), s, w, r, rt
	d.timer = startHandlerTimer(&s.timers, d, s.timeout)
	return d
}

// handlerTimer is the timer of a handler's timeout. A timer stopped before it fired is kept for the
// Server's next delivery: time.AfterFunc's timer and its method value were 2 of the receiver's 15
// allocations per delivery (BenchmarkServeHTTP/own, -memprofilerate 1).
//
// The pool is the Server's, not the package's: a timer belongs to the synctest bubble it was made
// in, and a Server made in a test's bubble must not be handed a real-time timer that another
// Server made outside it (its handlers' timeouts would never fire in the bubble's time).
type handlerTimer struct {
	t    *time.Timer
	d    atomic.Pointer[deliveryCtx] // the delivery it times; nil while pooled
	pool *sync.Pool
}

func startHandlerTimer(pool *sync.Pool, d *deliveryCtx, timeout time.Duration) *handlerTimer {
	ht, _ := pool.Get().(*handlerTimer)
	if ht == nil {
		ht = &handlerTimer{pool: pool}
		ht.d.Store(d)
		ht.t = time.AfterFunc(timeout, ht.fire)
		return ht
	}
	ht.d.Store(d)
	ht.t.Reset(timeout)
	return ht
}

func (ht *handlerTimer) fire() {
	if d := ht.d.Load(); d != nil {
		d.end(context.DeadlineExceeded)
	}
}

// stop stops the timer and pools it, unless it fired: then its function runs or ran for this
// delivery, and the timer is let go with it.
func (ht *handlerTimer) stop() {
	if ht.t.Stop() {
		ht.d.Store(nil)
		ht.pool.Put(ht)
	}
}

func (d *deliveryCtx) Deadline() (time.Time, bool) {
	if pd, ok := d.parent.Deadline(); ok && pd.Before(d.deadline) {
		return pd, true
	}
	return d.deadline, true
}

func (d *deliveryCtx) Value(key any) any { return d.parent.Value(key) }

func (d *deliveryCtx) Done() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done == nil {
		d.done = make(chan struct{})
		switch {
		case d.err != nil:
			close(d.done)
		case d.parent.Done() != nil:
			d.stopWatch = context.AfterFunc(d.parent, func() { d.end(d.parent.Err()) })
		}
	}
	return d.done
}

func (d *deliveryCtx) Err() error {
	d.mu.Lock()
	err := d.err
	d.mu.Unlock()
	if err != nil {
		return err
	}
	// Not watched yet: look at what would have ended it.
	if err := d.parent.Err(); err != nil {
		d.end(err)
	} else if !time.Now().Before(d.deadline) {
		d.end(context.DeadlineExceeded)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// end ends the context with err, unless it has ended, and then answers 503 for the handler.
func (d *deliveryCtx) end(err error) {
	d.mu.Lock()
	if d.err != nil {
		d.mu.Unlock()
		return
	}
	d.err = err
	if d.done != nil {
		close(d.done)
	}
	d.answering.Add(1)
	d.mu.Unlock()
	defer d.answering.Done()
	d.srv.answerTimeout(d.w, d.r, d.rt, err)
	_ = http.NewResponseController(d.w).Flush()
}

// release is called when the handler returns. It reports false when the handler returned first
// (its answer is to be written; the context is then canceled, as a WithTimeout context's cancel
// would), and true when the context had ended first and 503 was answered (it waits for that answer
// to be written).
func (d *deliveryCtx) release() (ended bool) {
	d.timer.stop()
	d.timer = nil
	d.mu.Lock()
	ended = d.err != nil
	if !ended {
		d.err = context.Canceled
		if d.done != nil {
			close(d.done)
		}
	}
	stopWatch := d.stopWatch
	d.mu.Unlock()
	if stopWatch != nil {
		stopWatch()
	}
	d.answering.Wait()
	// A handler may keep the payload, which shares this allocation: let the request and the
	// response writer go (the context still answers Value, Deadline, Done and Err).
	d.mu.Lock()
	d.srv, d.w, d.r, d.rt = nil, nil, nil, nil
	d.mu.Unlock()
	return ended
}
