package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/robothub/robothub/core/webhook"
)

// logLine is what the log action prints: one JSON object per delivery, so `jq` can read the stream.
type logLine struct {
	Time    time.Time       `json:"time"`
	Route   string          `json:"route"`
	Event   webhook.Event   `json:"event"`
	Repo    string          `json:"repo"`
	Payload json.RawMessage `json:"payload"`
}

var outputMu sync.Mutex // one line at a time, whatever the number of routes

func (b *Builder) logAction(route string) webhook.HandlerFunc {
	return func(_ context.Context, p *webhook.Payload, _ http.Header) (any, error) {
		line, err := json.Marshal(logLine{
			Time: time.Now().UTC(), Route: route, Event: p.Event,
			Repo: p.Repo.Type + ":" + p.Repo.Name, Payload: compact(p.Raw),
		})
		if err != nil {
			return nil, err
		}
		outputMu.Lock()
		_, err = b.cfg.Output.Write(append(line, '\n'))
		outputMu.Unlock()
		if err != nil {
			return nil, err
		}
		return "logged " + p.Event.Scope + " " + p.Event.Action + " on " + p.Repo.Name, nil
	}
}

// compact returns raw on one line (a delivered payload is valid JSON: Parse checked it).
func compact(raw []byte) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}
