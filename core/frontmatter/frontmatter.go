// Package frontmatter reads the YAML front matter of a README.md (the card of a hub space) with a
// strict parser for the subset of YAML that cards use, and reports problems with line numbers.
//
// The subset:
//   - block mappings (`key: value`) and block sequences (`- item`), nested by indentation with
//     spaces; a sequence may sit at its key's indentation (`tags:` then `- robot`); a sequence
//     item may be a mapping (`- name: x` with more keys below it);
//   - flow sequences and mappings on one line: `[a, "b", {c: d}]`, `{a: 1}`;
//   - scalars: plain, 'single-quoted' (” is a quote), "double-quoted" (with YAML's escapes), and
//     block scalars `|` and `>` with the chomping indicators `-` and `+`;
//   - comments (`#` at the start or after a space), blank lines;
//   - plain scalars are resolved with YAML 1.2's core schema: null (~, null, empty), bool
//     (true, false), int (decimal, 0o, 0x), float (1.5, 1e3, .inf, .nan); anything else is a string.
//
// Refused, with the line and a reason: tabs in indentation, duplicate keys, anchors (&),
// aliases (*), tags (!), directives (%), complex keys (?), documents markers inside the front
// matter, plain or quoted scalars and flow collections that span lines, `: ` inside a plain
// value, and indentation that does not match any open block.
package frontmatter

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kind is what a node is.
type Kind int

// Node kinds.
const (
	Scalar Kind = iota
	Mapping
	Sequence
)

func (k Kind) String() string {
	switch k {
	case Mapping:
		return "mapping"
	case Sequence:
		return "list"
	}
	return "scalar"
}

// Scalar types after resolution.
const (
	TypeNull   = "null"
	TypeBool   = "bool"
	TypeInt    = "int"
	TypeFloat  = "float"
	TypeString = "string"
)

// Node is one value of the document, with the line it starts on (1-based, in the whole file).
type Node struct {
	Kind  Kind
	Line  int
	Type  string  // for a scalar: null, bool, int, float or string (quoted scalars are strings)
	Value string  // for a scalar: its text, unquoted and unescaped
	Keys  []*Node // for a mapping: the keys (scalars), in order
	Vals  []*Node // for a mapping: the values, in the order of Keys
	Items []*Node // for a sequence
}

// Get returns the value of key in a mapping, or nil.
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != Mapping {
		return nil
	}
	for i, k := range n.Keys {
		if k.Value == key {
			return n.Vals[i]
		}
	}
	return nil
}

// Error is a problem in the front matter, at a line of the file.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ErrNoFrontMatter means the file does not start with a `---` line.
var ErrNoFrontMatter = errors.New("no front matter: the file does not start with a --- line")

// maxDepth bounds nesting, so that hostile input cannot exhaust the stack.
const maxDepth = 64

// Extract returns the front matter of a Markdown file (the lines between a first line `---` and
// the next `---` or `...` line) and the line number of its first line.
func Extract(doc []byte) (string, int, error) {
	text := strings.TrimPrefix(string(doc), "\ufeff")
	lines := strings.Split(text, "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], " \r") != "---" {
		return "", 0, ErrNoFrontMatter
	}
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \r"); l == "---" || l == "..." {
			return strings.Join(lines[1:i], "\n"), 2, nil
		}
	}
	return "", 0, &Error{Line: 1, Msg: "the front matter that starts here is not closed by a --- line"}
}

// Parse parses YAML text whose first line is line firstLine of its file. An empty document is nil.
func Parse(text string, firstLine int) (*Node, error) {
	if !utf8.ValidString(text) {
		return nil, &Error{Line: firstLine, Msg: "not valid UTF-8"}
	}
	p := &parser{}
	for i, raw := range strings.Split(text, "\n") {
		raw = strings.TrimSuffix(raw, "\r")
		num := firstLine + i
		body := strings.TrimLeft(raw, " ")
		indent := len(raw) - len(body)
		if strings.HasPrefix(body, "\t") && strings.TrimSpace(body) != "" {
			return nil, &Error{Line: num, Msg: "tab at the start of the line: YAML indents with spaces only"}
		}
		p.lines = append(p.lines, line{num: num, indent: indent, text: strings.TrimRight(body, " \t"), raw: raw})
	}
	p.skipBlank()
	if p.eof() {
		return nil, nil
	}
	first := p.cur()
	if first.indent != 0 {
		return nil, &Error{Line: first.num, Msg: "the document must start at column 1"}
	}
	n, err := p.block(0, 0)
	if err != nil {
		return nil, err
	}
	p.skipBlank()
	if !p.eof() {
		return nil, &Error{Line: p.cur().num, Msg: "unexpected indentation: this line does not belong to any block above it"}
	}
	return n, nil
}

type line struct {
	num    int
	indent int
	text   string // without the indentation and trailing spaces
	raw    string
}

type parser struct {
	lines []line
	pos   int
}

func (p *parser) eof() bool  { return p.pos >= len(p.lines) }
func (p *parser) cur() *line { return &p.lines[p.pos] }

// blank reports whether a line holds nothing but a comment or spaces.
func blank(l *line) bool { return l.text == "" || strings.HasPrefix(l.text, "#") }

func (p *parser) skipBlank() {
	for !p.eof() && blank(p.cur()) {
		p.pos++
	}
}

func errf(num int, format string, args ...any) error {
	return &Error{Line: num, Msg: fmt.Sprintf(format, args...)}
}

// isSeqItem reports whether text starts a block sequence item.
func isSeqItem(text string) bool { return text == "-" || strings.HasPrefix(text, "- ") }

// block parses the mapping or sequence whose lines are indented by indent.
func (p *parser) block(indent, depth int) (*Node, error) {
	if depth > maxDepth {
		return nil, errf(p.cur().num, "nested more than %d levels deep", maxDepth)
	}
	l := p.cur()
	if err := checkLineStart(l); err != nil {
		return nil, err
	}
	if isSeqItem(l.text) {
		return p.sequence(indent, depth)
	}
	if _, _, ok, err := splitKey(l.text, l.num); err != nil {
		return nil, err
	} else if !ok {
		// A lone scalar (or flow collection) as a whole block.
		n, err := inlineValue(l.text, l.num, depth)
		if err != nil {
			return nil, err
		}
		p.pos++
		return n, p.noMoreIndented(indent)
	}
	return p.mapping(indent, depth)
}

// checkLineStart refuses the constructs of YAML outside the subset.
func checkLineStart(l *line) error {
	switch {
	case l.text == "---" || l.text == "..." || strings.HasPrefix(l.text, "--- "):
		return errf(l.num, "a document marker inside the front matter: only one document is allowed")
	case strings.HasPrefix(l.text, "%"):
		return errf(l.num, "directives (%%) are not supported")
	case l.text == "?" || strings.HasPrefix(l.text, "? "):
		return errf(l.num, "complex keys (?) are not supported")
	}
	return nil
}

// noMoreIndented fails when the next content line is indented deeper than indent: a value that
// continues on more lines, which the subset does not support.
func (p *parser) noMoreIndented(indent int) error {
	p.skipBlank()
	if !p.eof() && p.cur().indent > indent {
		return errf(p.cur().num, "unexpected indentation: values that continue on the next line are not supported (use a block scalar | or >, or put it on one line)")
	}
	return nil
}

func (p *parser) mapping(indent, depth int) (*Node, error) {
	m := &Node{Kind: Mapping, Line: p.cur().num}
	seen := map[string]int{}
	for {
		p.skipBlank()
		if p.eof() {
			return m, nil
		}
		l := p.cur()
		if l.indent < indent {
			return m, nil
		}
		if l.indent > indent {
			return nil, errf(l.num, "unexpected indentation (%d spaces where the mapping above uses %d)", l.indent, indent)
		}
		if err := checkLineStart(l); err != nil {
			return nil, err
		}
		if isSeqItem(l.text) {
			return nil, errf(l.num, "a list item where a key of the mapping started at line %d was expected", m.Line)
		}
		key, rest, ok, err := splitKey(l.text, l.num)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errf(l.num, "expected `key: value`, got %q", clip(l.text))
		}
		if prev, dup := seen[key.Value]; dup {
			return nil, errf(l.num, "duplicate key %q (first at line %d)", key.Value, prev)
		}
		seen[key.Value] = l.num
		p.pos++
		val, err := p.value(rest, l.num, indent, depth, true)
		if err != nil {
			return nil, err
		}
		m.Keys = append(m.Keys, key)
		m.Vals = append(m.Vals, val)
	}
}

// value parses what follows `key:` or `- ` on line num (rest), plus any block below it. indent is
// the indentation of the line that holds it; compactSeq allows a sequence at that same indentation.
func (p *parser) value(rest string, num, indent, depth int, compactSeq bool) (*Node, error) {
	rest = strings.TrimLeft(rest, " ")
	if strings.HasPrefix(rest, "#") {
		rest = ""
	}
	if strings.HasPrefix(rest, "|") || strings.HasPrefix(rest, ">") {
		return p.blockScalar(cutComment(rest), num, indent)
	}
	if rest != "" {
		n, err := inlineValue(rest, num, depth)
		if err != nil {
			return nil, err
		}
		return n, p.noMoreIndented(indent)
	}
	p.skipBlank()
	if !p.eof() {
		next := p.cur()
		if next.indent > indent {
			return p.block(next.indent, depth+1)
		}
		if compactSeq && next.indent == indent && isSeqItem(next.text) {
			return p.sequence(indent, depth+1)
		}
	}
	return &Node{Kind: Scalar, Line: num, Type: TypeNull}, nil
}

func (p *parser) sequence(indent, depth int) (*Node, error) {
	s := &Node{Kind: Sequence, Line: p.cur().num}
	for {
		p.skipBlank()
		if p.eof() {
			return s, nil
		}
		l := p.cur()
		if l.indent != indent || !isSeqItem(l.text) {
			if l.indent > indent {
				return nil, errf(l.num, "unexpected indentation (%d spaces where the list above uses %d)", l.indent, indent)
			}
			return s, nil
		}
		item := strings.TrimPrefix(l.text, "-")
		trimmed := strings.TrimLeft(item, " ")
		itemIndent := indent + 1 + len(item) - len(trimmed)
		var n *Node
		var err error
		switch _, _, isKey, kerr := splitKey(trimmed, l.num); {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
			p.pos++
			n, err = p.value("", l.num, indent, depth, false)
		case kerr != nil:
			return nil, kerr
		case isSeqItem(trimmed) || isKey:
			// `- key: v` or `- - x`: the item is a block that starts in this line, at itemIndent.
			*l = line{num: l.num, indent: itemIndent, text: trimmed, raw: l.raw}
			n, err = p.block(itemIndent, depth+1)
		default:
			p.pos++
			n, err = p.value(trimmed, l.num, indent, depth, false)
		}
		if err != nil {
			return nil, err
		}
		s.Items = append(s.Items, n)
	}
}

var blockHeader = regexp.MustCompile(`^([|>])([-+]?)([1-9]?)([-+]?)$`)

// blockScalar parses a literal (|) or folded (>) scalar whose lines are indented deeper than indent.
func (p *parser) blockScalar(header string, num, indent int) (*Node, error) {
	m := blockHeader.FindStringSubmatch(header)
	if m == nil || (m[2] != "" && m[4] != "") {
		return nil, errf(num, "block scalar header %q: expected | or > with an optional - or + and indentation digit", header)
	}
	style, chomp := m[1], m[2]+m[4]
	var lines []string
	contentIndent := -1
	if m[3] != "" {
		contentIndent = indent + int(m[3][0]-'0')
	}
	for !p.eof() {
		l := p.cur()
		if strings.TrimSpace(l.raw) == "" {
			lines = append(lines, "")
			p.pos++
			continue
		}
		if contentIndent < 0 {
			if l.indent <= indent {
				break
			}
			contentIndent = l.indent
		}
		if l.indent < contentIndent {
			if l.indent > indent {
				return nil, errf(l.num, "block scalar line indented less than its first line (%d spaces, want %d)", l.indent, contentIndent)
			}
			break
		}
		lines = append(lines, strings.TrimRight(l.raw[contentIndent:], "\r"))
		p.pos++
	}
	// Trailing blank lines belong to the chomping, not to the content.
	trailing := 0
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
		trailing++
	}
	var text string
	if style == "|" {
		text = strings.Join(lines, "\n")
	} else {
		var b strings.Builder
		for i, l := range lines {
			if i > 0 {
				prev := lines[i-1]
				switch {
				case l == "" || prev == "":
					if prev != "" || l == "" {
						b.WriteString("\n")
					}
				case strings.HasPrefix(l, " ") || strings.HasPrefix(prev, " "):
					b.WriteString("\n")
				default:
					b.WriteString(" ")
				}
			}
			b.WriteString(l)
		}
		text = b.String()
	}
	if len(lines) > 0 {
		switch chomp {
		case "-":
		case "+":
			text += "\n" + strings.Repeat("\n", trailing)
		default:
			text += "\n"
		}
	}
	return &Node{Kind: Scalar, Line: num, Type: TypeString, Value: text}, nil
}

// cutComment removes a trailing comment (`#` at the start or after a space or tab) from plain
// text and trims the spaces before it. Quoted strings and brackets handle their own comments.
func cutComment(s string) string {
	if strings.HasPrefix(s, "#") {
		return ""
	}
	for i := 1; i < len(s); i++ {
		if s[i] == '#' && (s[i-1] == ' ' || s[i-1] == '\t') {
			return strings.TrimRight(s[:i], " \t")
		}
	}
	return strings.TrimRight(s, " \t")
}

// onlyComment reports whether what follows a value on its line is nothing or a comment.
func onlyComment(rest string) bool {
	t := strings.TrimLeft(rest, " \t")
	return t == "" || (strings.HasPrefix(t, "#") && len(t) < len(rest))
}

// splitKey splits `key: rest` (a plain or quoted key). ok is false when the text is not a
// mapping entry; err reports a quoted key that is broken or a key of an unsupported kind.
func splitKey(text string, num int) (key *Node, rest string, ok bool, err error) {
	if text == "" {
		return nil, "", false, nil
	}
	if text[0] == '"' || text[0] == '\'' {
		val, n, qerr := quoted(text, 0, num)
		if qerr != nil {
			return nil, "", false, qerr
		}
		after := strings.TrimLeft(text[n:], " ")
		if after == ":" || strings.HasPrefix(after, ": ") {
			return &Node{Kind: Scalar, Line: num, Type: TypeString, Value: val}, strings.TrimPrefix(after, ":"), true, nil
		}
		return nil, "", false, nil
	}
	if strings.ContainsRune("[{", rune(text[0])) {
		return nil, "", false, nil
	}
	for i := 0; i < len(text); i++ {
		if text[i] == '#' && i > 0 && text[i-1] == ' ' {
			return nil, "", false, nil
		}
		if text[i] == ':' && (i+1 == len(text) || text[i+1] == ' ') {
			k := strings.TrimRight(text[:i], " ")
			if k == "" {
				return nil, "", false, errf(num, "a mapping entry without a key")
			}
			kn, kerr := plainScalar(k, num, false)
			if kerr != nil {
				return nil, "", false, kerr
			}
			kn.Type = TypeString // keys are compared as text
			return kn, text[i+1:], true, nil
		}
	}
	return nil, "", false, nil
}

// inlineValue parses a whole value written on one line: a flow collection or a scalar.
func inlineValue(s string, num, depth int) (*Node, error) {
	s = strings.TrimLeft(s, " ")
	switch {
	case s == "" || s[0] == '#':
		return &Node{Kind: Scalar, Line: num, Type: TypeNull}, nil
	case s[0] == '[' || s[0] == '{':
		f := &flow{s: s, num: num}
		n, err := f.value(depth)
		if err != nil {
			return nil, err
		}
		if !onlyComment(f.s[f.i:]) {
			return nil, errf(num, "unexpected %q after the closing bracket", clip(strings.TrimSpace(f.s[f.i:])))
		}
		return n, nil
	case s[0] == '"' || s[0] == '\'':
		v, n, err := quoted(s, 0, num)
		if err != nil {
			return nil, err
		}
		if !onlyComment(s[n:]) {
			return nil, errf(num, "unexpected %q after the quoted string", clip(strings.TrimSpace(s[n:])))
		}
		return &Node{Kind: Scalar, Line: num, Type: TypeString, Value: v}, nil
	}
	if s = cutComment(s); s == "" {
		return &Node{Kind: Scalar, Line: num, Type: TypeNull}, nil
	}
	return plainScalar(s, num, false)
}

// plainScalar checks and resolves an unquoted scalar.
func plainScalar(s string, num int, inFlow bool) (*Node, error) {
	switch s[0] {
	case '&':
		return nil, errf(num, "anchors (&) are not supported")
	case '*':
		return nil, errf(num, "aliases (*) are not supported")
	case '!':
		return nil, errf(num, "tags (!) are not supported")
	case '@', '`':
		return nil, errf(num, "a plain value cannot start with %q: quote it", s[0])
	case '|', '>':
		return nil, errf(num, "a block scalar (%c) must end its line", s[0])
	case '%':
		return nil, errf(num, "a plain value cannot start with '%%': quote it")
	case '-', '?', ':':
		if len(s) == 1 || s[1] == ' ' {
			return nil, errf(num, "a plain value cannot start with %q followed by a space: quote it", s[:1])
		}
	case ']', '}', ',':
		return nil, errf(num, "unexpected %q", s[:1])
	}
	if i := strings.Index(s, ": "); i >= 0 || strings.HasSuffix(s, ":") {
		return nil, errf(num, "`: ` inside the value %q: quote the value (\"...\")", clip(s))
	}
	if inFlow && strings.ContainsAny(s, "[]{},") {
		return nil, errf(num, "unexpected bracket or comma in %q", clip(s))
	}
	n := &Node{Kind: Scalar, Line: num, Value: s}
	n.Type, n.Value = resolve(s)
	return n, nil
}

var (
	intPattern   = regexp.MustCompile(`^[-+]?[0-9]+$`)
	octPattern   = regexp.MustCompile(`^0o[0-7]+$`)
	hexPattern   = regexp.MustCompile(`^0x[0-9a-fA-F]+$`)
	floatPattern = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
)

// resolve gives a plain scalar its type under YAML 1.2's core schema.
func resolve(s string) (string, string) {
	switch s {
	case "~", "null", "Null", "NULL":
		return TypeNull, ""
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return TypeBool, strings.ToLower(s)
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF":
		return TypeFloat, "+Inf"
	case "-.inf", "-.Inf", "-.INF":
		return TypeFloat, "-Inf"
	case ".nan", ".NaN", ".NAN":
		return TypeFloat, "NaN"
	}
	switch {
	case intPattern.MatchString(s), octPattern.MatchString(s), hexPattern.MatchString(s):
		return TypeInt, s
	case floatPattern.MatchString(s):
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) {
			return TypeFloat, s
		}
	}
	return TypeString, s
}

// quoted parses the quoted scalar that starts at s[i] and returns it and the index after it.
func quoted(s string, i, num int) (string, int, error) {
	q := s[i]
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		c := s[j]
		switch {
		case q == '\'' && c == '\'':
			if j+1 < len(s) && s[j+1] == '\'' {
				b.WriteByte('\'')
				j++
				continue
			}
			return b.String(), j + 1, nil
		case q == '"' && c == '"':
			return b.String(), j + 1, nil
		case q == '"' && c == '\\':
			n, err := escape(s, j, num, &b)
			if err != nil {
				return "", 0, err
			}
			j = n
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errf(num, "the string that starts with %c is not closed on this line (strings on more lines are not supported)", q)
}

// escape decodes the escape sequence at s[j] (a backslash) into b and returns the index of its last byte.
func escape(s string, j, num int, b *strings.Builder) (int, error) {
	if j+1 >= len(s) {
		return 0, errf(num, "a backslash at the end of the line (strings on more lines are not supported)")
	}
	simple := map[byte]string{
		'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", '\t': "\t", 'n': "\n", 'v': "\v", 'f': "\f", 'r': "\r",
		'e': "\x1b", ' ': " ", '"': "\"", '/': "/", '\\': "\\", 'N': "\u0085", '_': "\u00a0", 'L': "\u2028", 'P': "\u2029",
	}
	c := s[j+1]
	if r, ok := simple[c]; ok {
		b.WriteString(r)
		return j + 1, nil
	}
	width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
	if width == 0 {
		return 0, errf(num, "unknown escape \\%c in a double-quoted string", c)
	}
	if j+2+width > len(s) {
		return 0, errf(num, "escape \\%c needs %d hex digits", c, width)
	}
	v, err := strconv.ParseUint(s[j+2:j+2+width], 16, 32)
	if err != nil || v > utf8.MaxRune || (v >= 0xD800 && v <= 0xDFFF) {
		return 0, errf(num, "escape \\%c%s is not a valid character", c, s[j+2:j+2+width])
	}
	b.WriteRune(rune(v))
	return j + 1 + width, nil
}

// flow parses a flow collection on one line.
type flow struct {
	s   string
	i   int
	num int
}

func (f *flow) spaces() {
	for f.i < len(f.s) && (f.s[f.i] == ' ' || f.s[f.i] == '\t') {
		f.i++
	}
}

func (f *flow) value(depth int) (*Node, error) {
	if depth > maxDepth {
		return nil, errf(f.num, "nested more than %d levels deep", maxDepth)
	}
	f.spaces()
	if f.i >= len(f.s) {
		return nil, errf(f.num, "the bracket is not closed on this line (lists and mappings in brackets must fit on one line)")
	}
	switch f.s[f.i] {
	case '[':
		return f.collection(']', depth)
	case '{':
		return f.collection('}', depth)
	case '"', '\'':
		v, n, err := quoted(f.s, f.i, f.num)
		if err != nil {
			return nil, err
		}
		f.i = n
		return &Node{Kind: Scalar, Line: f.num, Type: TypeString, Value: v}, nil
	}
	start := f.i
	for f.i < len(f.s) {
		c := f.s[f.i]
		if c == ',' || c == ']' || c == '}' || (c == ':' && (f.i+1 == len(f.s) || strings.ContainsRune(" ,]}", rune(f.s[f.i+1])))) {
			break
		}
		if c == '[' || c == '{' {
			return nil, errf(f.num, "unexpected %q inside a value in brackets", c)
		}
		if c == '#' && f.i > start && (f.s[f.i-1] == ' ' || f.s[f.i-1] == '\t') {
			return nil, errf(f.num, "a comment inside brackets: lists and mappings in brackets must fit on one line")
		}
		f.i++
	}
	text := strings.TrimRight(f.s[start:f.i], " \t")
	if text == "" {
		return &Node{Kind: Scalar, Line: f.num, Type: TypeNull}, nil
	}
	return plainScalar(text, f.num, true)
}

func (f *flow) collection(closer byte, depth int) (*Node, error) {
	n := &Node{Kind: Sequence, Line: f.num}
	if closer == '}' {
		n.Kind = Mapping
	}
	seen := map[string]bool{}
	f.i++ // the opening bracket
	for {
		f.spaces()
		if f.i >= len(f.s) {
			return nil, errf(f.num, "the %q is not closed on this line (lists and mappings in brackets must fit on one line)", map[byte]string{']': "[", '}': "{"}[closer])
		}
		if f.s[f.i] == closer {
			f.i++
			return n, nil
		}
		item, err := f.value(depth + 1)
		if err != nil {
			return nil, err
		}
		f.spaces()
		if n.Kind == Mapping {
			if item.Kind != Scalar {
				return nil, errf(f.num, "a key in braces must be a scalar")
			}
			if f.i >= len(f.s) || f.s[f.i] != ':' {
				return nil, errf(f.num, "expected ':' after the key %q in braces", clip(item.Value))
			}
			f.i++
			if seen[item.Value] {
				return nil, errf(f.num, "duplicate key %q", item.Value)
			}
			seen[item.Value] = true
			val, err := f.value(depth + 1)
			if err != nil {
				return nil, err
			}
			item.Type = TypeString
			n.Keys = append(n.Keys, item)
			n.Vals = append(n.Vals, val)
			f.spaces()
		} else {
			n.Items = append(n.Items, item)
		}
		if f.i < len(f.s) && f.s[f.i] == ',' {
			f.i++
			continue
		}
		if f.i < len(f.s) && f.s[f.i] == closer {
			continue
		}
		if f.i >= len(f.s) {
			continue // reported as not closed
		}
		return nil, errf(f.num, "expected ',' or %q, got %q", closer, clip(f.s[f.i:]))
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// Decode returns the node as plain Go values, as a JSON encoder shows them: a mapping is a
// map[string]any, a sequence a []any, and a scalar a string, bool, int64, float64 or nil by its type
// (an int that does not fit in an int64, and a float that is not finite, stay strings).
func (n *Node) Decode() any {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case Mapping:
		m := make(map[string]any, len(n.Keys))
		for i, k := range n.Keys {
			m[k.Value] = n.Vals[i].Decode()
		}
		return m
	case Sequence:
		l := make([]any, len(n.Items))
		for i, it := range n.Items {
			l[i] = it.Decode()
		}
		return l
	}
	switch n.Type {
	case TypeNull:
		return nil
	case TypeBool:
		return n.Value == "true"
	case TypeInt:
		if v, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
			return v
		}
	case TypeFloat:
		if v, err := strconv.ParseFloat(n.Value, 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
			return v
		}
	}
	return n.Value
}
