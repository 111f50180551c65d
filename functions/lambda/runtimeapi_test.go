package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// runtimeAPI is a test implementation of the documented Lambda Runtime API
// (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html): the function process polls
// GET /2018-06-01/runtime/invocation/next for an event and posts its answer to .../{id}/response
// or .../{id}/error; an init failure goes to /2018-06-01/runtime/init/error.
type runtimeAPI struct {
	srv     *httptest.Server
	pending chan invocation
	mu      sync.Mutex
	waiting map[string]chan outcome
	seq     int
	polled  chan time.Time // the time of each GET .../next, as it arrives
	initErr chan string
}

type invocation struct {
	id    string
	event []byte
}

// outcome is what the function posted for one invocation.
type outcome struct {
	body      []byte
	isError   bool
	errorType string // Lambda-Runtime-Function-Error-Type, on errors
}

func newRuntimeAPI(t testing.TB) *runtimeAPI {
	api := &runtimeAPI{
		pending: make(chan invocation, 1024),
		waiting: map[string]chan outcome{},
		polled:  make(chan time.Time, 1024),
		initErr: make(chan string, 4),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", api.next)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", func(w http.ResponseWriter, r *http.Request) {
		api.finish(w, r, false)
	})
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", func(w http.ResponseWriter, r *http.Request) {
		api.finish(w, r, true)
	})
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		api.initErr <- string(b)
		w.WriteHeader(http.StatusAccepted)
	})
	api.srv = httptest.NewServer(mux)
	t.Cleanup(api.srv.Close)
	return api
}

// Address is the value of AWS_LAMBDA_RUNTIME_API: host:port.
func (api *runtimeAPI) Address() string { return strings.TrimPrefix(api.srv.URL, "http://") }

func (api *runtimeAPI) next(w http.ResponseWriter, r *http.Request) {
	select {
	case api.polled <- time.Now():
	default:
	}
	var inv invocation
	select {
	case inv = <-api.pending:
	case <-r.Context().Done(): // the function was stopped while waiting, as Lambda freezes it
		return
	}
	h := w.Header()
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(30*time.Second).UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:eu-west-1:123456789012:function:robothub-webhooks")
	h.Set("Lambda-Runtime-Trace-Id", "Root=1-67a1b2c3-0123456789abcdef01234567;Parent=0123456789abcdef;Sampled=0")
	h.Set("Content-Type", "application/json")
	_, _ = w.Write(inv.event)
}

func (api *runtimeAPI) finish(w http.ResponseWriter, r *http.Request, isError bool) {
	id := r.PathValue("id")
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	api.mu.Lock()
	done, ok := api.waiting[id]
	delete(api.waiting, id)
	api.mu.Unlock()
	if !ok {
		// The documented answer to an unknown or already answered request id.
		http.Error(w, `{"errorMessage":"invalid request id","errorType":"InvalidRequestID"}`, http.StatusBadRequest)
		return
	}
	done <- outcome{body: body, isError: isError, errorType: r.Header.Get("Lambda-Runtime-Function-Error-Type")}
	w.WriteHeader(http.StatusAccepted)
}

// Invoke queues event and waits for the function's answer.
func (api *runtimeAPI) Invoke(ctx context.Context, event []byte) (outcome, error) {
	api.mu.Lock()
	api.seq++
	id := fmt.Sprintf("inv-%06d", api.seq)
	done := make(chan outcome, 1)
	api.waiting[id] = done
	api.mu.Unlock()
	api.pending <- invocation{id: id, event: event}
	select {
	case o := <-done:
		return o, nil
	case <-ctx.Done():
		return outcome{}, fmt.Errorf("invocation %s: no answer: %w", id, ctx.Err())
	}
}
