package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// decoderSeeds are documents on the decoder's edges: escapes in names and strings, nulls
// everywhere, arrays that grow, numbers an int cannot hold, every kind in every field, and what
// jsontext refuses (duplicates, invalid UTF-8, trailing data).
var decoderSeeds = []string{
	`{}`, `{"event":null,"repo":null,"discussion":null,"comment":null,"webhook":null,"movedTo":null,"updatedRefs":null,"updatedConfig":null}`,
	`{"\u0065vent":{"act\u0069on":"up\u0064ate","scope":"repo\n\u00e9\ud83d\ude00"},"repo":{"type":"model","name":"a/b"}}`,
	`{"repo":{"tags":["a","b","c","d","e","f","g","h","i",null,"k"]},"updatedRefs":[{"ref":"r1","oldSha":null,"newSha":"n1"},{"ref":"r2"},null,{"ref":"r4","oldSha":"o4"},{"ref":"r5"},{"ref":"r6"}]}`,
	`{"repo":{"tags":[]},"updatedRefs":[]}`, `{"repo":{"tags":[1]}}`, `{"repo":{"tags":{}}}`, `{"updatedRefs":[5]}`,
	`{"updatedRefs":[{"ref":null,"oldSha":5}]}`, `{"updatedRefs":[{"ref":"x","newSha":true}]}`,
	`{"webhook":{"id":"x","version":3}}`, `{"webhook":{"version":-0}}`, `{"webhook":{"version":1e3}}`, `{"webhook":{"version":1.5}}`,
	`{"webhook":{"version":9223372036854775807}}`, `{"webhook":{"version":9223372036854775808}}`, `{"webhook":{"version":-9223372036854775809}}`,
	`{"webhook":{"version":"3"}}`, `{"webhook":{"version":null}}`, `{"discussion":{"num":2,"isPullRequest":true,"changes":{"base":"main","mergeCommitId":"abc"}}}`,
	`{"discussion":{"changes":null,"isPullRequest":null}}`, `{"discussion":{"changes":[]}}`, `{"discussion":"x"}`, `{"comment":{"hidden":"no"}}`,
	`{"comment":{"content":"\"quoted\" \\ back","url":{"web":"w","api":"a","other":[1,{"x":null}]}}}`, `{"movedTo":{"name":"n","owner":{"id":"o"}}}`,
	`{"movedTo":5}`, `{"repo":{"private":1}}`, `{"repo":{"url":"x"}}`, `{"repo":{"owner":{"id":5}}}`, `{"event":[]}`, `{"event":{"action":{}}}`,
	`{"updatedConfig":{"private":true}}`, `{"updatedConfig":[1,2]}`, `{"updatedConfig":"s"}`, `{"unknown":{"deep":[[[{"a":"\u00e9"}]]]}}`,
	`{"Raw":"x","-":1,"Event":{"action":"x"}}`, `{"event":{"action":"x","action":"y"}}`, `{"repo":{},"repo":{}}`,
	"{\"repo\":{\"name\":\"\xff\"}}", `{"a":1} x`, `{"a":1} {}`, `{"a":1}   `, `{"a":}`, `{"a":1,}`, `{"event":{"action":"x"}`,
	`{"webhook":{"version":01}}`, `{"repo":{"name":"\ud800"}}`, `{"repo":{"name":"\u00"}}`, `{"discussion":{"num":1.0}}`,
}

// FuzzDecoderMatchesJSONv2: on any object, what the fast decoder (decode.go) accepts json.Unmarshal
// accepts too, decoded to the same Payload; and Parse, which leaves the rest to json.Unmarshal,
// answers exactly what decoding with json.Unmarshal alone answers: the same payload or error.
func FuzzDecoderMatchesJSONv2(f *testing.F) {
	for _, b := range loadPayloads(f) {
		f.Add(b)
	}
	for _, s := range decoderSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if firstByte(raw) != '{' {
			return // Parse refuses these before decoding
		}
		fast, want := new(Payload), new(Payload)
		fastErr, wantErr := decodePayload(fast, new(payloadParts), raw), jsonv2.Unmarshal(raw, want)
		canonical := fast.canonical
		fast.canonical = false // json.Unmarshal does not know it
		switch {
		case fastErr == nil && wantErr != nil:
			t.Fatalf("the fast decoder accepts %q, which json.Unmarshal refuses: %v", raw, wantErr)
		case fastErr == nil && !reflect.DeepEqual(fast, want):
			t.Fatalf("decoders disagree on %q:\nfast           %+v\njson.Unmarshal %+v", raw, fast, want)
		}
		if canonical { // then json/v2 writes it back unchanged
			if v, err := jsonv2.Marshal(jsontext.Value(raw)); err != nil || !bytes.Equal(v, raw) {
				t.Fatalf("the fast decoder calls %q canonical; json/v2 writes it %q (%v)", raw, v, err)
			}
		}
		if wantErr != nil {
			wantErr = decodeError(raw, wantErr)
		} else if wantErr = want.validate(); wantErr == nil {
			want.Raw = raw
		}
		got, gotErr := Parse(raw)
		if got != nil {
			got.canonical = false
		}
		switch {
		case (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error():
			t.Fatalf("Parse(%q) = %v, json.Unmarshal alone: %v", raw, gotErr, wantErr)
		case gotErr == nil && !reflect.DeepEqual(got, want):
			t.Fatalf("Parse(%q) = %+v, json.Unmarshal alone: %+v", raw, got, want)
		}
	})
}

// TestFastDecoderTakesTheHubsPayloads: every example payload of the hub decodes on the fast path, so
// that deliveries pay json.Unmarshal's price only for bodies no hub sends.
func TestFastDecoderTakesTheHubsPayloads(t *testing.T) {
	for name, raw := range loadPayloads(t) {
		if err := decodePayload(new(Payload), new(payloadParts), raw); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestDecoderSeeds runs the seeds through Parse and checks the answers a sender would read: the
// payload's fields, or the error that json.Unmarshal's reading gives.
func TestDecoderSeeds(t *testing.T) {
	p, err := Parse([]byte(decoderSeeds[2]))
	if err != nil || p.Event.Action != "update" || p.Event.Scope != "repo\né😀" {
		t.Fatalf("escaped names and strings: %+v %v", p, err)
	}
	p, err = Parse([]byte(`{"event":{"action":"update","scope":"repo.content"},"repo":{"type":"model","name":"a/b","tags":["t1","t2","t3","t4","t5"]},` +
		`"updatedRefs":[{"ref":"refs/heads/main","oldSha":null,"newSha":"n1"},{"ref":"refs/heads/b","oldSha":"o2","newSha":null},{"ref":"refs/pr/3"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(p.Repo.Tags, ",") != "t1,t2,t3,t4,t5" || len(p.UpdatedRefs) != 3 || p.UpdatedRefs[2].Ref != "refs/pr/3" ||
		p.UpdatedRefs[0].OldSha != nil || *p.UpdatedRefs[0].NewSha != "n1" || *p.UpdatedRefs[1].OldSha != "o2" || p.UpdatedRefs[1].NewSha != nil {
		t.Fatalf("arrays that grew: tags %q refs %+v", p.Repo.Tags, p.UpdatedRefs)
	}
	for body, want := range map[string]string{
		`{"webhook":{"version":1.5},"event":{"action":"x","scope":"y"},"repo":{"type":"model","name":"a/b"}}`: "payload field webhook.version must be a number",
		`{"repo":{"tags":["a",1]}}`: "payload field repo.tags[1] must be a string",
		`{"a":1} x`:                 "invalid JSON at byte 8: data after the top-level value",
		`{"repo":{},"repo":{}}`:     "invalid JSON at byte 11: duplicate object member name",
	} {
		_, err := Parse([]byte(body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want %q", body, err, want)
		}
		var fe *FieldError
		if strings.HasPrefix(want, "payload field") != errors.As(err, &fe) {
			t.Errorf("Parse(%s): %v is a FieldError: %v", body, err, fe != nil)
		}
	}
}

// TestFastDecoderLeavesBigObjectsToJSONv2: an object of more members than maxFastMembers (whose
// duplicate check would cost the square of their count) goes to json/v2, and still parses.
func TestFastDecoderLeavesBigObjectsToJSONv2(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"event":{"action":"update","scope":"repo"},"repo":{"type":"model","name":"a/b"},"extra":{`)
	for i := range maxFastMembers + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":1`)
	}
	b.WriteString("}}")
	raw := []byte(b.String())
	if err := decodePayload(new(Payload), new(payloadParts), raw); err != errFallback {
		t.Errorf("the fast decoder took an object of %d members: %v", maxFastMembers+1, err)
	}
	if p, err := Parse(raw); err != nil || p.Repo.Name != "a/b" {
		t.Errorf("Parse: %+v %v", p, err)
	}
}

// plainEnd finds the first byte that is not plain ASCII wherever it stands in a word, whatever
// follows it (the zero-byte test's borrows flag bytes above a true one, never below).
func TestPlainEnd(t *testing.T) {
	want := func(b []byte) int {
		for i, c := range b {
			if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				return i
			}
		}
		return len(b)
	}
	// Bytes at and around each class's edges, and the plain bytes a borrow would turn into one.
	edges := []byte{0, 1, 0x1f, 0x20, 0x21, '"', '#', '[', '\\', ']', 0x7e, 0x7f, 0x80, 0x81, 0xa0, 0xff}
	buf := make([]byte, 20)
	for n := range len(buf) + 1 {
		for i := range n {
			for j := i; j < n; j++ {
				for _, x := range edges {
					for _, y := range edges {
						b := buf[:n]
						for k := range b {
							b[k] = 'a'
						}
						b[i], b[j] = x, y
						for from := range n + 1 {
							if got, w := plainEnd(b, from), from+want(b[from:]); got != w {
								t.Fatalf("plainEnd(%q, %d) = %d, want %d", b, from, got, w)
							}
						}
					}
				}
			}
		}
	}
}

// The strings of a payload seen before are not allocated again, even those whose intern slots are
// the two of one pair.
func TestInternKeepsRecentStrings(t *testing.T) {
	var d payloadDecoder
	// Two strings whose slots are the two of one pair.
	var pair [][]byte
	for i := 0; len(pair) < 2; i++ {
		b := []byte(fmt.Sprintf("https://hub.example/models/owner/model-%d", i))
		switch {
		case len(pair) == 0 && internSlot(b)%2 == 0:
			pair = append(pair, b)
		case len(pair) == 1 && internSlot(b) == internSlot(pair[0])+1:
			pair = append(pair, b)
		}
	}
	a, b := d.intern(pair[0]), d.intern(pair[1])
	if got := testing.AllocsPerRun(100, func() {
		if d.intern(pair[0]) != a || d.intern(pair[1]) != b {
			t.Fatal("intern changed a string")
		}
	}); got != 0 {
		t.Errorf("interning two strings of one slot pair again: %v allocations, want 0", got)
	}
	if unsafe.StringData(d.intern(pair[0])) != unsafe.StringData(a) {
		t.Error("a string seen before is a new copy")
	}

	var buf bytes.Buffer
	if err := json.Compact(&buf, loadPayloads(t)["discussion-create-pr.json"]); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	// A decoder of its own: the pool's may be dropped at any time (and under -race, at random).
	var dec payloadDecoder
	x := new(parsed)
	if err := dec.decode(&x.payload, &x.parts, raw); err != nil {
		t.Fatal(err)
	}
	if got := testing.AllocsPerRun(100, func() {
		*x = parsed{}
		if err := dec.decode(&x.payload, &x.parts, raw); err != nil {
			t.Fatal(err)
		}
	}); got != 0 {
		t.Errorf("decoding a payload seen before: %v allocations, want 0", got)
	}
}
