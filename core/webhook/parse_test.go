package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// loadPayloads returns every payload in testdata/payloads, by file name.
func loadPayloads(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("testdata/payloads/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no payloads in testdata/payloads: %v", err)
	}
	out := make(map[string][]byte, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	return out
}

// TestParseEveryPayload runs every payload in testdata through Parse and checks what a handler would
// read from it.
func TestParseEveryPayload(t *testing.T) {
	type want struct {
		scope, action, repo, repoType string
		normalized                    Event
		headSha                       string
		refs                          int
		config                        string
		discussion, pr, comment       bool
		hidden                        bool
		moved                         string
		merge                         string
	}
	wants := map[string]want{
		"repo-create.json":               {scope: "repo", action: "create", repo: "alice/bert-tiny", repoType: "model", headSha: "4b825dc642cb6eb9a060e54bf8d69288fbee4904"},
		"repo-update.json":               {scope: "repo", action: "update", repo: "alice/squad-mini", repoType: "dataset", headSha: "c379e821c9c95d613899e8c4343e4bfee2b0c600"},
		"repo-delete.json":               {scope: "repo", action: "delete", repo: "alice/old-demo", repoType: "space"},
		"repo-move.json":                 {scope: "repo", action: "move", repo: "alice/bert-tiny", repoType: "model", headSha: "575db8b7a51b6f85eb06eee540738584589f131c", moved: "acme-lab/bert-tiny"},
		"repo-content-push.json":         {scope: "repo.content", action: "update", repo: "alice/dance-app", repoType: "space", headSha: "575db8b7a51b6f85eb06eee540738584589f131c", refs: 3},
		"repo-config.json":               {scope: "repo.config", action: "update", repo: "alice/bert-tiny", repoType: "model", headSha: "575db8b7a51b6f85eb06eee540738584589f131c", config: `{"private": true, "xetEnabled": true}`},
		"discussion-create-pr.json":      {scope: "discussion", action: "create", repo: "openai-community/gpt2", repoType: "model", discussion: true, pr: true, comment: true},
		"discussion-update-merged.json":  {scope: "discussion", action: "update", repo: "openai-community/gpt2", repoType: "model", discussion: true, pr: true, merge: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"},
		"discussion-comment-create.json": {scope: "discussion.comment", action: "create", repo: "alice/squad-mini", repoType: "dataset", discussion: true, comment: true},
		"discussion-comment-hidden.json": {scope: "discussion.comment", action: "update", repo: "alice/squad-mini", repoType: "dataset", discussion: true, comment: true, hidden: true},
		"future-scope.json":              {scope: "repo.config.dois", action: "create", repo: "alice/bert-tiny", repoType: "model", headSha: "575db8b7a51b6f85eb06eee540738584589f131c", config: `{}`, normalized: Event{Action: "update", Scope: "repo.config"}},
	}
	payloads := loadPayloads(t)
	for name := range payloads {
		if _, ok := wants[name]; !ok {
			t.Errorf("testdata/payloads/%s has no expectation in this test", name)
		}
	}
	for name, w := range wants {
		t.Run(name, func(t *testing.T) {
			raw, ok := payloads[name]
			if !ok {
				t.Fatalf("testdata/payloads/%s is missing", name)
			}
			p, err := Parse(raw)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if p.Event.Scope != w.scope || p.Event.Action != w.action {
				t.Errorf("event = %+v, want %s %s", p.Event, w.scope, w.action)
			}
			norm := w.normalized
			if norm == (Event{}) {
				norm = Event{Action: w.action, Scope: w.scope}
			}
			if got := p.Event.Normalized(); got != norm {
				t.Errorf("normalized event = %+v, want %+v", got, norm)
			}
			if p.Repo.Name != w.repo || p.Repo.Type != w.repoType {
				t.Errorf("repo = %s %s, want %s %s", p.Repo.Type, p.Repo.Name, w.repoType, w.repo)
			}
			if p.Repo.ID == "" || p.Repo.URL.Web == "" || p.Repo.Owner.ID == "" {
				t.Errorf("repo id/url/owner not parsed: %+v", p.Repo)
			}
			if p.Webhook.ID != "6390e855e30d9209411de93b" || p.Webhook.Version != 3 {
				t.Errorf("webhook = %+v", p.Webhook)
			}
			if p.Repo.HeadSha != w.headSha {
				t.Errorf("repo.headSha = %q, want %q", p.Repo.HeadSha, w.headSha)
			}
			if len(p.UpdatedRefs) != w.refs {
				t.Errorf("updatedRefs = %d, want %d", len(p.UpdatedRefs), w.refs)
			}
			if got := string(p.UpdatedConfig); got != w.config {
				t.Errorf("updatedConfig = %q, want %q", got, w.config)
			}
			if (p.Discussion != nil) != w.discussion {
				t.Errorf("discussion present = %v, want %v", p.Discussion != nil, w.discussion)
			}
			if p.Discussion != nil {
				if p.Discussion.IsPullRequest != w.pr || p.Discussion.Num == 0 || p.Discussion.Title == "" {
					t.Errorf("discussion = %+v", p.Discussion)
				}
				merge := ""
				if p.Discussion.Changes != nil {
					merge = p.Discussion.Changes.MergeCommitID
				}
				if merge != w.merge {
					t.Errorf("mergeCommitId = %q, want %q", merge, w.merge)
				}
			}
			if (p.Comment != nil) != w.comment {
				t.Errorf("comment present = %v, want %v", p.Comment != nil, w.comment)
			}
			if p.Comment != nil && p.Comment.Hidden != w.hidden {
				t.Errorf("comment.hidden = %v, want %v", p.Comment.Hidden, w.hidden)
			}
			moved := ""
			if p.MovedTo != nil {
				moved = p.MovedTo.Name
			}
			if moved != w.moved {
				t.Errorf("movedTo = %q, want %q", moved, w.moved)
			}
			if !bytes.Equal(p.Raw, raw) {
				t.Error("Raw is not the delivered bytes")
			}
		})
	}
}

func TestParseUpdatedRefsNulls(t *testing.T) {
	p, err := Parse(loadPayloads(t)["repo-content-push.json"])
	if err != nil {
		t.Fatal(err)
	}
	main, tag, gone := p.UpdatedRefs[0], p.UpdatedRefs[1], p.UpdatedRefs[2]
	if main.Ref != "refs/heads/main" || main.OldSha == nil || main.NewSha == nil || *main.NewSha != p.Repo.HeadSha {
		t.Errorf("updated main = %+v", main)
	}
	if tag.OldSha != nil || tag.NewSha == nil {
		t.Errorf("a new ref must have a null oldSha: %+v", tag)
	}
	if gone.NewSha != nil || gone.OldSha == nil {
		t.Errorf("a deleted ref must have a null newSha: %+v", gone)
	}
}

// TestParseKeepsUnknownFields: fields the hub adds later are not dropped.
func TestParseKeepsUnknownFields(t *testing.T) {
	p, err := Parse(loadPayloads(t)["future-scope.json"])
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(p.Raw, &all); err != nil {
		t.Fatal(err)
	}
	if string(all["deliveredAt"]) != `"2026-11-20T10:15:00Z"` {
		t.Errorf("unknown top-level field lost: %s", all["deliveredAt"])
	}
	if p.Event.Known() {
		t.Error("repo.config.dois reported as a known scope")
	}
	if !p.Event.Is(ScopeRepoConfig, ActionUpdate) {
		t.Error("repo.config.dois should count as an update of repo.config")
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, body string
		notJSON    bool
		field      string
	}{
		{"empty", ``, true, ""},
		{"garbage", `not json`, true, ""},
		{"truncated", `{"event":{"action":"update"`, true, ""},
		{"array", `[1,2]`, true, ""},
		{"string", `"hello"`, true, ""},
		{"empty object", `{}`, false, "event"},
		{"no action", `{"event":{"scope":"repo"},"repo":{"type":"model","name":"a/b"}}`, false, "event.action"},
		{"no scope", `{"event":{"action":"update"},"repo":{"type":"model","name":"a/b"}}`, false, "event.scope"},
		{"no repo", `{"event":{"action":"update","scope":"repo"}}`, false, "repo"},
		{"no repo name", `{"event":{"action":"update","scope":"repo"},"repo":{"type":"model","id":"x"}}`, false, "repo.name"},
		{"no repo type", `{"event":{"action":"update","scope":"repo"},"repo":{"name":"a/b"}}`, false, "repo.type"},
		{"action not a string", `{"event":{"action":5,"scope":"repo"},"repo":{"type":"model","name":"a/b"}}`, false, "event.action"},
		{"private not a bool", `{"event":{"action":"update","scope":"repo"},"repo":{"type":"model","name":"a/b","private":"yes"}}`, false, "repo.private"},
		{"refs not an array", `{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"model","name":"a/b"},"updatedRefs":{}}`, false, "updatedRefs"},
		{"ref without name", `{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"model","name":"a/b"},"updatedRefs":[{"newSha":"x"}]}`, false, "updatedRefs[0].ref"},
		{"config not an object", `{"event":{"action":"update","scope":"repo.config"},"repo":{"type":"model","name":"a/b"},"updatedConfig":[1]}`, false, "updatedConfig"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse([]byte(c.body))
			if err == nil {
				t.Fatalf("Parse(%s) = %+v, want an error", c.body, p)
			}
			if got := errors.Is(err, ErrNotJSON); got != c.notJSON {
				t.Fatalf("errors.Is(ErrNotJSON) = %v, want %v (err: %v)", got, c.notJSON, err)
			}
			if c.notJSON {
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FieldError", err)
			}
			if fe.Field != c.field {
				t.Errorf("field = %q, want %q (err: %v)", fe.Field, c.field, err)
			}
			if !strings.Contains(err.Error(), c.field) {
				t.Errorf("message %q does not name the field %q", err.Error(), c.field)
			}
		})
	}
}

// FuzzParse: no input makes Parse panic, and whatever parses satisfies the payload's invariants
// and survives a re-encoding.
func FuzzParse(f *testing.F) {
	for _, b := range loadPayloads(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := Parse(raw)
		if err != nil {
			var fe *FieldError
			if !errors.Is(err, ErrNotJSON) && !errors.As(err, &fe) {
				t.Fatalf("error of an unexpected kind: %T %v", err, err)
			}
			return
		}
		if p.Event.Action == "" || p.Event.Scope == "" || p.Repo.Name == "" || p.Repo.Type == "" {
			t.Fatalf("parsed a payload without its required fields: %+v", p)
		}
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
		q, err := Parse(again)
		if err != nil {
			t.Fatalf("re-encoded payload does not parse: %v\n%s", err, again)
		}
		if q.Event != p.Event || q.Repo.Name != p.Repo.Name || len(q.UpdatedRefs) != len(p.UpdatedRefs) {
			t.Fatalf("round trip changed the payload: %+v vs %+v", p, q)
		}
	})
}

// BenchmarkParse measures Parse on the hub's own example payload in compact form (998 bytes, as
// the hub sends it), beside json/v2's and encoding/json's Unmarshal on the same bytes. Parse keeps
// the strings of recent payloads (decode.go); fresh-strings gives each delivery IDs, a title and
// URLs it has not seen, as a receiver watching many repositories sees them.
func BenchmarkParse(b *testing.B) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, loadPayloads(b)["discussion-create-pr.json"]); err != nil {
		b.Fatal(err)
	}
	raw := buf.Bytes()
	fresh := make([][]byte, 4096)
	for i := range fresh {
		tag := fmt.Sprintf("%06x", i)
		fresh[i] = regexp.MustCompile(`[0-9a-f]{6}("|/)`).ReplaceAll(raw, []byte(tag+"$1"))
		fresh[i] = bytes.ReplaceAll(fresh[i], []byte(`"title":"`), []byte(`"title":"`+tag))
	}
	run := func(name string, decode func(i int) error) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := decode(i); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
	run("Parse", func(int) error { _, err := Parse(raw); return err })
	run("Parse/fresh-strings", func(i int) error { _, err := Parse(fresh[i%len(fresh)]); return err })
	run("json-v2.Unmarshal", func(int) error { return jsonv2.Unmarshal(raw, new(Payload)) })
	run("encoding-json.Unmarshal", func(int) error { return json.Unmarshal(raw, new(Payload)) })
}

// payloadNames is every JSON name of the payload model, by its case-folded form.
var payloadNames = func() map[string]string {
	names := map[string]string{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		for f := range t.Fields() {
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
				names[strings.ToLower(name)] = name
				walk(f.Type)
			}
		}
	}
	walk(reflect.TypeFor[Payload]())
	return names
}()

// namesDifferOnlyByCase reports whether a JSON document has a member whose name matches a payload
// field only when case is ignored: encoding/json matches names without case, Parse does not.
func namesDifferOnlyByCase(raw []byte) bool {
	var doc any
	if err := jsonv2.Unmarshal(raw, &doc); err != nil {
		return false
	}
	var visit func(v any) bool
	visit = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				for _, name := range payloadNames {
					if k != name && strings.EqualFold(k, name) {
						return true
					}
				}
				if visit(e) {
					return true
				}
			}
		case []any:
			for _, e := range v {
				if visit(e) {
					return true
				}
			}
		}
		return false
	}
	return visit(doc)
}

// FuzzParseMatchesEncodingJSON: on valid JSON Parse gives what encoding/json gives, the same payload
// or an error on the same field, except where the two decoders differ by design: Parse refuses
// duplicate names and invalid UTF-8 (encoding/json keeps the last duplicate and replaces bad bytes)
// and matches names exactly (encoding/json ignores case). Whatever encoding/json refuses as JSON,
// Parse refuses as not JSON.
func FuzzParseMatchesEncodingJSON(f *testing.F) {
	for _, b := range loadPayloads(f) {
		f.Add(b)
	}
	for _, s := range []string{`{"repo":{"tags":[]},"updatedRefs":[]}`, `{"repo":null,"discussion":null,"updatedConfig":null}`,
		`{"webhook":{"version":3.5}}`, `{"webhook":{"version":"3"}}`, `{"a":1} x`, `{"event":{"action":"x","action":"y"}}`,
		`{"updatedRefs":[null,{"ref":"r","oldSha":null}]}`, `{"repo":{"Name":"a"}}`, `{"comment":{"content":"\u00e9\n\ud83d\ude00"}}`,
		`{"repo":{"owner":{"id":5}}}`, `{"updatedConfig":{ "private" : true }}`, `{"discussion":{"changes":null,"num":-0}}`,
		`{"event":{"action":"update","scope":"repo"},"repo":{"type":"model","name":"a/b"},"updatedRefs":[{"ref":1}]}`,
		`{"event":{"action":"update","scope":"repo"},"repo":{"type":"model","name":"a/b","tags":["x"]},"updatedConfig":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if firstByte(raw) != '{' {
			return // Parse refuses these before decoding
		}
		got, gotErr := Parse(raw)
		if !jsontext.Value(raw).IsValid() || !json.Valid(raw) {
			if !errors.Is(gotErr, ErrNotJSON) {
				t.Fatalf("Parse(%q) = %v, want ErrNotJSON", raw, gotErr)
			}
			return
		}
		if namesDifferOnlyByCase(raw) {
			return
		}
		want := new(Payload)
		wantErr := json.Unmarshal(raw, want)
		var ute *json.UnmarshalTypeError
		switch {
		case wantErr == nil:
			if wantErr = want.validate(); wantErr == nil {
				want.Raw = raw
				if got != nil {
					got.canonical = false // encoding/json does not know it
				}
				if gotErr != nil || !reflect.DeepEqual(got, want) {
					t.Fatalf("decoders disagree on %q:\nParse         %+v %v\nencoding/json %+v", raw, got, gotErr, want)
				}
				return
			}
			var gf *FieldError
			if !errors.As(gotErr, &gf) || *gf != *wantErr.(*FieldError) {
				t.Fatalf("Parse(%q) = %v, want %v", raw, gotErr, wantErr)
			}
		case errors.As(wantErr, &ute):
			var gf *FieldError
			if !errors.As(gotErr, &gf) {
				t.Fatalf("Parse(%q) = %v, want a field error like %v", raw, gotErr, wantErr)
			}
			// encoding/json names the field without array indices: updatedRefs.ref.
			field := regexp.MustCompile(`\[\d+\]`).ReplaceAllString(gf.Field, "")
			if field != ute.Field || gf.Problem != "must be "+jsonKind(ute.Type.Kind()) {
				t.Fatalf("Parse(%q) = %v; encoding/json: %v", raw, gotErr, wantErr)
			}
		default:
			t.Fatalf("encoding/json failed on valid JSON %q: %v", raw, wantErr)
		}
	})
}
