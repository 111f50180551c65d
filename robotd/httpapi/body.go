package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// DefaultBodyTimeout bounds the reading of a request body (--body-timeout): a client that sends
// its headers and then stalls is answered 408 and dropped. Headers have ReadHeaderTimeout.
const DefaultBodyTimeout = 30 * time.Second

// LimitBody puts a read deadline of timeout on r's body, cleared once the body has been read
// whole: a deadline left on the connection would cut the server's background read of a long
// request.
func LimitBody(w http.ResponseWriter, r *http.Request, timeout time.Duration) {
	if r.Body == nil || r.Body == http.NoBody || timeout <= 0 {
		return
	}
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return // not a real connection (a test's recorder)
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc, timeout: timeout}
}

type deadlineBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
	done    bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// BodyTimeoutError is a body that did not arrive within the body timeout: answered with 408.
type BodyTimeoutError struct{ After time.Duration }

func (e *BodyTimeoutError) Error() string {
	return fmt.Sprintf("body: not received within %s; send the whole body at once", e.After)
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
