package actions

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/robothub/robothub/core/webhook"
)

// referenceLine is the log line as json/v2 encodes it from a struct: what the log action wrote
// before its line was appended by hand (log.go).
func referenceLine(t testing.TB, now time.Time, route string, p *webhook.Payload) []byte {
	var line bytes.Buffer
	err := jsonv2.MarshalWrite(&line, struct {
		Time    time.Time      `json:"time"`
		Route   string         `json:"route"`
		Event   webhook.Event  `json:"event"`
		Repo    string         `json:"repo"`
		Payload jsontext.Value `json:"payload"`
	}{now.UTC(), route, p.Event, p.Repo.Type + ":" + p.Repo.Name, jsontext.Value(p.Raw)})
	if err != nil {
		t.Fatal(err)
	}
	return append(line.Bytes(), '\n')
}

// lineSeeds are the hub's example payloads as it sends them (compact) and pretty-printed, and
// payloads with strings that need quoting: escapes, backslashes before quotes, HTML, U+2028.
func lineSeeds(t testing.TB) [][]byte {
	files, err := filepath.Glob("../../core/webhook/testdata/payloads/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no payloads: %v", err)
	}
	var seeds [][]byte
	for _, f := range files {
		pretty, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		compact := jsontext.Value(bytes.Clone(pretty))
		if err := compact.Compact(); err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, pretty, compact)
	}
	for _, s := range []string{
		"{\"event\":{\"action\":\"a\\\"\\\\\",\"scope\":\"<s>&\\u2028\u2029\"},\r\n\t\"repo\" : {\"type\":\"model\",\"name\":\"a/\\\\\\\"b\"},\"x\":[ 1 , -2.5e3 , true , null , \" \\\\\" ] }",
		`{"event":{"action":"update","scope":"repo"},"repo":{"type":"model","name":"a/b"},"comment":{"content":"line\nbreak \\ \"quoted\" é 😀"}}`,
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// TestLogLineMatchesJSONv2: on the hub's payloads the hand-appended line is json/v2's, byte for byte.
func TestLogLineMatchesJSONv2(t *testing.T) {
	now := time.Date(2026, 11, 26, 8, 0, 0, 123456000, time.FixedZone("CET", 3600))
	for _, raw := range lineSeeds(t) {
		p, err := webhook.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		for _, route := range []string{"hello", "say-hello"} {
			if got, want := mustLine(t, now, route, p), referenceLine(t, now, route, p); !bytes.Equal(got, want) {
				t.Errorf("line differs from json/v2's:\ngot  %s\nwant %s", got, want)
			}
		}
	}
}

// FuzzLogLineMatchesJSONv2: on any payload the receiver accepts, at any time, the line is json/v2's.
func FuzzLogLineMatchesJSONv2(f *testing.F) {
	for _, s := range lineSeeds(f) {
		f.Add(s, int64(1764144000123456789), "hello")
	}
	f.Fuzz(func(t *testing.T, raw []byte, nanos int64, route string) {
		p, err := webhook.Parse(raw)
		if err != nil || !utf8.ValidString(route) { // route names are ASCII (webhook.Server.Add)
			return
		}
		now := time.Unix(0, nanos)
		if got, want := mustLine(t, now, route, p), referenceLine(t, now, route, p); !bytes.Equal(got, want) {
			t.Fatalf("line differs from json/v2's:\ngot  %s\nwant %s", got, want)
		}
	})
}

func mustLine(t testing.TB, now time.Time, route string, p *webhook.Payload) []byte {
	line, err := appendLogLine(nil, now, route, p)
	if err != nil {
		t.Fatal(err)
	}
	return line
}
