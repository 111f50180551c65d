package webhook

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// deliveryCtx is the context a handler runs with: the request's context, ended also by the
// handler timeout; when it ends before the handler returns, the receiver answers 503 at once
// (answerTimeout) while the handler finishes in the background.
//
// It does what context.WithTimeout(r.Context()) with a context.AfterFunc on it did, for less: that
// pair cost 8 allocations and about a quarter of the receiver's own time per delivery under load
// (two child maps on cancelCtxs, a timer context, the after-func context; pprof of
// BenchmarkReceiverLoad: 0.27 s of serveWebhook's 0.99 s). Here the Server's timer both ends the context
// and answers, and the request's context is watched only once the handler asks for Done: a handler
// that never selects on Done (most return in microseconds) pays for no watch, and one that checks
// Err sees the request's end there.
type deliveryCtx struct {
	parent   context.Context
	deadline time.Time

	// The Server's running handlers, in the order of their deadlines (handlerDeadlines).
	prev, next *deliveryCtx
	queued     bool

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

// delivery is what one delivery allocates for its handler: the payload, its parts and the context.
type delivery struct {
	payload Payload
	parts   payloadParts
	ctx     deliveryCtx
}

// start starts the handler's context: its timeout runs from now.
func (dl *delivery) start(s *Server, w http.ResponseWriter, r *http.Request, rt *route) *deliveryCtx {
	d := &dl.ctx
	d.parent, d.deadline, d.srv, d.w, d.r, d.rt = r.Context(), time.Now().Add(s.timeout), s, w, r, rt
	s.deadlines.add(d, s.timeout)
	return d
}

// handlerDeadlines times all the running handlers of a Server with one timer. Every handler of a
// Server has the same timeout, so deadlines come in the order handlers start: the running handlers
// are a queue, and the timer waits for its head's deadline. Starting and returning are an
// insertion and a removal under a mutex. The timer is set when it fires (for the new head), or when
// a handler starts and it is not set; a head that returns leaves it set, to fire early and be set
// again. A timer per delivery cost 0.24 µs a delivery, a pool of timers included (time.AfterFunc
// and its method value were 2 of the receiver's 15 allocations), against 0.05 µs for the queue
// (BenchmarkServeHTTP/own, pprof).
//
// The timer is made by the first handler that needs it, in its synctest bubble: a Server made in
// a test's bubble is timed in the bubble's time.
type handlerDeadlines struct {
	mu         sync.Mutex
	head, tail *deliveryCtx
	timer      *time.Timer
	set        bool // the timer will fire
}

func (q *handlerDeadlines) add(d *deliveryCtx, timeout time.Duration) {
	q.mu.Lock()
	d.prev, d.next, d.queued = q.tail, nil, true
	if q.tail != nil {
		q.tail.next = d
	} else {
		q.head = d
	}
	q.tail = d
	switch {
	case q.set:
	case q.timer == nil:
		q.timer, q.set = time.AfterFunc(timeout, q.fire), true
	default:
		q.timer.Reset(timeout)
		q.set = true
	}
	q.mu.Unlock()
}

// remove takes d out of the queue, unless the timer took it.
func (q *handlerDeadlines) remove(d *deliveryCtx) {
	q.mu.Lock()
	if d.queued {
		q.unlink(d)
	}
	q.mu.Unlock()
}

func (q *handlerDeadlines) unlink(d *deliveryCtx) {
	if d.prev != nil {
		d.prev.next = d.next
	} else {
		q.head = d.next
	}
	if d.next != nil {
		d.next.prev = d.prev
	} else {
		q.tail = d.prev
	}
	d.prev, d.next, d.queued = nil, nil, false
}

// fire ends the contexts whose deadline has passed, each answering 503 on its own goroutine as a
// timer of its own would, and sets the timer for the next deadline.
func (q *handlerDeadlines) fire() {
	now := time.Now()
	q.mu.Lock()
	for q.head != nil && !now.Before(q.head.deadline) {
		d := q.head
		q.unlink(d)
		go d.end(context.DeadlineExceeded)
	}
	if q.set = q.head != nil; q.set {
		q.timer.Reset(q.head.deadline.Sub(now))
	}
	q.mu.Unlock()
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
	d.srv.deadlines.remove(d)
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
