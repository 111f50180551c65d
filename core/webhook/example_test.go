package webhook_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/robothub/robothub/core/webhook"
)

// A receiver with one route: a dataset push starts a training run; other events are acknowledged.
// The Server is an http.Handler: here httptest serves it, as adapters/nethttp, the Lambda adapter
// or a Cloud Function would.
func ExampleServer() {
	srv := webhook.NewServer(webhook.WithSecret("s3cret"), webhook.WithLogger(slog.New(slog.DiscardHandler)))
	err := srv.Add("retrain", func(ctx context.Context, p *webhook.Payload, _ http.Header) (any, error) {
		if p.Repo.Type == "dataset" && p.Event.Is(webhook.ScopeRepoContent, webhook.ActionUpdate) {
			return webhook.Response{Status: http.StatusAccepted, Body: map[string]string{"training": p.Repo.Name + "@" + p.Repo.HeadSha}}, nil
		}
		return "ignored", nil
	})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	deliver := func(secret, payload string) {
		req, _ := http.NewRequest("POST", ts.URL+"/webhooks/retrain", strings.NewReader(payload))
		req.Header.Set(webhook.SecretHeader, secret) // as the hub sends it
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		fmt.Printf("%d %s", resp.StatusCode, body)
	}
	deliver("s3cret", `{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"dataset","name":"alice/data","headSha":"1a2b3c"}}`)
	deliver("s3cret", `{"event":{"action":"create","scope":"discussion"},"repo":{"type":"model","name":"alice/bert"}}`)
	deliver("guess", `{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"dataset","name":"alice/data"}}`)
	deliver("s3cret", `{"event":{"scope":"repo.content"},"repo":{"type":"dataset","name":"alice/data"}}`)
	// Output:
	// 202 {"training":"alice/data@1a2b3c"}
	// 200 {"message":"ignored"}
	// 403 {"error":"Invalid webhook secret."}
	// 422 {"error":"payload field event.action is missing"}
}

// Parse reads a delivery's bytes, from whatever transport, into the v3 payload. An event in a
// scope newer than the package knows is an update of its closest known scope.
func ExampleParse() {
	p, err := webhook.Parse([]byte(`{"event":{"action":"update","scope":"repo.config.dois"},
		"repo":{"type":"model","name":"alice/bert","private":false},"webhook":{"id":"6571a3f0","version":3}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Repo.Type, p.Repo.Name, p.Event.Scope, p.Event.Normalized().Scope, p.Webhook.Version)

	_, err = webhook.Parse([]byte(`{"event":{"action":"update","scope":"repo"},"repo":{"type":"model","name":7}}`))
	fmt.Println(err)
	// Output:
	// model alice/bert repo.config.dois repo.config 3
	// payload field repo.name must be a string
}
