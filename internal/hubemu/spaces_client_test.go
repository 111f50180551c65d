package hubemu_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/robothub/robothub/internal/hubemu/localhub"
)

// create_repo(..., exist_ok=True) of the public Python client reads "url" from the 409 answer.
func TestCreateExistingSpaceAnswersItsURL(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	body := map[string]any{"name": "wave", "organization": nil, "type": "space", "sdk": "gradio"}
	h.mustCall("POST", "/api/repos/create", h.token, body, 200, nil)
	status, resp, hdr := h.call("POST", "/api/repos/create", h.token, body)
	var got struct{ Error, URL string }
	if err := json.Unmarshal(resp, &got); err != nil || status != 409 {
		t.Fatalf("%d %s", status, resp)
	}
	if got.URL != h.emu.PublicURL()+"/spaces/alice/wave" || got.Error != "You already created this space repo: alice/wave" {
		t.Fatalf("409 body %s", resp)
	}
	if hdr.Get("X-Error-Message") != got.Error {
		t.Fatalf("X-Error-Message %q", hdr.Get("X-Error-Message"))
	}
}

// The 1.x client sends "visibility" instead of "private".
func TestCreateSpaceVisibility(t *testing.T) {
	h := newTestHub(t, localhub.Config{})
	h.mustCall("POST", "/api/repos/create", h.token, map[string]any{"name": "hidden", "type": "space", "sdk": "static", "visibility": "private"}, 200, nil)
	h.mustCall("POST", "/api/repos/create", h.token, map[string]any{"name": "shown", "type": "space", "sdk": "static", "visibility": "public"}, 200, nil)
	h.mustCall("GET", "/api/spaces/alice/hidden", "", nil, 401, nil)
	h.mustCall("GET", "/api/spaces/alice/shown", "", nil, 200, nil)
	for _, tt := range []struct {
		body map[string]any
		msg  string
	}{
		{map[string]any{"name": "p", "type": "space", "visibility": "protected"}, "visibility: protected spaces"},
		{map[string]any{"name": "p", "type": "space", "visibility": "secret"}, `visibility: "secret" is not one of public, private`},
		{map[string]any{"name": "p", "type": "space", "visibility": "public", "private": true}, "private and visibility disagree"},
	} {
		status, resp, _ := h.call("POST", "/api/repos/create", h.token, tt.body)
		var e struct{ Error string }
		_ = json.Unmarshal(resp, &e)
		if status != 400 || !strings.Contains(e.Error, tt.msg) {
			t.Errorf("%v: %d %s, want 400 %q", tt.body, status, resp, tt.msg)
		}
	}
	h.mustCall("GET", "/api/spaces/alice/p", h.token, nil, 404, nil)
}
