// Package daemonclient is the Go client of the robot daemon's REST API, generated from
// docs/robot-api.openapi.json by oapi-codegen into daemonclient.gen.go, so that the receiver, the CLIs
// and the tests call the routes the document describes with its types rather than copies of them.
// This file adds what the document cannot tell a generator: the credential, the owner's unix
// socket as a transport, a timeout, a cap on an answer's size, and errors worded for the user.
//
// The document is OpenAPI 3.0.3, which oapi-codegen reads as it is: nothing is converted. Its
// operations have no operationId, so the methods are named from the method and the path
// (GetApiAppsList, PostApiAppsUpdate). After changing the document run `go generate
// ./internal/daemonclient` (and `go run ./internal/tools/apidoc`); TestGeneratedClientIsCurrent fails
// until then, and robotd's TestDaemonClientCallsServedRoutes holds the client against the routes
// the daemon serves.
package daemonclient

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml -o daemonclient.gen.go ../../docs/robot-api.openapi.json

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"
)

const (
	// DefaultTimeout bounds a whole call, answer included, when Options.HTTPClient is not set.
	DefaultTimeout = 10 * time.Second
	// MaxAnswer is the most of an answer's body a call reads, the receiver's cap before this
	// client: a daemon gone wrong must not fill the caller's memory.
	MaxAnswer = 4 << 20
	// SocketName is the owner's unix socket in the daemon's data directory (robotd/access).
	SocketName = "daemon.sock"
	// socketHost is the host of the requests sent over the socket: the daemon checks Host against
	// its allowed hosts, and localhost is one of them.
	socketHost = "http://localhost"
)

// Options say how a client reaches the daemon. The zero value sends no credential, with
// DefaultTimeout.
type Options struct {
	// Token is the owner's token (<data-dir>/api-token) or a running app's (ROBOT_DAEMON_TOKEN),
	// sent as Authorization: Bearer. Over the owner's socket none is needed: the kernel names
	// the caller (SO_PEERCRED).
	Token string
	// HTTPClient sends the requests; default a client with DefaultTimeout. Over the socket its
	// Transport is replaced by one that dials the socket.
	HTTPClient *http.Client
}

// Daemon is a robot daemon as a caller reaches it: its URL, the credential, the HTTP client with
// the cap on answers. Client gives the generated client of every route over it. Call sends one
// route's request: a binary that calls a few routes through Call links only their builders and
// parsers, while Client's methods are all linked wherever reflection can reach them. Measured on
// the Lambda bootstrap (linux/arm64, -s -w), whose receiver has robot-update's three calls: 393 KB
// more than with the hand-written client it replaced when they go through Client, 131 KB through
// Call.
type Daemon struct {
	server string // with a trailing slash: the generated builders resolve ./api/... against it
	doer   HttpRequestDoer
	token  string
}

// New returns the daemon at server, such as http://127.0.0.1:8000.
func New(server string, o Options) *Daemon {
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	return &Daemon{server: strings.TrimRight(server, "/") + "/", doer: cappedDoer{hc}, token: o.Token}
}

// SocketPath is the owner's unix socket of the daemon whose data directory is dataDir.
func SocketPath(dataDir string) string { return filepath.Join(dataDir, SocketName) }

// NewSocket returns the daemon whose data directory is dataDir, over its owner's socket: every
// scope, without a token, for the user the daemon runs as.
func NewSocket(dataDir string, o Options) *Daemon {
	var hc http.Client
	if o.HTTPClient != nil {
		hc = *o.HTTPClient
	} else {
		hc.Timeout = DefaultTimeout
	}
	sock := SocketPath(dataDir)
	hc.Transport = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}
	o.HTTPClient = &hc
	return New(socketHost, o)
}

// Client is the generated client of every route of d.
func (d *Daemon) Client() *ClientWithResponses {
	return &ClientWithResponses{ClientInterface: &Client{Server: d.server, Client: d.doer, RequestEditors: []RequestEditorFn{bearer(d.token)}}}
}

// Call sends the request that build, one of the generated NewXxxRequest functions, makes for d,
// and reads the answer with parse, the matching ParseXxxResponse:
//
//	list, err := daemonclient.Call(ctx, d, daemonclient.NewGetApiAppsListRequest, daemonclient.ParseGetApiAppsListResponse)
//
// The error is the request's or the transport's, or the answer's when it is not what the
// document says; a documented answer other than the one wanted is in the result (Unexpected).
func Call[R any](ctx context.Context, d *Daemon, build func(server string) (*http.Request, error), parse func(*http.Response) (R, error)) (R, error) {
	var none R
	req, err := build(d.server)
	if err != nil {
		return none, err
	}
	req = req.WithContext(ctx)
	if err := bearer(d.token)(ctx, req); err != nil {
		return none, err
	}
	resp, err := d.doer.Do(req)
	if err != nil {
		return none, err
	}
	return parse(resp)
}

func bearer(token string) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		return nil
	}
}

// cappedDoer reads at most MaxAnswer bytes of an answer: the generated parsers read bodies whole.
// io.LimitReader would cut a longer answer silently and http.MaxBytesReader speaks of a request,
// so the cap is a few lines here that say what was refused.
type cappedDoer struct{ HttpRequestDoer }

func (c cappedDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.HttpRequestDoer.Do(req)
	if err == nil {
		resp.Body = &cappedBody{ReadCloser: resp.Body, left: MaxAnswer}
	}
	return resp, err
}

// ErrTooLarge is the error of a call whose answer is over MaxAnswer bytes.
var ErrTooLarge = fmt.Errorf("the robot daemon's answer is over %d MiB", MaxAnswer>>20)

type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells an answer of exactly MaxAnswer bytes from a longer one.
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 {
			return 0, ErrTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// AnswerError is an answer other than the one a call expects: the daemon's status and the detail of
// its {"detail": message} body.
type AnswerError struct {
	Method string // GET, POST...
	Path   string // the path and its query
	Status string // "422 Unprocessable Entity"
	Code   int
	Detail string
}

func (e *AnswerError) Error() string {
	return strings.TrimSpace(fmt.Sprintf("robot daemon %s %s: %s %s", e.Method, e.Path, e.Status, e.Detail))
}

// Unexpected returns the *AnswerError of an answer a call did not expect: a status other than the
// call's, or a body that is not the JSON the document gives.
func Unexpected(resp *http.Response, body []byte) error {
	if resp == nil {
		return errors.New("robot daemon: no answer")
	}
	e := &AnswerError{Status: resp.Status, Code: resp.StatusCode}
	if req := resp.Request; req != nil {
		e.Method, e.Path = req.Method, req.URL.RequestURI()
	}
	var d Detail
	if json.Unmarshal(body, &d) == nil && d.Detail != "" {
		e.Detail = d.Detail
	} else if resp.StatusCode/100 == 2 {
		e.Detail = "not the JSON answer docs/robot-api.openapi.json gives (Content-Type " + resp.Header.Get("Content-Type") + ")"
	}
	return e
}
