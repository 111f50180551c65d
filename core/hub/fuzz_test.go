package hub

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzParseWatchedItem: whatever the text, parsing either fails with a ValidationError or gives an
// item that prints back as type:name and passes validation.
func FuzzParseWatchedItem(f *testing.F) {
	for _, s := range []string{"model:alice/bert", "org:acme", "user:a/b", "bucket:x", ":", "model:", "a:b:c", " space : x/y "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWatchedItem(s)
		if err != nil {
			if _, ok := err.(*ValidationError); !ok {
				t.Fatalf("%q: error %T %v", s, err, err)
			}
			return
		}
		again, err := ParseWatchedItem(w.String())
		if err != nil || again != w {
			t.Fatalf("%q -> %v -> %v %v", s, w, again, err)
		}
	})
}

// FuzzHubAnswers feeds arbitrary bytes as a hub's error body and as a webhook record: no panic, and
// an error always has a message.
func FuzzHubAnswers(f *testing.F) {
	for _, s := range []string{`{"error":"x"}`, `{"error":["a","b"]}`, `{"error":"invalid_grant","error_description":"d"}`,
		`{"webhook":{"id":"a","job":{"secrets":{"A":1}},"watched":[],"domains":[],"disabled":false}}`,
		`{"webhook":{"job":{"secrets":"x"}}}`, `[`, `null`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		resp := &http.Response{StatusCode: 400, Header: http.Header{"Content-Type": {"text/plain"}}}
		e := errorFromResponse("GET", "/x", resp, []byte(body), time.Now())
		if e.Message == "" || !strings.Contains(e.Error(), "400 Bad Request") {
			t.Fatalf("%q: %v", body, e)
		}
		var env webhookEnvelope
		_ = json.Unmarshal([]byte(body), &env)
	})
}
