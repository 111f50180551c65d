// Package card reads a repo's card: the YAML front matter of its README.md, as the hub reads it. It
// is apart from core/hub so that a program that only calls the hub does not link a YAML parser.
package card

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// A repo's card is the YAML front matter of its README.md: the hub reads title, tags, sdk and the
// rest from it. The YAML is read by gopkg.in/yaml.v3, so numbers, booleans and nulls resolve as
// that library resolves them (`010` is 8, `08` is the float 8). On top of the library the reader is
// stricter, as a card is data and not a program: anchors, aliases, explicit tags, duplicate keys
// and keys that are not plain text are refused, with the line of the file.

// Error is a problem in a README's front matter, at a line of the file.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ErrNoCard means the README does not start with a `---` line: it has no front matter.
var ErrNoCard = errors.New("no front matter: the file does not start with a --- line")

// Split returns the front matter of a Markdown file (the lines between a first line `---` and
// the next `---` or `...` line) and the line number of its first line.
func Split(readme []byte) (string, int, error) {
	text := strings.TrimPrefix(string(readme), "\ufeff")
	lines := strings.Split(text, "\n")
	if strings.TrimRight(lines[0], " \r") != "---" {
		return "", 0, ErrNoCard
	}
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \r"); l == "---" || l == "..." {
			return strings.Join(lines[1:i], "\n"), 2, nil
		}
	}
	return "", 0, &Error{Line: 1, Msg: "the front matter that starts here is not closed by a --- line"}
}

// yamlErrorLine is how yaml.v3 places a syntax error; without it the error is on the first line.
var yamlErrorLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

// yamlHints explain yaml.v3's terse messages for the mistakes card authors make.
var yamlHints = map[string]string{
	"mapping values are not allowed in this context":        `": " inside a value: quote the value`,
	"found character that cannot start any token":           "a tab or a character such as ` or @ where a value starts: indent with spaces, quote the value",
	"did not find expected key":                             "the indentation does not match the keys above",
	"did not find expected ',' or ']'":                      "a list in [brackets] is not closed",
	"did not find expected ',' or '}'":                      "a mapping in {braces} is not closed",
	"found unexpected end of stream":                        "a quote or bracket is not closed",
	"could not find expected ':'":                           "a key without a ':' after it",
	"did not find expected alphabetic or numeric character": "an anchor (&) or alias (*) without a name",
}

// Parse parses front matter text whose first line is line firstLine of its file, and returns
// its root node (a mapping for any card the hub accepts), or nil for an empty document. Node lines
// are lines of the file.
func Parse(text string, firstLine int) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		line, msg := 1, strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlErrorLine().FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		if hint, ok := yamlHints[msg]; ok {
			msg += " (" + hint + ")"
		}
		return nil, &Error{Line: firstLine - 1 + line, Msg: msg}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if err := checkCardNode(root, firstLine-1, 0); err != nil {
		return nil, err
	}
	return root, nil
}

// checkCardNode refuses what a card must not hold and moves every line by offset.
func checkCardNode(n *yaml.Node, offset, depth int) error {
	n.Line += offset
	switch {
	case n.Kind == yaml.AliasNode:
		return &Error{Line: n.Line, Msg: "aliases (*" + n.Value + ") are not allowed in a card: write the value out"}
	case n.Anchor != "":
		return &Error{Line: n.Line, Msg: "anchors (&" + n.Anchor + ") are not allowed in a card"}
	case n.Style&yaml.TaggedStyle != 0:
		return &Error{Line: n.Line, Msg: "tags (!) such as " + n.Tag + " are not allowed in a card: quote the value instead"}
	case depth > 64:
		return &Error{Line: n.Line, Msg: "values nested more than 64 deep"}
	}
	if n.Kind == yaml.MappingNode {
		first := map[string]int{}
		for i := 0; i < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return &Error{Line: k.Line + offset, Msg: "a key that is a list or a mapping: keys must be text"}
			}
			if k.Tag == "!!merge" {
				return &Error{Line: k.Line + offset, Msg: "merge keys (<<) are not allowed in a card: write the keys out"}
			}
			if at, dup := first[k.Value]; dup {
				return &Error{Line: k.Line + offset, Msg: fmt.Sprintf("duplicate key %q (first at line %d)", k.Value, at)}
			}
			first[k.Value] = k.Line + offset
		}
	}
	for _, c := range n.Content {
		if err := checkCardNode(c, offset, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// Data returns a parsed card as plain Go values, as the hub shows cardData in JSON: a mapping is
// a map[string]any, a list a []any, and a scalar what yaml.v3 reads, with integers as int64. A
// float that JSON cannot hold (.inf, .nan) stays the text that was written.
func Data(n *yaml.Node) any {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = Data(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		for i, c := range n.Content {
			l[i] = Data(c)
		}
		return l
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return n.Value
	}
	switch x := v.(type) {
	case int:
		return int64(x)
	case uint64: // above the int64 range
		return n.Value
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return n.Value
		}
	}
	return v
}
