package hub

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/hashicorp/go-retryablehttp"

	"github.com/robothub/robothub/core/version"
)

// DefaultEndpoint is the public hub.
const DefaultEndpoint = "https://huggingface.co"

// lenientJSON decodes answers with the decoder of the encoding/json/v2 proposal (a list of 1,000
// webhooks decodes in about half the time encoding/json takes) but with encoding/json's tolerance,
// so that whatever the public hub sends decodes as it would have before: names match without regard
// to case, and duplicate names or invalid UTF-8 are not errors.
var lenientJSON = jsonv2.JoinOptions(jsonv2.MatchCaseInsensitiveNames(true), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// maxResponseBytes caps what the client reads from one response: an answer over it is an error,
// never read in part.
const maxResponseBytes = 64 << 20

// The default caps of downloads (WithDownloadCaps): one file, and one snapshot's files together.
const (
	DefaultMaxFileBytes     = 64 << 20
	DefaultMaxSnapshotBytes = 512 << 20
)

// Client calls a hub's webhook management API. It is safe for concurrent use.
type Client struct {
	endpoint  *url.URL
	base      string // scheme://host/path without credentials or a trailing slash
	token     string
	http      *http.Client
	userAgent string
	retry     RetryPolicy
	timeout   time.Duration
	log       *slog.Logger

	maxFile, maxSnapshot int64 // download caps (WithDownloadCaps)
}

// Option configures a Client.
type Option func(*Client)

// WithToken sets the access token, sent as "Authorization: Bearer <token>". Empty sends none.
func WithToken(token string) Option { return func(c *Client) { c.token = strings.TrimSpace(token) } }

// WithHTTPClient sets the HTTP client. Default: a client of its own with no overall timeout (each
// attempt has its own, see WithAttemptTimeout).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithUserAgent sets the User-Agent header. Default "robothub/<version> (go; <os>/<arch>)".
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// WithRetry sets how idempotent calls are retried.
func WithRetry(p RetryPolicy) Option { return func(c *Client) { c.retry = p } }

// WithAttemptTimeout bounds each attempt of a request. Default 30s. An attempt of an idempotent call
// that times out is retried.
func WithAttemptTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithLogger sets the logger for retries. Default: no logging.
func WithLogger(l *slog.Logger) Option { return func(c *Client) { c.log = l } }

// WithDownloadCaps sets the most one file (Download) and one snapshot (SnapshotDownload: every file
// of it together) may hold; a file over its cap is an error naming it and the cap, never a file
// cut short. 0 keeps the default (DefaultMaxFileBytes, DefaultMaxSnapshotBytes).
func WithDownloadCaps(file, snapshot int64) Option {
	return func(c *Client) {
		if file > 0 {
			c.maxFile = file
		}
		if snapshot > 0 {
			c.maxSnapshot = snapshot
		}
	}
}

// New returns a client for the hub at endpoint ("https://huggingface.co", "http://127.0.0.1:7861").
// An empty endpoint is DefaultEndpoint.
func New(endpoint string, opts ...Option) (*Client, error) {
	u, verr := parseEndpoint(cmp.Or(endpoint, DefaultEndpoint))
	if verr != nil {
		return nil, verr
	}
	c := &Client{
		endpoint:  u,
		http:      &http.Client{},
		userAgent: fmt.Sprintf("robothub/%s (go; %s/%s)", version.String(), runtime.GOOS, runtime.GOARCH),
		retry:     DefaultRetryPolicy,
		timeout:   30 * time.Second,
		log:       slog.New(slog.DiscardHandler),
		maxFile:   DefaultMaxFileBytes, maxSnapshot: DefaultMaxSnapshotBytes,
	}
	for _, o := range opts {
		o(c)
	}
	b := *u
	b.User = nil
	c.base = strings.TrimRight(b.String(), "/")
	if c.timeout > 0 { // each attempt is one Do of the HTTP client: its Timeout bounds the attempt
		hc := *c.http
		hc.Timeout = c.timeout
		c.http = &hc
	}
	return c, nil
}

// Endpoint returns the hub's base URL, without credentials.
func (c *Client) Endpoint() string { return c.endpoint.Redacted() }

// HasToken reports whether requests carry a token.
func (c *Client) HasToken() bool { return c.token != "" }

// Call is one API request that this package has no method for, such as the local hub's own API
// (internal/hubemu): Path is escaped and starts at the API root, Body is JSON-encoded when not nil,
// and an Idempotent call is retried as the client's policy allows.
type Call struct {
	Method     string
	Path       string // escaped, from the API root: /api/settings/webhooks/abc
	Body       any    // JSON-encoded when not nil
	Idempotent bool   // may be sent again after a failure whose outcome is unknown

	raw         []byte // sent as is instead of Body (the commit API's NDJSON), with contentType
	contentType string
	maxBytes    int64 // the most of the answer read; 0: maxResponseBytes
}

// overCapError is an answer larger than its call's cap.
type overCapError struct{ limit int64 }

func (e *overCapError) Error() string {
	return fmt.Sprintf("the answer is larger than %s", byteSize(e.limit))
}

// byteSize writes n bytes for people: 64 MiB, 1.5 GiB, 900 KiB, 12 bytes.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', -1, 64) + " GiB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', -1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', -1, 64) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Send sends c with the client's token, retries and error handling, and decodes a 2xx body into out
// (if not nil).
func (c *Client) Send(ctx context.Context, cl Call, out any) error {
	_, err := c.do(ctx, cl, out)
	return err
}

// send sends cl and returns the answer decoded into a new T.
func send[T any](ctx context.Context, c *Client, cl Call) (*T, error) {
	out := new(T)
	if _, err := c.do(ctx, cl, out); err != nil {
		return nil, err
	}
	return out, nil
}

// list GETs a JSON array at path; an empty answer is an empty list, never nil.
func list[T any](ctx context.Context, c *Client, path string) ([]T, error) {
	out, err := send[[]T](ctx, c, Call{Method: http.MethodGet, Path: path, Idempotent: true})
	if err != nil {
		return nil, err
	}
	if *out == nil {
		return []T{}, nil
	}
	return *out, nil
}

// do sends the call, retrying as the policy allows, and decodes a 2xx body into out (if not nil).
// It reports whether an attempt's outcome was unknown (no response) before the returned result.
func (c *Client) do(ctx context.Context, cl Call, out any) (unknownBefore bool, err error) {
	payload := cl.raw
	if cl.Body != nil {
		if payload, err = json.Marshal(cl.Body); err != nil {
			return false, fmt.Errorf("%s %s: encoding the request: %w", cl.Method, cl.Path, err)
		}
	}
	req, err := c.newRequest(ctx, cl, payload)
	if err != nil {
		return false, &TransportError{Method: cl.Method, Path: cl.Path, Err: err}
	}
	policy := c.retry
	if !cl.Idempotent {
		policy.MaxAttempts = 1
	}
	var body []byte
	read := false
	limit := cmp.Or(cl.maxBytes, maxResponseBytes)
	resp, err := policy.Do(c.http, req,
		func(resp *http.Response, err error) bool {
			// Nothing listens on this machine's port: a hub started later would come too late for
			// the retries, and three warnings before the one error only hide it.
			if err != nil && errors.Is(err, syscall.ECONNREFUSED) && loopbackHost(c.endpoint.Hostname()) {
				return false
			}
			return err != nil || retryableStatus(resp.StatusCode)
		},
		func(resp *http.Response) error { read = true; return ReadBody(&body, limit+1)(resp) },
		func(attempt int, delay time.Duration, resp *http.Response, err error) {
			failure := ""
			if err != nil {
				unknownBefore = true
				failure = c.transportError(ctx, cl, err).Error()
			} else {
				failure = cl.Method + " " + cl.Path + ": " + resp.Status
			}
			c.log.LogAttrs(ctx, slog.LevelWarn, "hub request failed, retrying",
				slog.String("method", cl.Method), slog.String("path", cl.Path), slog.Int("attempt", attempt),
				slog.Duration("delay", delay), slog.String("error", failure))
		})
	if err == nil && !read {
		err = ReadBody(&body, limit+1)(resp) // the last of retried answers
	}
	if err != nil {
		return unknownBefore, c.transportError(ctx, cl, err)
	}
	if int64(len(body)) > limit && resp.StatusCode < 400 {
		return unknownBefore, fmt.Errorf("%s %s: %w", cl.Method, cl.Path, &overCapError{limit: limit})
	}
	if resp.StatusCode >= 400 {
		return unknownBefore, errorFromResponse(cl.Method, cl.Path, resp, body, time.Now())
	}
	if raw, ok := out.(*rawBody); ok { // a file (Download), as it is
		*raw = body
		return unknownBefore, nil
	}
	if out == nil || len(bytes.TrimSpace(body)) == 0 {
		return unknownBefore, nil
	}
	if err := jsonv2.Unmarshal(body, out, lenientJSON); err != nil {
		return unknownBefore, fmt.Errorf("%s %s: the hub's answer is not the expected JSON: %w", cl.Method, cl.Path, err)
	}
	return unknownBefore, nil
}

// newRequest builds the request of a call; the retry loop sends its body again on each attempt.
func (c *Client) newRequest(ctx context.Context, cl Call, payload []byte) (*retryablehttp.Request, error) {
	var body any
	if payload != nil {
		body = payload
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, cl.Method, c.base+cl.Path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", cmp.Or(cl.contentType, "application/json"))
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if pw, ok := c.endpoint.User.Password(); ok {
		req.SetBasicAuth(c.endpoint.User.Username(), pw)
	}
	return req, nil
}

// transportError is an attempt that got no answer, said without the URL (which may hold
// credentials: the caller's error names the path).
func (c *Client) transportError(ctx context.Context, cl Call, err error) error {
	if ctx.Err() != nil {
		return &TransportError{Method: cl.Method, Path: cl.Path, Err: ctx.Err()}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s", c.timeout)
	}
	return &TransportError{Method: cl.Method, Path: cl.Path, Err: err}
}

// parseEndpoint reads a hub's base URL; the error shows the value (its user information hidden)
// and, for a host without a scheme (127.0.0.1:7861), the URL that was meant.
func parseEndpoint(endpoint string) (*url.URL, *ValidationError) {
	u, err := url.Parse(strings.TrimRight(endpoint, "/"))
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return u, nil
	}
	shown := redactURL(endpoint)
	if !strings.Contains(endpoint, "://") {
		guess := "https://" + strings.TrimRight(shown, "/")
		if g, err := url.Parse(guess); err == nil && g.Host != "" {
			if loopbackHost(g.Hostname()) {
				guess = "http" + strings.TrimPrefix(guess, "https")
			}
			return nil, invalid("endpoint", "%q is not an http(s) URL: it has no scheme; write %s", shown, guess)
		}
	}
	return nil, invalid("endpoint", "%q is not an http(s) URL such as %s", shown, DefaultEndpoint)
}

// loopbackHost reports whether host names this machine: localhost or a loopback address.
func loopbackHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// redactURL shows s with its user information hidden, also when s does not parse as a URL
// ("127.0.0.1:7861" does not: its first segment holds a colon) or parses without it
// ("alice:token@host" reads as scheme alice): everything before the last @ after the scheme goes.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.Opaque == "" && (u.User != nil || !strings.Contains(s, "@")) {
		return RedactUserinfo(u)
	}
	i := strings.LastIndex(s, "@")
	if i < 0 {
		return s
	}
	prefix := ""
	if scheme, _, ok := strings.Cut(s[:i], "://"); ok {
		prefix = scheme + "://"
	}
	return prefix + "xxxxx" + s[i:]
}

// RedactUserinfo writes u with its whole user information, user and password, shown as "xxxxx"
// (https://alice:s3cret@host/x and https://<token>@host/x both read https://xxxxx@host/x). net/url's
// Redacted hides the password only, but a token is as often the user part, and a user name says
// whose account a hub, index or repository is. This is the project's one rule for URLs in logs,
// errors and API answers.
func RedactUserinfo(u *url.URL) string {
	if u.User == nil {
		return u.String()
	}
	c := *u
	c.User = url.User("xxxxx")
	return c.String()
}
