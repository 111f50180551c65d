package awsiot_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/robothub/robothub/adapters/awsiot"
	"github.com/robothub/robothub/core/fault"
	"github.com/robothub/robothub/core/fleet"
	"github.com/robothub/robothub/core/webhook"
	"github.com/robothub/robothub/internal/actions"
)

var creds = aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", SessionToken: "session-token"}

type published struct {
	topic   string
	query   url.Values
	payload []byte
}

// dataPlane stands in for AWS IoT Core's data endpoint: it checks each request's SigV4 signature
// against the role's credentials (re-signing the request as the service would) and records it.
type dataPlane struct {
	mu     sync.Mutex
	got    []published
	refuse int // answer this status instead
}

func (d *dataPlane) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		http.Error(w, `{"message":"missing X-Amz-Date"}`, http.StatusForbidden)
		return
	}
	sum := sha256.Sum256(body)
	check, _ := http.NewRequest(r.Method, "https://"+r.Host+r.URL.RequestURI(), strings.NewReader(string(body)))
	// As the service does: only the headers the client signed count.
	_, signed, _ := strings.Cut(r.Header.Get("Authorization"), "SignedHeaders=")
	signed, _, _ = strings.Cut(signed, ",")
	for _, k := range strings.Split(signed, ";") {
		if k != "host" && k != "x-amz-date" && k != "x-amz-security-token" && k != "content-length" {
			check.Header[http.CanonicalHeaderKey(k)] = r.Header.Values(k)
		}
	}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, check, hex.EncodeToString(sum[:]), awsiot.SigningName, "eu-west-1", at); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if check.Header.Get("Authorization") != r.Header.Get("Authorization") {
		http.Error(w, `{"message":"The request signature we calculated does not match the signature you provided."}`, http.StatusForbidden)
		return
	}
	if d.refuse != 0 {
		http.Error(w, `{"message":"Not authorized to publish"}`, d.refuse)
		return
	}
	topic, ok := strings.CutPrefix(r.URL.Path, "/topics/")
	if r.Method != http.MethodPost || !ok {
		http.Error(w, `{"message":"not found"}`, http.StatusNotFound)
		return
	}
	d.mu.Lock()
	d.got = append(d.got, published{topic: topic, query: r.URL.Query(), payload: body})
	d.mu.Unlock()
	w.Write([]byte(`{}`))
}

func newLink(t *testing.T, d *dataPlane) *awsiot.Link {
	srv := httptest.NewTLSServer(d)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	env := map[string]string{"AWS_ACCESS_KEY_ID": creds.AccessKeyID, "AWS_SECRET_ACCESS_KEY": creds.SecretAccessKey,
		"AWS_SESSION_TOKEN": creds.SessionToken, "AWS_REGION": "eu-west-1"}
	link, err := awsiot.FromEnv(&url.URL{Scheme: "awsiot", Host: u.Host}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	link.Client = srv.Client()
	return link
}

// A push delivered to a Lambda-style receiver (ephemeral, fleet:awsiot://) becomes one signed,
// retained QoS 1 publish on the space's wave topic, answered 202.
func TestLambdaRouteAnnouncesThroughTheDataPlane(t *testing.T) {
	d := &dataPlane{}
	link := newLink(t, d)
	srv := webhook.NewServer(webhook.WithSecret("s"), webhook.WithLogger(slog.New(slog.DiscardHandler)))
	b := actions.NewBuilder(actions.Config{Ephemeral: true, Logger: slog.New(slog.DiscardHandler), Getenv: func(string) string { return "" },
		FleetDialers: map[string]fleet.Dialer{"awsiot": func(context.Context, fleet.LinkRequest) (fleet.Link, error) { return link, nil }}})
	defer b.Close(context.Background())
	if err := b.Register(srv, []actions.Route{{Name: "fleet", Action: "fleet:awsiot://example-ats.iot.eu-west-1.amazonaws.com"}}); err != nil {
		t.Fatal(err)
	}
	rev := strings.Repeat("ab", 20)
	req := httptest.NewRequest(http.MethodPost, "/webhooks/fleet", strings.NewReader(
		`{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"space","name":"alice/catalog_app","headSha":"`+rev+`"}}`))
	req.Header.Set(webhook.SecretHeader, "s")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("the receiver answered %d: %s", rec.Code, rec.Body)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var wave *published
	for i, p := range d.got {
		if p.topic == (fleet.Topics{}).Wave("alice/catalog_app", 0) {
			wave = &d.got[i]
		}
	}
	if wave == nil {
		t.Fatalf("no publish on the wave topic; got %+v", d.got)
	}
	if wave.query.Get("qos") != "1" || wave.query.Get("retain") != "true" {
		t.Errorf("wave message published with %v, want qos=1 and retain=true", wave.query)
	}
	u, err := fleet.ParseUpdate(wave.payload)
	if err != nil || u.Revision != rev || u.Space != "alice/catalog_app" || u.From != 0 || u.To != fleet.Buckets {
		t.Errorf("wave message %+v (%v), want the whole fleet at %s", u, err, rev)
	}
}

// The data plane's refusals are errors of the right kind, naming the topic and the reason; a
// canary route, which needs to follow the robots, is refused when the route is built.
func TestDataPlaneRefusals(t *testing.T) {
	d := &dataPlane{refuse: http.StatusForbidden}
	link := newLink(t, d)
	err := link.Publish(context.Background(), "robothub/v1/spaces/a/b/wave/0", []byte("{}"), true)
	if !errors.Is(err, fault.ErrForbidden) || !strings.Contains(err.Error(), "robothub/v1/spaces/a/b/wave/0") || !strings.Contains(err.Error(), "Not authorized") {
		t.Errorf("a 403: %v", err)
	}
	if strings.Contains(err.Error(), creds.SecretAccessKey) || strings.Contains(err.Error(), creds.SessionToken) {
		t.Errorf("the error shows the credentials: %v", err)
	}
	d.refuse = http.StatusServiceUnavailable
	if err := link.Publish(context.Background(), "t", nil, false); !errors.Is(err, fault.ErrUnavailable) {
		t.Errorf("a 503: %v", err)
	}
	// A wrong secret key: the signature does not match.
	d.refuse = 0
	bad := *link
	bad.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		c := creds
		c.SecretAccessKey = "wrong"
		return c, nil
	})
	if err := bad.Publish(context.Background(), "t", nil, false); !errors.Is(err, fault.ErrForbidden) || !strings.Contains(err.Error(), "signature") {
		t.Errorf("a wrong key: %v", err)
	}

	noEnv := func(string) string { return "" }
	b := actions.NewBuilder(actions.Config{Logger: slog.New(slog.DiscardHandler), Getenv: noEnv,
		FleetDialers: map[string]fleet.Dialer{"awsiot": awsiot.FleetDialer(noEnv)}})
	defer b.Close(context.Background())
	srv := webhook.NewServer(webhook.WithSecret("s"))
	err = b.Register(srv, []actions.Route{{Name: "fleet", Action: "fleet:awsiot://example-ats.iot.eu-west-1.amazonaws.com?canary=10"}})
	if err == nil || !strings.Contains(err.Error(), "canary") {
		t.Errorf("a canary route over the data plane: %v", err)
	}

	for _, target := range []string{"awsiot://", "awsiot://user@host", "awsiot://host/path"} {
		u, _ := url.Parse(target)
		if _, err := awsiot.FromEnv(u, func(string) string { return "x" }); err == nil {
			t.Errorf("FromEnv(%s): no error", target)
		}
	}
	u, _ := url.Parse("awsiot://host")
	if _, err := awsiot.FromEnv(u, func(k string) string { return map[string]string{"AWS_REGION": "eu-west-1"}[k] }); err == nil || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Errorf("FromEnv without credentials: %v", err)
	}
}
