package frontmatter

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// canonical renders a node as JSON: scalars as {"type": value}, mappings as lists of [key, value]
// pairs (order matters), sequences as lists.
func canonical(n *Node) any {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case Mapping:
		pairs := []any{}
		for i := range n.Keys {
			pairs = append(pairs, []any{n.Keys[i].Value, canonical(n.Vals[i])})
		}
		return map[string]any{"map": pairs}
	case Sequence:
		items := []any{}
		for _, it := range n.Items {
			items = append(items, canonical(it))
		}
		return items
	}
	return map[string]string{n.Type: n.Value}
}

func render(n *Node) string {
	b, _ := json.Marshal(canonical(n))
	return string(b)
}

func TestParseValid(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"space card", `title: My App
emoji: 🤖
colorFrom: blue
sdk: static
pinned: false
short_description: Waves its antennas
tags:
  - robot
  - robot_python_app`,
			`{"map":[["title",{"string":"My App"}],["emoji",{"string":"🤖"}],["colorFrom",{"string":"blue"}],["sdk",{"string":"static"}],["pinned",{"bool":"false"}],["short_description",{"string":"Waves its antennas"}],["tags",[{"string":"robot"},{"string":"robot_python_app"}]]]}`},
		{"compact sequence and flow list", "tags:\n- a\n- b\nmore: [x, 'y z', \"w\\n\"]",
			`{"map":[["tags",[{"string":"a"},{"string":"b"}]],["more",[{"string":"x"},{"string":"y z"},{"string":"w\n"}]]]}`},
		{"comments and blank lines", "# a card\n\ntitle: A # trailing\n  # indented comment\ntags: [robot] # after\n",
			`{"map":[["title",{"string":"A"}],["tags",[{"string":"robot"}]]]}`},
		{"types", "a: ~\nb:\nc: 12\nd: -1.5e3\ne: 0x1F\nf: True\ng: .inf\nh: '12'\ni: 1.2.3\nj: null",
			`{"map":[["a",{"null":""}],["b",{"null":""}],["c",{"int":"12"}],["d",{"float":"-1.5e3"}],["e",{"int":"0x1F"}],["f",{"bool":"true"}],["g",{"float":"+Inf"}],["h",{"string":"12"}],["i",{"string":"1.2.3"}],["j",{"null":""}]]}`},
		{"nested mappings and sequences of mappings", "models:\n  - name: a\n    tags: [x]\n  - name: b\nconfig:\n  inner:\n    deep: 1\n",
			`{"map":[["models",[{"map":[["name",{"string":"a"}],["tags",[{"string":"x"}]]]},{"map":[["name",{"string":"b"}]]}]],["config",{"map":[["inner",{"map":[["deep",{"int":"1"}]]}]]}]]}`},
		{"quotes", `a: 'it''s # not a comment'
b: "tab\there \u00e9 \x41"
"quoted key": v
c: Don't panic # comment
d: http://example.com/x#frag
e: Say "hi"`,
			`{"map":[["a",{"string":"it's # not a comment"}],["b",{"string":"tab\there é A"}],["quoted key",{"string":"v"}],["c",{"string":"Don't panic"}],["d",{"string":"http://example.com/x#frag"}],["e",{"string":"Say \"hi\""}]]}`},
		{"block scalars", "lit: |\n  line one\n    indented\n\n  three\nfold: >-\n  folded\n  text\n\n  para\nkeep: |+\n  x\n\nend: 1",
			`{"map":[["lit",{"string":"line one\n  indented\n\nthree\n"}],["fold",{"string":"folded text\npara"}],["keep",{"string":"x\n\n"}],["end",{"int":"1"}]]}`},
		{"flow mapping", "m: {a: 1, b: [c, d], 'e': {}}\nempty: []",
			`{"map":[["m",{"map":[["a",{"int":"1"}],["b",[{"string":"c"},{"string":"d"}]],["e",{"map":[]}]]}],["empty",[]]]}`},
		{"nested sequences", "- - a\n  - b\n-\n  - c\n- d",
			`[[{"string":"a"},{"string":"b"}],[{"string":"c"}],{"string":"d"}]`},
		{"empty", "\n# only a comment\n", `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Parse(tt.in, 2)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := render(n); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestParseLines(t *testing.T) {
	n, err := Parse("title: x\n\ntags:\n  - robot\n", 2)
	if err != nil {
		t.Fatal(err)
	}
	if n.Line != 2 || n.Get("title").Line != 2 || n.Get("tags").Line != 5 || n.Get("tags").Items[0].Line != 5 {
		t.Fatalf("lines: mapping %d title %d tags %d", n.Line, n.Get("title").Line, n.Get("tags").Line)
	}
	if n.Get("missing") != nil || n.Get("title").Get("x") != nil {
		t.Fatal("Get of a missing key or on a scalar is not nil")
	}
}

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
		msg      string
	}{
		{"colon in plain value", "title: a: b", 2, "`: ` inside the value"},
		{"duplicate key", "a: 1\nb: 2\na: 3", 4, `duplicate key "a" (first at line 2)`},
		{"tab indentation", "a:\n\t- x", 3, "tab at the start of the line"},
		{"bad indentation", "a: 1\n  b: 2", 3, "unexpected indentation"},
		{"dedent into nothing", "a:\n    b: 1\n  c: 2", 4, "unexpected indentation"},
		{"unclosed flow", "tags: [robot,\n  robot_python_app]", 2, "not closed on this line"},
		{"unclosed quote", "title: \"abc", 2, "not closed on this line"},
		{"anchor", "a: &x 1", 2, "anchors"},
		{"alias", "a: *x", 2, "aliases"},
		{"tag", "a: !!str 1", 2, "tags (!)"},
		{"directive", "%YAML 1.2", 2, "directives"},
		{"document marker", "a: 1\n---\nb: 2", 3, "document marker"},
		{"complex key", "? a\n: b", 2, "complex keys"},
		{"list where key expected", "a: 1\n- b", 3, "a list item where a key"},
		{"junk after quote", "a: \"x\" y", 2, "after the quoted string"},
		{"junk after bracket", "a: [x] y", 2, "after the closing bracket"},
		{"bad escape", `a: "\q"`, 2, `unknown escape \q`},
		{"short escape", `a: "\u12"`, 2, "needs 4 hex digits"},
		{"surrogate escape", `a: "\ud800"`, 2, "not a valid character"},
		{"multi-line plain", "a: one\n  two", 3, "continue on the next line"},
		{"flow missing comma", "a: [x y: z]", 2, "expected ','"},
		{"flow key without colon", "a: {x, y}", 2, "expected ':'"},
		{"backtick", "a: `x`", 2, "cannot start with"},
		{"block scalar header", "a: |x\n  y", 2, "block scalar header"},
		{"block scalar less indented", "a: |\n    one\n  two", 4, "indented less"},
		{"not utf8", "a: \xff", 2, "UTF-8"},
		{"indented start", "  a: 1", 2, "column 1"},
		{"comment in brackets", "a: [x # c]", 2, "comment inside brackets"},
		{"empty key", ": x", 2, "without a key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.in, 2)
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("Parse(%q) = %v, want a *frontmatter.Error", tt.in, err)
			}
			if fe.Line != tt.line || !strings.Contains(fe.Msg, tt.msg) {
				t.Fatalf("Parse(%q) = %v, want line %d with %q", tt.in, err, tt.line, tt.msg)
			}
		})
	}
}

func TestExtract(t *testing.T) {
	text, first, err := Extract([]byte("\ufeff---\r\ntitle: x\r\n---\r\n# Body\n---\n"))
	if err != nil || first != 2 || strings.TrimSpace(text) != "title: x" {
		t.Fatalf("Extract = %q, %d, %v", text, first, err)
	}
	if _, _, err := Extract([]byte("# No front matter\n")); !errors.Is(err, ErrNoFrontMatter) {
		t.Fatalf("no front matter: %v", err)
	}
	var fe *Error
	if _, _, err := Extract([]byte("---\ntitle: x\n")); !errors.As(err, &fe) || fe.Line != 1 {
		t.Fatalf("unclosed: %v", err)
	}
	if text, _, err := Extract([]byte("---\n---\n")); err != nil || text != "" {
		t.Fatalf("empty: %q %v", text, err)
	}
}

// Every README in testdata/readmes parses (or fails) as its name says: ok-*.md parse, bad-*.md fail.
func TestReadmes(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "readmes", "*.md"))
	if len(files) == 0 {
		t.Fatal("no testdata READMEs")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text, first, err := Extract(data)
		if err == nil {
			_, err = Parse(text, first)
		}
		ok := strings.HasPrefix(filepath.Base(f), "ok-")
		if ok != (err == nil) {
			t.Errorf("%s: err = %v", f, err)
		}
	}
}

// FuzzParse: no input panics, errors carry a line inside the text, and what parses survives a
// round trip through its flow (JSON) form.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"title: x\ntags:\n  - robot\n  - robot_python_app\n", "a: [1, {b: c}]\n", "a: |\n  x\n", "- - a\n-\n  - b",
		"a: 'x''y'\nb: \"\\u00e9\"", "k: >-\n  a\n\n  b\n", "a:\n- b\n- c: d\n  e: f",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		n, err := Parse(in, 1)
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("error of the wrong type: %v", err)
			}
			if lines := strings.Count(in, "\n") + 1; fe.Line < 1 || fe.Line > lines {
				t.Fatalf("error at line %d of a %d-line text: %v", fe.Line, lines, err)
			}
			return
		}
		if n == nil {
			return
		}
		flowText := toFlow(n)
		again, err := Parse("v: "+flowText, 1)
		if err != nil {
			if strings.Contains(err.Error(), "nested more than") {
				return
			}
			t.Fatalf("the flow form of %q does not parse: %v\n%s", in, err, flowText)
		}
		if a, b := textOnly(n), textOnly(again.Get("v")); a != b {
			t.Fatalf("round trip of %q changed it:\n%s\n%s", in, a, b)
		}
	})
}

// toFlow writes a node on one line: scalars double-quoted (JSON escapes are YAML escapes).
func toFlow(n *Node) string {
	switch n.Kind {
	case Mapping:
		var parts []string
		for i := range n.Keys {
			parts = append(parts, toFlow(n.Keys[i])+": "+toFlow(n.Vals[i]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case Sequence:
		var parts []string
		for _, it := range n.Items {
			parts = append(parts, toFlow(it))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	b, _ := json.Marshal(n.Value)
	return string(b)
}

// textOnly is canonical without scalar types (quoting makes every scalar a string).
func textOnly(n *Node) string {
	var walk func(n *Node) any
	walk = func(n *Node) any {
		switch n.Kind {
		case Mapping:
			pairs := []any{}
			for i := range n.Keys {
				pairs = append(pairs, []any{n.Keys[i].Value, walk(n.Vals[i])})
			}
			return map[string]any{"map": pairs}
		case Sequence:
			items := []any{}
			for _, it := range n.Items {
				items = append(items, walk(it))
			}
			return items
		}
		return n.Value
	}
	b, _ := json.Marshal(walk(n))
	return string(b)
}
