package http_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/testkit/hubtest"

	"github.com/robothub/robothub/internal/hubemu"
	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// FuzzRequestBodies sends arbitrary bodies to the routes that decode one: whatever arrives, the
// answer is 2xx or a 4xx with an {"error": ...} body, never a 500.
func FuzzRequestBodies(f *testing.F) {
	for _, seed := range []string{
		`{"url":"https://e.com/h","watched":[{"type":"user","name":"alice"}]}`,
		`{"url":"https://e.com/h","watched":[{"type":"model","name":"alice/bert"}],"domains":["discussions"],"secret":"s"}`,
		`{"jobSourceId":"0123456789abcdef01234567","watched":[{"type":"org","name":"acme"}],"secrets":{"A":"1"}}`,
		`{"repo":"model:alice/bert","scope":"repo.content","action":"update"}`,
		`{"repo":"space:alice/app","scope":"discussion","action":"create","discussion":{"isPullRequest":true}}`,
		`{"command":["sh","-c","true"],"environment":{"A":"1"}}`,
		`{"name":"app","organization":null,"type":"space","private":true,"sdk":"static"}`,
		`{"watched":null}`, `[]`, `null`, `{"url":1}`, "", "{", `{"watched":[{}]}`,
	} {
		f.Add(seed)
	}
	emu := hubtest.Start(f, localhub.Config{AllowJobs: true})
	token, _ := emu.Token(f, "alice", hubemu.RoleWrite)
	api := emu.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/api/settings/webhooks", "/api/emulator/events", "/api/emulator/jobs", "/api/repos/create"} {
			req := httptest.NewRequest("POST", path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token)
			rec := httptest.NewRecorder()
			api.ServeHTTP(rec, req)
			res := rec.Result()
			data, _ := io.ReadAll(res.Body)
			if res.StatusCode >= 500 {
				t.Fatalf("POST %s %q: %d %s", path, body, res.StatusCode, data)
			}
			if res.StatusCode >= 400 {
				var e struct{ Error string }
				if json.Unmarshal(data, &e) != nil || e.Error == "" {
					t.Fatalf("POST %s %q: %d without an error message: %s", path, body, res.StatusCode, data)
				}
			}
			if res.StatusCode != http.StatusOK && res.StatusCode < 400 {
				t.Fatalf("POST %s: status %d", path, res.StatusCode)
			}
		}
	})
}
