package webhook

import (
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// decodePayload is Parse's decoder: a hand-written scanner for the payload's own shape. It gives
// exactly what json.Unmarshal(raw, &Payload{}) of the encoding/json/v2 proposal gives on valid JSON
// (FuzzDecoderMatchesUnmarshal holds it to that), at about a third of the cost: a receiver parses
// every delivery, so this is its hot path. Strings without escapes are substrings of one copy of
// the input, so a payload costs a few allocations.
//
// It reports syntax errors as errSyntax and values of the wrong kind as *FieldError; Parse checks
// that a document with a wrongly typed value is otherwise valid JSON before it blames the field.
func decodePayload(raw []byte, p *Payload) error {
	d := decoder{data: raw, text: string(raw)}
	d.ws()
	if err := d.payload(p); err != nil {
		return err
	}
	d.ws()
	if d.pos != len(d.data) {
		return d.syntax("data after the top-level value")
	}
	return nil
}

// errSyntax is wrapped by the decoder's syntax errors.
var errSyntax = errors.New("invalid JSON")

type syntaxError struct {
	offset int
	msg    string
}

func (e *syntaxError) Error() string {
	return "invalid JSON at byte " + strconv.Itoa(e.offset) + ": " + e.msg
}
func (e *syntaxError) Unwrap() error { return errSyntax }

// maxDepth bounds nesting, as the general decoder does, so that hostile input cannot exhaust the stack.
const maxDepth = 10000

type decoder struct {
	data  []byte
	text  string // string(data): strings without escapes point into it
	pos   int
	depth int
}

func (d *decoder) syntax(msg string) error { return &syntaxError{offset: d.pos, msg: msg} }

func (d *decoder) ws() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, or 0 at the end.
func (d *decoder) peek() byte {
	d.ws()
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

// object reads an object, calling member for each name; member must read the value. Names must be
// unique within the object, as the general decoder requires.
func (d *decoder) object(member func(name string) error) error {
	if d.peek() != '{' {
		return d.syntax("expected an object")
	}
	d.depth++
	if d.depth > maxDepth {
		return d.syntax("nested too deeply")
	}
	d.pos++
	var seenArr [16]string // names seen so far: on the stack for the objects a payload has
	seen := seenArr[:0]
	var seenSet map[string]bool
	if d.peek() == '}' {
		d.pos++
		d.depth--
		return nil
	}
	for {
		if d.peek() != '"' {
			return d.syntax("expected a member name")
		}
		name, err := d.string()
		if err != nil {
			return err
		}
		// Duplicate names are an error, as in the general decoder (a sender must not smuggle two values).
		if seenSet != nil {
			if seenSet[name] {
				return d.syntax("duplicate member name " + strconv.Quote(name))
			}
			seenSet[name] = true
		} else {
			for _, s := range seen {
				if s == name {
					return d.syntax("duplicate member name " + strconv.Quote(name))
				}
			}
			if len(seen) == cap(seen) {
				seenSet = make(map[string]bool, 2*len(seen))
				for _, s := range seen {
					seenSet[s] = true
				}
				seenSet[name] = true
			} else {
				seen = append(seen, name)
			}
		}
		if d.peek() != ':' {
			return d.syntax("expected ':' after a member name")
		}
		d.pos++
		d.ws()
		if err := member(name); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.pos++
		case '}':
			d.pos++
			d.depth--
			return nil
		default:
			return d.syntax("expected ',' or '}' after a member")
		}
	}
}

// array reads an array, calling elem for each element; elem must read it.
func (d *decoder) array(elem func(i int) error) error {
	if d.peek() != '[' {
		return d.syntax("expected an array")
	}
	d.depth++
	if d.depth > maxDepth {
		return d.syntax("nested too deeply")
	}
	d.pos++
	if d.peek() == ']' {
		d.pos++
		d.depth--
		return nil
	}
	for i := 0; ; i++ {
		d.ws()
		if err := elem(i); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.pos++
		case ']':
			d.pos++
			d.depth--
			return nil
		default:
			return d.syntax("expected ',' or ']' after an element")
		}
	}
}

// string reads a JSON string at d.pos.
func (d *decoder) string() (string, error) {
	start := d.pos + 1
	i := start
	ascii := true
	for i < len(d.data) {
		c := d.data[i]
		switch {
		case c == '"':
			if !ascii && !utf8.Valid(d.data[start:i]) {
				d.pos = start
				return "", d.syntax("invalid UTF-8 in a string")
			}
			d.pos = i + 1
			return d.text[start:i], nil
		case c == '\\':
			d.pos = start
			return d.escapedString(start)
		case c < 0x20:
			d.pos = i
			return "", d.syntax("control character in a string")
		case c >= 0x80:
			ascii = false
		}
		i++
	}
	d.pos = i
	return "", d.syntax("unterminated string")
}

// escapedString decodes a string with escapes, from start (just after the opening quote).
func (d *decoder) escapedString(start int) (string, error) {
	buf := make([]byte, 0, 64)
	i := start
	for i < len(d.data) {
		c := d.data[i]
		switch {
		case c == '"':
			if !utf8.Valid(buf) {
				d.pos = start
				return "", d.syntax("invalid UTF-8 in a string")
			}
			d.pos = i + 1
			return string(buf), nil
		case c < 0x20:
			d.pos = i
			return "", d.syntax("control character in a string")
		case c != '\\':
			buf = append(buf, c)
			i++
			continue
		}
		if i+1 >= len(d.data) {
			break
		}
		switch e := d.data[i+1]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(d.data, i+2)
			if !ok {
				d.pos = i
				return "", d.syntax("invalid \\u escape")
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if i+1 < len(d.data) && d.data[i] == '\\' && d.data[i+1] == 'u' {
					r2, ok = hex4(d.data, i+2)
				}
				dec := utf16.DecodeRune(r, r2)
				if !ok || dec == utf8.RuneError {
					d.pos = i
					return "", d.syntax("invalid surrogate pair in a \\u escape")
				}
				r = dec
				i += 6
			}
			buf = utf8.AppendRune(buf, r)
			continue
		default:
			d.pos = i
			return "", d.syntax("invalid escape")
		}
		i += 2
	}
	d.pos = i
	return "", d.syntax("unterminated string")
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// number reads a JSON number and returns its text.
func (d *decoder) number() (string, error) {
	start, i := d.pos, d.pos
	if i < len(d.data) && d.data[i] == '-' {
		i++
	}
	switch {
	case i < len(d.data) && d.data[i] == '0':
		i++
	case i < len(d.data) && d.data[i] >= '1' && d.data[i] <= '9':
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
	default:
		d.pos = i
		return "", d.syntax("invalid number")
	}
	if i < len(d.data) && d.data[i] == '.' {
		i++
		if i >= len(d.data) || d.data[i] < '0' || d.data[i] > '9' {
			d.pos = i
			return "", d.syntax("invalid number")
		}
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if i >= len(d.data) || d.data[i] < '0' || d.data[i] > '9' {
			d.pos = i
			return "", d.syntax("invalid number")
		}
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
	}
	d.pos = i
	return d.text[start:i], nil
}

// literal reads true, false or null.
func (d *decoder) literal() (byte, error) {
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(d.data)-d.pos >= len(lit) && d.text[d.pos:d.pos+len(lit)] == lit {
			d.pos += len(lit)
			return lit[0], nil
		}
	}
	return 0, d.syntax("invalid literal")
}

// skip reads any value, checking it.
func (d *decoder) skip() error {
	switch c := d.peek(); {
	case c == '{':
		return d.object(func(string) error { return d.skip() })
	case c == '[':
		return d.array(func(int) error { return d.skip() })
	case c == '"':
		_, err := d.string()
		return err
	case c == '-' || c >= '0' && c <= '9':
		_, err := d.number()
		return err
	case c == 't' || c == 'f' || c == 'n':
		_, err := d.literal()
		return err
	case c == 0:
		return d.syntax("unexpected end of input")
	default:
		return d.syntax("unexpected character " + strconv.QuoteRune(rune(c)))
	}
}

// path names a field for an error message: up to three names, with an array index after the
// first. It is only spelled out when there is an error, so decoding a valid payload builds no strings.
type path struct {
	a     string
	index int // a[index]; -1 when a is not an array
	b, c  string
}

func at(name string) path { return path{a: name, index: -1} }

// in is the member name of the object at p.
func (p path) in(name string) path {
	if p.b == "" {
		p.b = name
	} else {
		p.c = name
	}
	return p
}

func (p path) String() string {
	s := p.a
	if p.index >= 0 {
		s += "[" + strconv.Itoa(p.index) + "]"
	}
	for _, n := range []string{p.b, p.c} {
		if n != "" {
			s += "." + n
		}
	}
	return s
}

// wrong reads the value that has the wrong kind for field, then reports it.
func (d *decoder) wrong(field path, want string) error {
	if err := d.skip(); err != nil {
		return err
	}
	return &FieldError{Field: field.String(), Problem: "must be " + want}
}

// isNull reads a null, if that is what comes next.
func (d *decoder) isNull() bool {
	if d.peek() == 'n' && len(d.data)-d.pos >= 4 && d.text[d.pos:d.pos+4] == "null" {
		d.pos += 4
		return true
	}
	return false
}

func (d *decoder) str(dst *string, field path) error {
	switch d.peek() {
	case '"':
		s, err := d.string()
		*dst = s
		return err
	case 'n':
		if d.isNull() {
			return nil
		}
	}
	return d.wrong(field, "a string")
}

func (d *decoder) optStr(dst **string, field path) error {
	if d.isNull() {
		*dst = nil
		return nil
	}
	s := new(string)
	if err := d.str(s, field); err != nil {
		return err
	}
	*dst = s
	return nil
}

func (d *decoder) boolean(dst *bool, field path) error {
	switch d.peek() {
	case 't', 'f', 'n':
		c, err := d.literal()
		if err == nil && c != 'n' {
			*dst = c == 't'
		}
		return err
	}
	return d.wrong(field, "a boolean")
}

func (d *decoder) integer(dst *int, field path) error {
	if c := d.peek(); c == '-' || c >= '0' && c <= '9' {
		text, err := d.number()
		if err != nil {
			return err
		}
		n, perr := strconv.ParseInt(text, 10, strconv.IntSize)
		if perr != nil { // a fraction, an exponent or out of range: not an int
			return &FieldError{Field: field.String(), Problem: "must be a number"}
		}
		*dst = int(n)
		return nil
	}
	if d.isNull() {
		return nil
	}
	return d.wrong(field, "a number")
}

// structure reads an object into a struct field (null leaves it as it is).
func (d *decoder) structure(field path, member func(name string) error) error {
	if d.isNull() {
		return nil
	}
	if d.peek() != '{' {
		return d.wrong(field, "an object")
	}
	return d.object(member)
}

func (d *decoder) payload(p *Payload) error {
	if d.peek() != '{' {
		return d.syntax("the payload is not an object")
	}
	return d.object(func(name string) error {
		switch name {
		case "event":
			return d.structure(at("event"), func(name string) error {
				switch name {
				case "action":
					return d.str(&p.Event.Action, at("event").in("action"))
				case "scope":
					return d.str(&p.Event.Scope, at("event").in("scope"))
				}
				return d.skip()
			})
		case "repo":
			return d.repo(&p.Repo)
		case "discussion":
			return d.discussion(&p.Discussion)
		case "comment":
			return d.comment(&p.Comment)
		case "webhook":
			return d.ref(&p.Webhook, at("webhook"))
		case "movedTo":
			if d.isNull() {
				p.MovedTo = nil
				return nil
			}
			if d.peek() != '{' {
				return d.wrong(at("movedTo"), "an object")
			}
			if p.MovedTo == nil {
				p.MovedTo = new(MovedTo)
			}
			m := p.MovedTo
			return d.object(func(name string) error {
				switch name {
				case "name":
					return d.str(&m.Name, at("movedTo").in("name"))
				case "owner":
					return d.ref(&m.Owner, at("movedTo").in("owner"))
				}
				return d.skip()
			})
		case "updatedRefs":
			return d.updatedRefs(&p.UpdatedRefs)
		case "updatedConfig":
			start := d.pos
			if err := d.skip(); err != nil {
				return err
			}
			p.UpdatedConfig = append([]byte(nil), d.data[start:d.pos]...)
			return nil
		}
		return d.skip()
	})
}

func (d *decoder) ref(r *Ref, field path) error {
	return d.structure(field, func(name string) error {
		switch name {
		case "id":
			return d.str(&r.ID, field.in("id"))
		case "version":
			return d.integer(&r.Version, field.in("version"))
		}
		return d.skip()
	})
}

func (d *decoder) url(u *URL, field path) error {
	return d.structure(field, func(name string) error {
		switch name {
		case "web":
			return d.str(&u.Web, field.in("web"))
		case "api":
			return d.str(&u.API, field.in("api"))
		}
		return d.skip()
	})
}

func (d *decoder) repo(r *Repo) error {
	return d.structure(at("repo"), func(name string) error {
		switch name {
		case "type":
			return d.str(&r.Type, at("repo").in("type"))
		case "name":
			return d.str(&r.Name, at("repo").in("name"))
		case "id":
			return d.str(&r.ID, at("repo").in("id"))
		case "private":
			return d.boolean(&r.Private, at("repo").in("private"))
		case "url":
			return d.url(&r.URL, at("repo").in("url"))
		case "owner":
			return d.ref(&r.Owner, at("repo").in("owner"))
		case "headSha":
			return d.str(&r.HeadSha, at("repo").in("headSha"))
		case "subdomain":
			return d.str(&r.Subdomain, at("repo").in("subdomain"))
		case "tags":
			if d.isNull() {
				r.Tags = nil
				return nil
			}
			if d.peek() != '[' {
				return d.wrong(at("repo").in("tags"), "an array")
			}
			tags := make([]string, 0, 4)
			err := d.array(func(i int) error {
				var s string
				err := d.str(&s, path{a: "repo.tags", index: i})
				tags = append(tags, s)
				return err
			})
			r.Tags = tags
			return err
		}
		return d.skip()
	})
}

func (d *decoder) updatedRefs(dst *[]UpdatedRef) error {
	if d.isNull() {
		*dst = nil
		return nil
	}
	if d.peek() != '[' {
		return d.wrong(at("updatedRefs"), "an array")
	}
	refs := make([]UpdatedRef, 0, 2)
	err := d.array(func(i int) error {
		refs = append(refs, UpdatedRef{})
		r := &refs[len(refs)-1]
		field := path{a: "updatedRefs", index: i}
		return d.structure(field, func(name string) error {
			switch name {
			case "ref":
				return d.str(&r.Ref, path{a: "updatedRefs", index: i, b: "ref"})
			case "oldSha":
				return d.optStr(&r.OldSha, path{a: "updatedRefs", index: i, b: "oldSha"})
			case "newSha":
				return d.optStr(&r.NewSha, path{a: "updatedRefs", index: i, b: "newSha"})
			}
			return d.skip()
		})
	})
	*dst = refs
	return err
}

func (d *decoder) discussion(dst **Discussion) error {
	if d.isNull() {
		*dst = nil
		return nil
	}
	if d.peek() != '{' {
		return d.wrong(at("discussion"), "an object")
	}
	if *dst == nil {
		*dst = new(Discussion)
	}
	x := *dst
	return d.object(func(name string) error {
		switch name {
		case "id":
			return d.str(&x.ID, at("discussion").in("id"))
		case "num":
			return d.integer(&x.Num, at("discussion").in("num"))
		case "title":
			return d.str(&x.Title, at("discussion").in("title"))
		case "url":
			return d.url(&x.URL, at("discussion").in("url"))
		case "status":
			return d.str(&x.Status, at("discussion").in("status"))
		case "author":
			return d.ref(&x.Author, at("discussion").in("author"))
		case "isPullRequest":
			return d.boolean(&x.IsPullRequest, at("discussion").in("isPullRequest"))
		case "changes":
			if d.isNull() {
				x.Changes = nil
				return nil
			}
			if d.peek() != '{' {
				return d.wrong(at("discussion").in("changes"), "an object")
			}
			if x.Changes == nil {
				x.Changes = new(DiscussionChanges)
			}
			c := x.Changes
			return d.object(func(name string) error {
				switch name {
				case "base":
					return d.str(&c.Base, at("discussion").in("changes").in("base"))
				case "mergeCommitId":
					return d.str(&c.MergeCommitID, at("discussion").in("changes").in("mergeCommitId"))
				}
				return d.skip()
			})
		}
		return d.skip()
	})
}

func (d *decoder) comment(dst **Comment) error {
	if d.isNull() {
		*dst = nil
		return nil
	}
	if d.peek() != '{' {
		return d.wrong(at("comment"), "an object")
	}
	if *dst == nil {
		*dst = new(Comment)
	}
	c := *dst
	return d.object(func(name string) error {
		switch name {
		case "id":
			return d.str(&c.ID, at("comment").in("id"))
		case "author":
			return d.ref(&c.Author, at("comment").in("author"))
		case "content":
			return d.str(&c.Content, at("comment").in("content"))
		case "hidden":
			return d.boolean(&c.Hidden, at("comment").in("hidden"))
		case "url":
			return d.url(&c.URL, at("comment").in("url"))
		}
		return d.skip()
	})
}
