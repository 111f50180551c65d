package card

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// libraryReading is what yaml.v3 itself reads from text, in Data's shapes (int64 for integers,
// the text for what JSON cannot hold). ok is false where the two cannot be compared: a mapping
// with keys that are not strings.
func libraryReading(text string) (v any, ok bool, err error) {
	var raw any
	if err := yaml.Unmarshal([]byte(text), &raw); err != nil {
		return nil, false, err
	}
	ok = true
	var norm func(v any) any
	norm = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			m := make(map[string]any, len(x))
			for k, e := range x {
				m[k] = norm(e)
			}
			return m
		case []any:
			l := make([]any, len(x))
			for i, e := range x {
				l[i] = norm(e)
			}
			return l
		case int:
			return int64(x)
		case uint64:
			ok = false
		case float64:
			if math.IsInf(x, 0) || math.IsNaN(x) {
				ok = false
			}
		case map[any]any:
			ok = false
		}
		return v
	}
	return norm(raw), ok, nil
}

// TestCardReadsAsTheLibrary: numbers, booleans and nulls read as yaml.v3 reads them, including the
// numbers the hand-written reader got wrong (08 was the string "08", 010 was 8 as an int).
func TestCardReadsAsTheLibrary(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     map[string]any
	}{
		{"leading zeros", "a: 08\nb: 010\nc: 0o10\nd: 0x1F\ne: 007", map[string]any{"a": 8.0, "b": int64(8), "c": int64(8), "d": int64(31), "e": int64(7)}},
		{"types", "a: ~\nb:\nc: 12\nd: -1.5e3\nf: True\nh: '12'\ni: 1.2.3\nj: null",
			map[string]any{"a": nil, "b": nil, "c": int64(12), "d": -1500.0, "f": true, "h": "12", "i": "1.2.3", "j": nil}},
		{"space card", "title: My App\nemoji: 🤖\npinned: false\ntags:\n  - robot\n  - robot_python_app",
			map[string]any{"title": "My App", "emoji": "🤖", "pinned": false, "tags": []any{"robot", "robot_python_app"}}},
		{"quotes and comments", "# a card\na: 'it''s # not a comment'\nb: \"tab\\there \\u00e9\"\nc: Don't panic # comment\nd: http://example.com/x#frag",
			map[string]any{"a": "it's # not a comment", "b": "tab\there é", "c": "Don't panic", "d": "http://example.com/x#frag"}},
		{"block scalars", "lit: |\n  line one\n    indented\nfold: >-\n  folded\n  text\n",
			map[string]any{"lit": "line one\n  indented\n", "fold": "folded text"}},
		{"flow, across lines", "m: {a: 1, b: [c, d]}\ntags: [robot,\n  robot_python_app]",
			map[string]any{"m": map[string]any{"a": int64(1), "b": []any{"c", "d"}}, "tags": []any{"robot", "robot_python_app"}}},
		{"not finite", "a: .inf\nb: .nan", map[string]any{"a": ".inf", "b": ".nan"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Parse(tt.in, 2)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got := Data(n)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %#v\nwant %#v", got, tt.want)
			}
			if lib, ok, err := libraryReading(tt.in); err != nil || ok && !reflect.DeepEqual(got, lib) {
				t.Fatalf("yaml.v3 reads %#v (%v), the card reader %#v", lib, err, got)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Fatalf("card data does not encode as JSON: %v", err)
			}
		})
	}
}

func TestCardLines(t *testing.T) {
	n, err := Parse("title: x\n\ntags:\n  - robot\n", 2)
	if err != nil {
		t.Fatal(err)
	}
	// The mapping's values: Content[1] is title's, Content[3] tags'.
	if n.Line != 2 || n.Content[1].Line != 2 || n.Content[3].Line != 5 || n.Content[3].Content[0].Line != 5 {
		t.Fatalf("lines: mapping %d title %d tags %d", n.Line, n.Content[1].Line, n.Content[3].Line)
	}
	if n, err := Parse("\n# only a comment\n", 2); n != nil || err != nil {
		t.Fatalf("empty card: %v %v", n, err)
	}
}

func TestCardInvalid(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		line     int
		msg      string
	}{
		{"colon in plain value", "title: a: b", 2, `": " inside a value: quote the value`},
		{"duplicate key", "a: 1\nb: 2\na: 3", 4, `duplicate key "a" (first at line 2)`},
		{"tab indentation", "a:\n\t- x", 3, "indent with spaces"},
		{"bad indentation", "a: 1\n  b: 2", 3, "mapping values are not allowed"},
		{"unclosed flow", "title: [a\nb: c", 2, "did not find expected ',' or ']'"},
		{"anchor", "a: &x 1", 2, "anchors (&x)"},
		{"alias", "a: &x 1\nb: *x", 2, "anchors"},
		{"alias alone", "a: 1\nb: [*x]", 0, "unknown anchor"}, // yaml.v3 gives no line for this one
		{"tag", "a: 1\nb: !!str 1", 3, "tags (!)"},
		{"merge key", "a: 1\n<<: {b: 2}", 3, "merge keys"},
		{"list as key", "? [a]\n: b", 2, "keys must be text"},
		{"not utf8", "a: \xff", 2, "UTF-8"},
		{"bad escape", `a: "\q"`, 2, "unknown escape"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.in, 2)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Parse(%q) = %v, want a *Error", tt.in, err)
			}
			if tt.line != 0 && ce.Line != tt.line || !strings.Contains(ce.Msg, tt.msg) {
				t.Fatalf("Parse(%q) = %v, want line %d with %q", tt.in, err, tt.line, tt.msg)
			}
		})
	}
}

func TestSplitCard(t *testing.T) {
	text, first, err := Split([]byte("\ufeff---\r\ntitle: x\r\n---\r\n# Body\n---\n"))
	if err != nil || first != 2 || strings.TrimSpace(text) != "title: x" {
		t.Fatalf("Split = %q, %d, %v", text, first, err)
	}
	if _, _, err := Split([]byte("# No front matter\n")); !errors.Is(err, ErrNoCard) {
		t.Fatalf("no front matter: %v", err)
	}
	var ce *Error
	if _, _, err := Split([]byte("---\ntitle: x\n")); !errors.As(err, &ce) || ce.Line != 1 {
		t.Fatalf("unclosed: %v", err)
	}
	if text, _, err := Split([]byte("---\n---\n")); err != nil || text != "" {
		t.Fatalf("empty: %q %v", text, err)
	}
}

// Every README in testdata/readmes reads (or fails) as its name says: ok-*.md read, bad-*.md fail.
func TestCardReadmes(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "readmes", "*.md"))
	if len(files) == 0 {
		t.Fatal("no testdata READMEs")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text, first, err := Split(data)
		if err == nil {
			_, err = Parse(text, first)
		}
		if ok := strings.HasPrefix(filepath.Base(f), "ok-"); ok != (err == nil) {
			t.Errorf("%s: err = %v", f, err)
		}
	}
}

// FuzzParseCard: no input panics; errors carry a line inside the text; whatever the card reader
// accepts, yaml.v3 reads the same way; and the card data always encodes as JSON.
var yamlLineBreak = regexp.MustCompile("\r\n|\r|\n")

func FuzzParseCard(f *testing.F) {
	for _, s := range []string{
		"title: x\ntags:\n  - robot\n  - robot_python_app\n", "a: [1, {b: c}]\n", "a: |\n  x\n", "- - a\n-\n  - b",
		"a: 'x''y'\nb: \"\\u00e9\"", "k: >-\n  a\n\n  b\n", "a:\n- b\n- c: d\n  e: f", "a: 08\nb: 010\nc: 0x_1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		n, err := Parse(in, 1)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error of the wrong type: %v", err)
			}
			// Lines end at \r\n, \n or a lone \r, as YAML 1.2 (5.4) and editors count them.
			if lines := len(yamlLineBreak.FindAllStringIndex(in, -1)) + 1; ce.Line < 1 || ce.Line > lines+1 {
				t.Fatalf("error at line %d of a %d-line text: %v", ce.Line, lines, err)
			}
			return
		}
		got := Data(n)
		if _, err := json.Marshal(got); err != nil {
			t.Fatalf("card data of %q does not encode as JSON: %v", in, err)
		}
		lib, ok, err := libraryReading(in)
		if err != nil {
			t.Fatalf("the card reader accepted %q, yaml.v3 refuses it: %v", in, err)
		}
		if ok && !reflect.DeepEqual(got, lib) {
			t.Fatalf("%q: the card reader read %#v, yaml.v3 %#v", in, got, lib)
		}
	})
}
