package daemonclient_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/robothub/robothub/internal/daemonclient"
)

// seen keeps what a test server was sent.
type seen struct {
	mu          sync.Mutex
	auth, hosts []string
}

func (s *seen) add(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	s.hosts = append(s.hosts, r.Host)
}

// A client over the owner's socket reaches the daemon whose data directory it is given, with no
// token and as localhost (a host the daemon serves); over TCP it sends the token it was given.
func TestClientReachesTheDaemonBySocketOrToken(t *testing.T) {
	var got seen
	healthz := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.add(r)
		if r.Method != "GET" || r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status": "ok"}`)
	})

	dir := t.TempDir()
	ln, err := net.Listen("unix", daemonclient.SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	overSocket := httptest.NewUnstartedServer(healthz)
	overSocket.Listener = ln
	overSocket.Start()
	defer overSocket.Close()
	overTCP := httptest.NewServer(healthz)
	defer overTCP.Close()

	bySocket := daemonclient.NewSocket(dir, daemonclient.Options{})
	byToken := daemonclient.New(overTCP.URL+"/", daemonclient.Options{Token: "owner-token"})
	for i, d := range []*daemonclient.Daemon{bySocket, byToken} {
		resp, err := d.Client().GetHealthzWithResponse(context.Background())
		if err != nil || resp.JSON200 == nil || resp.JSON200.Status != "ok" {
			t.Fatalf("daemon %d (socket, token): GET /healthz: %v %+v", i, err, resp)
		}
	}
	// Call sends the same request as the client's method.
	if resp, err := daemonclient.Call(context.Background(), byToken, daemonclient.NewGetHealthzRequest, daemonclient.ParseGetHealthzResponse); err != nil || resp.JSON200 == nil {
		t.Fatalf("Call GET /healthz: %v %+v", err, resp)
	}
	if len(got.auth) != 3 || got.auth[0] != "" || got.hosts[0] != "localhost" {
		t.Errorf("over the socket the daemon got Authorization %q, Host %q; want none, localhost", got.auth, got.hosts)
	}
	if len(got.auth) != 3 || got.auth[1] != "Bearer owner-token" || got.auth[2] != "Bearer owner-token" {
		t.Errorf("over TCP the daemon got Authorization %q, want Bearer owner-token", got.auth)
	}
}

// A call reads at most MaxAnswer bytes: an answer of exactly that many is read, one byte more is
// refused with ErrTooLarge.
func TestClientCapsTheAnswer(t *testing.T) {
	var size atomic.Int64
	size.Store(daemonclient.MaxAnswer)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "["+strings.Repeat(" ", int(size.Load())-2)+"]")
	}))
	defer srv.Close()
	c := daemonclient.New(srv.URL, daemonclient.Options{}).Client()
	resp, err := c.GetApiAppsListWithResponse(context.Background())
	if err != nil || resp.JSON200 == nil || len(*resp.JSON200) != 0 {
		t.Fatalf("an answer of MaxAnswer bytes: %v", err)
	}
	size.Add(1)
	if _, err := c.GetApiAppsListWithResponse(context.Background()); !errors.Is(err, daemonclient.ErrTooLarge) {
		t.Fatalf("an answer of MaxAnswer+1 bytes: %v, want ErrTooLarge", err)
	}
}

// An answer other than the documented one is an error naming the call, the status and the
// daemon's detail, or what was wrong with a 200.
func TestUnexpectedNamesTheCallAndTheDetail(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/apps/update" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			io.WriteString(w, `{"detail": "revision: x is not a git commit"}`)
			return
		}
		io.WriteString(w, "ok") // text/plain, not the document's JSON
	}))
	defer srv.Close()
	c := daemonclient.New(srv.URL, daemonclient.Options{}).Client()
	up, err := c.PostApiAppsUpdateWithResponse(context.Background(), daemonclient.PostApiAppsUpdateJSONRequestBody{Url: "x"})
	if err != nil || up.JSON200 != nil {
		t.Fatalf("refused update: %v %+v", err, up)
	}
	err = daemonclient.Unexpected(up.HTTPResponse, up.Body)
	var ae *daemonclient.AnswerError
	if !errors.As(err, &ae) || ae.Code != 422 || err.Error() != "robot daemon POST /api/apps/update: 422 Unprocessable Entity revision: x is not a git commit" {
		t.Errorf("refused update: %v", err)
	}
	refresh := true
	list, err := c.GetApiAppsListAvailableSourceKindWithResponse(context.Background(), "hf_space", &daemonclient.GetApiAppsListAvailableSourceKindParams{Refresh: &refresh})
	if err != nil || list.JSON200 != nil {
		t.Fatalf("text answer: %v %+v", err, list)
	}
	if err := daemonclient.Unexpected(list.HTTPResponse, list.Body); err == nil || !strings.Contains(err.Error(),
		"robot daemon GET /api/apps/list-available/hf_space?refresh=true: 200 OK not the JSON answer docs/robot-api.openapi.json gives (Content-Type text/plain") {
		t.Errorf("text answer: %v", err)
	}
}
