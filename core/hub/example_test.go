package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/robothub/robothub/core/hub"
	"github.com/robothub/robothub/core/webhook"
)

// exampleHub stands for the hub in the example: it stores the webhooks the client creates and,
// on push, delivers an event to each as the hub does (the webhook's secret in X-Webhook-Secret).
type exampleHub struct {
	mu       sync.Mutex
	webhooks []hub.Webhook
}

func (h *exampleHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case r.Method == "POST" && r.URL.Path == hub.WebhooksPath:
		var wh hub.Webhook
		_ = json.NewDecoder(r.Body).Decode(&wh)
		wh.ID = fmt.Sprintf("6571a3f0c9d2e4b1a8f0de%02d", len(h.webhooks))
		h.webhooks = append(h.webhooks, wh)
		_ = json.NewEncoder(w).Encode(map[string]any{"webhook": wh})
	case r.Method == "GET" && r.URL.Path == hub.WebhooksPath:
		_ = json.NewEncoder(w).Encode(h.webhooks)
	default:
		http.NotFound(w, r)
	}
}

func (h *exampleHub) push(repo, sha string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, wh := range h.webhooks {
		payload := fmt.Sprintf(`{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"model","name":%q,"headSha":%q},"webhook":{"id":%q,"version":3}}`, repo, sha, wh.ID)
		req, _ := http.NewRequest("POST", wh.URL, bytes.NewReader([]byte(payload)))
		req.Header.Set(webhook.SecretHeader, wh.Secret)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

// A webhook round trip: the client creates a webhook on the hub that points at a receiver, a push
// to a watched repository reaches the receiver's handler, and the webhook is listed.
func Example() {
	ctx := context.Background()

	// The receiver, with the secret the webhook will carry.
	const secret = "s3cret"
	receiver := webhook.NewServer(webhook.WithSecret(secret), webhook.WithLogger(slog.New(slog.DiscardHandler)))
	_ = receiver.Add("deploy", func(_ context.Context, p *webhook.Payload, _ http.Header) (any, error) {
		fmt.Printf("receiver: %s %s on %s at %s\n", p.Event.Scope, p.Event.Action, p.Repo.Name, p.Repo.HeadSha)
		return nil, nil
	})
	recv := httptest.NewServer(receiver)
	defer recv.Close()

	// The hub, and a client of it (the endpoint would be https://huggingface.co, or the local hub).
	h := &exampleHub{}
	hubSrv := httptest.NewServer(h)
	defer hubSrv.Close()
	client, err := hub.New(hubSrv.URL, hub.WithToken("hf_example_token"))
	if err != nil {
		panic(err)
	}

	wh, err := client.Create(ctx, hub.CreateRequest{
		URL:     recv.URL + "/webhooks/deploy",
		Watched: []hub.WatchedItem{{Type: "model", Name: "alice/bert"}},
		Domains: []string{"repo"},
		Secret:  secret,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("created", wh.ID)

	h.push("alice/bert", "575db8b")

	list, err := client.List(ctx)
	if err != nil {
		panic(err)
	}
	for _, w := range list {
		fmt.Println("listed", w.ID, w.Watched[0].Type+":"+w.Watched[0].Name, "disabled:", w.Disabled)
	}
	// Output:
	// created 6571a3f0c9d2e4b1a8f0de00
	// receiver: repo.content update on alice/bert at 575db8b
	// listed 6571a3f0c9d2e4b1a8f0de00 model:alice/bert disabled: false
}
