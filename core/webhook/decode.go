package webhook

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The payload's decoder: one pass over the body that checks it as json.Unmarshal does by default
// (RFC 8259 syntax, valid UTF-8 and escapes, no control characters in strings, unique member names,
// nothing after the object) and maps member names onto the payload's fields, as json.Unmarshal's
// reflection does. Escaped strings are unquoted, and their escapes checked, by jsontext.
//
// Why by hand: on the hub's 998-byte example payload (BenchmarkParse), json.Unmarshal (json/v2)
// into *Payload takes 3.2–4.2 µs; mapping jsontext.Decoder's tokens onto the fields took as long
// (3.8–4.2 µs, of which reading the tokens is 1.5–2.0 µs); checking the body with
// jsontext.Value.IsValid and then walking it, 2.8–3.0 µs. This decoder takes 1.4–1.8 µs, 1.9–2.2 µs
// when every ID, title and URL is new. Under wrk the decode was half of the receiver's own time
// per delivery, and each microsecond of it cost the receiver about 4% of its throughput against a
// bare net/http handler (issue 21: the target is 85%).
//
// It is only the fast path, and it is conservative: whatever it does not take (any fault, a value
// of a kind its field cannot hold, a number that is no int, an escaped member name, nesting deeper
// than maxFastDepth, an object of more than maxFastMembers members) is decoded again by
// json.Unmarshal, whose payload or error is the one returned: such bodies are rare, and errors keep
// json/v2's wording. FuzzDecoderMatchesJSONv2 checks
// that on any input both accept the same documents and produce the same Payload.

// errFallback says the fast decoder leaves the body to json.Unmarshal.
var errFallback = errors.New("webhook: decode with json.Unmarshal")

// maxFastDepth is the deepest nesting the fast decoder reads (json.Unmarshal reads 10,000 levels).
const maxFastDepth = 64

// maxFastMembers is the most members of one object the fast decoder reads. It looks for a duplicate
// name among the names before, which costs the square of the count: a 660 KB object of 60,000
// members took 6.6 s, where json/v2 (a map past a few names) takes milliseconds. The payload's
// largest object has 9 members.
const maxFastMembers = 64

// payloadDecoder reads one body. It holds what decodes reuse: the member names of the objects being
// read, and the strings of recent payloads.
type payloadDecoder struct {
	b        []byte // the body
	i        int    // the next byte to read
	depth    int
	reformat bool          // json/v2 would write the body otherwise: whitespace between tokens, an escape
	names    [][]byte      // the names of the open objects' members, outermost first
	scratch  []byte        // an escaped string, unquoted
	parts    *payloadParts // where the payload's discussion, comment and changes go
	recent   [256]string
}

// payloadParts are the objects a payload points to that most deliveries carry (a discussion event
// has a discussion, its comment and, for a pull request, its changes). Callers allocate them with
// the Payload (the receiver's delivery, Parse's parsed), which saves an allocation for each: the
// receiver's own allocations per delivery went from 5 to 2 (BenchmarkServeHTTP/own).
type payloadParts struct {
	discussion Discussion
	comment    Comment
	changes    DiscussionChanges
}

// parsed is a Payload and its parts, in one allocation.
type parsed struct {
	payload Payload
	parts   payloadParts
}

// maxInterned is the longest string that payloadDecoder.intern keeps.
const maxInterned = 256

var payloadDecoders = sync.Pool{New: func() any { return new(payloadDecoder) }}

// decodePayload decodes raw, a JSON object, into the zero Payload p, using the zero parts for the
// objects p points to; see the comment above.
func decodePayload(p *Payload, parts *payloadParts, raw []byte) error {
	d := payloadDecoders.Get().(*payloadDecoder)
	err := d.decode(p, parts, raw)
	if cap(d.scratch) <= 64<<10 { // a decoder that unquoted a huge string is let go
		payloadDecoders.Put(d)
	}
	return err
}

// decode is decodePayload with the decoder d.
func (d *payloadDecoder) decode(p *Payload, parts *payloadParts, raw []byte) error {
	d.b, d.i, d.depth, d.reformat, d.parts = raw, 0, 0, false, parts
	err := d.object(func(name []byte) error { return d.payloadField(p, name) })
	if d.peek(); err == nil && d.i < len(d.b) {
		err = errFallback // data after the object
	}
	p.canonical = err == nil && !d.reformat
	clear(d.names[:cap(d.names)])
	d.b, d.names, d.parts = nil, d.names[:0], nil
	return err
}

// intern returns b as a string, the same string as a recent payload's if it had one (a receiver
// sees the same repositories, owners, URLs and events again and again), as json.Unmarshal does.
// The cache is two-way set-associative: a string's slot picks a pair of slots, which holds the
// two newest strings of that pair. (The pair was once the slot and the one beside it, the newest
// string in its own slot: two strings whose slots were the two of a pair then pushed each other
// out, and one payload allocated both of them every time.)
func (d *payloadDecoder) intern(b []byte) string {
	if len(b) == 0 || len(b) > maxInterned {
		return string(b)
	}
	h := internSlot(b) &^ 1
	first, second := &d.recent[h], &d.recent[h+1]
	switch {
	case *first == string(b):
		return *first
	case *second == string(b):
		return *second
	}
	s := string(b)
	*second, *first = *first, s // the newest first, the one it displaces beside it
	return s
}

// internSlot is the slot of d.recent where intern looks for b first: a hash of b's length and of
// its first and last eight bytes, which tell apart the IDs, names and URLs of payloads (URLs share
// their beginnings, not their ends). A collision costs only a string allocated again; maphash over
// the whole string took a fifth of the decoder's time (pprof of BenchmarkParse).
func internSlot(b []byte) uint {
	n := len(b)
	x := uint64(n)
	if n >= 8 {
		x ^= binary.LittleEndian.Uint64(b) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(b[n-8:]), 31)
	} else {
		for _, c := range b {
			x = x<<8 | uint64(c)
		}
	}
	return uint((x * 0x9e3779b97f4a7c15) >> 56) // Fibonacci hashing onto 256 slots
}

// peek skips whitespace and returns the next byte, or 0 at the end.
func (d *payloadDecoder) peek() byte {
	for d.i < len(d.b) {
		// Every byte that starts a token is above the space: one comparison in compact JSON, where
		// the switch of four took an eighth of the decoder's instructions (callgrind, BenchmarkParse).
		c := d.b[d.i]
		if c > ' ' || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
		d.i++
		d.reformat = true
	}
	return 0
}

// literal reads the literal lit (true, false or null) if it is next, whole.
func (d *payloadDecoder) literal(lit string) bool {
	if d.peek() != lit[0] || !bytes.HasPrefix(d.b[d.i:], []byte(lit)) || !d.ends(d.i+len(lit)) {
		return false
	}
	d.i += len(lit)
	return true
}

// ends reports whether a number or literal that stops before b[j] is whole: the body ends there,
// or whitespace or a delimiter follows.
func (d *payloadDecoder) ends(j int) bool {
	if j == len(d.b) {
		return true
	}
	switch d.b[j] {
	case ' ', '\t', '\n', '\r', ',', ']', '}':
		return true
	}
	return false
}

// stringBytes classifies a string's bytes: 0 is plain ASCII, 1 ends or escapes (" and \), 2 is a
// control character (refused unescaped), 3 starts a multi-byte UTF-8 sequence.
var stringBytes = func() (t [256]byte) {
	for c := range 0x20 {
		t[c] = 2
	}
	t['"'], t['\\'] = 1, 1
	for c := 0x80; c < 0x100; c++ {
		t[c] = 3
	}
	return t
}()

// quoted reads a string and returns it with its quotes, and whether it has escapes. The escapes are
// not checked: whoever unquotes the string does that (jsontext.AppendUnquote).
func (d *payloadDecoder) quoted() (q []byte, escaped bool, err error) {
	if d.peek() != '"' {
		return nil, false, errFallback
	}
	start := d.i
	// Most strings are plain ASCII up to the first quote: find the first byte that is not plain,
	// eight at a time, and if it is the quote, the string ends there.
	j := plainEnd(d.b, start+1)
	if j < len(d.b) && d.b[j] == '"' {
		d.i = j + 1
		return d.b[start:d.i], false, nil
	}
	utf := false
	for ; j < len(d.b); j++ {
		switch stringBytes[d.b[j]] {
		case 0:
			continue
		case 2:
			return nil, false, errFallback
		case 3:
			utf = true
			continue
		}
		if d.b[j] == '\\' {
			escaped = true
			j++ // the escaped byte: \" does not end the string
			continue
		}
		if utf && !utf8.Valid(d.b[start+1:j]) {
			return nil, false, errFallback
		}
		d.i = j + 1
		return d.b[start:d.i], escaped, nil
	}
	return nil, false, errFallback // no closing quote
}

// plainEnd returns the index of the first byte of b from i on that is not plain ASCII: a quote, a
// backslash, a control character or a byte of 0x80 or above; len(b) if there is none. It reads eight
// bytes at a time with the zero-byte test of Hacker's Delight (6-1), whose lowest flagged byte is
// always a true one (a borrow only flags bytes above it). Reading bytes one by one was a third of
// the decoder's time; finding the quote with bytes.IndexByte and then checking the bytes before it,
// a fifth (BenchmarkParse, pprof).
func plainEnd(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i : i+8])
		bs, qs := w^(ones*'\\'), w^(ones*'"')
		if m := (w | (w - ones*0x20) | (bs-ones)&^bs | (qs-ones)&^qs) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b) && stringBytes[b[i]] == 0; i++ {
	}
	return i
}

// number reads a number and returns it, checked against RFC 8259's grammar.
func (d *payloadDecoder) number() ([]byte, error) {
	b, start := d.b, d.i
	j := start
	digits := func() bool {
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j > k
	}
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case !digits():
		return nil, errFallback
	}
	if j < len(b) && b[j] == '.' {
		j++
		if !digits() {
			return nil, errFallback
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if !digits() {
			return nil, errFallback
		}
	}
	if !d.ends(j) {
		return nil, errFallback
	}
	d.i = j
	return b[start:j], nil
}

// skip reads any value, checking it.
func (d *payloadDecoder) skip() error {
	switch d.peek() {
	case '"':
		q, escaped, err := d.quoted()
		if err == nil && escaped {
			d.scratch, err = jsontext.AppendUnquote(d.scratch[:0], q)
			d.reformat = true
		}
		return err
	case '{':
		return d.object(func([]byte) error { return d.skip() })
	case '[':
		_, err := d.array(d.skip)
		return err
	case 't':
		return d.literalOr("true")
	case 'f':
		return d.literalOr("false")
	case 'n':
		return d.literalOr("null")
	}
	_, err := d.number()
	return err
}

func (d *payloadDecoder) literalOr(lit string) error {
	if !d.literal(lit) {
		return errFallback
	}
	return nil
}

// open enters an object or array whose first byte is c.
func (d *payloadDecoder) open(c byte) error {
	if d.peek() != c || d.depth == maxFastDepth {
		return errFallback
	}
	d.i++
	d.depth++
	return nil
}

// object reads an object, calling field with each member's name, which is valid only during the
// call; field must read the member's value. A JSON null is no object and no error.
func (d *payloadDecoder) object(field func(name []byte) error) error {
	if d.literal("null") {
		return nil
	}
	if err := d.open('{'); err != nil {
		return err
	}
	base := len(d.names)
	for first := true; ; first = false {
		switch c := d.peek(); {
		case c == '}':
			d.i++
			d.depth--
			clear(d.names[base:])
			d.names = d.names[:base]
			return nil
		case !first && c != ',':
			return errFallback
		case !first:
			d.i++
		}
		q, escaped, err := d.quoted()
		if err != nil || escaped {
			return errFallback
		}
		name := q[1 : len(q)-1]
		if len(d.names)-base == maxFastMembers {
			return errFallback
		}
		for _, seen := range d.names[base:] {
			if string(seen) == string(name) {
				return errFallback // a duplicate name
			}
		}
		d.names = append(d.names, name)
		if d.peek() != ':' {
			return errFallback
		}
		d.i++
		if err := field(name); err != nil {
			return err
		}
	}
}

// array reads an array, calling elem for each element, which must read it. A JSON null is no array.
func (d *payloadDecoder) array(elem func() error) (null bool, err error) {
	if d.literal("null") {
		return true, nil
	}
	if err := d.open('['); err != nil {
		return false, err
	}
	for first := true; ; first = false {
		switch c := d.peek(); {
		case c == ']':
			d.i++
			d.depth--
			return false, nil
		case !first && c != ',':
			return false, errFallback
		case !first:
			d.i++
		}
		if err := elem(); err != nil {
			return false, err
		}
	}
}

// str reads a string into *dst (a JSON null leaves it empty).
func (d *payloadDecoder) str(dst *string) error {
	if d.peek() != '"' {
		if d.literal("null") {
			return nil
		}
		return errFallback
	}
	q, escaped, err := d.quoted()
	switch {
	case err != nil:
		return err
	case !escaped:
		*dst = d.intern(q[1 : len(q)-1])
	default:
		if d.scratch, err = jsontext.AppendUnquote(d.scratch[:0], q); err != nil {
			return errFallback
		}
		*dst = d.intern(d.scratch)
		d.reformat = true
	}
	return nil
}

// optStr reads a string into a new *string, or leaves *dst nil for a JSON null.
func (d *payloadDecoder) optStr(dst **string) error {
	if d.literal("null") {
		return nil
	}
	s := new(string)
	*dst = s
	return d.str(s)
}

func (d *payloadDecoder) boolean(dst *bool) error {
	switch {
	case d.literal("true"):
		*dst = true
	case d.literal("false"), d.literal("null"):
	default:
		return errFallback
	}
	return nil
}

// integer reads a JSON number written as an integer, as json.Unmarshal reads one into an int.
func (d *payloadDecoder) integer(dst *int) error {
	if d.literal("null") {
		return nil
	}
	num, err := d.number()
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(string(num), 10, strconv.IntSize)
	if err != nil {
		return errFallback // a fraction, an exponent, out of range
	}
	*dst = int(n)
	return nil
}

func (d *payloadDecoder) payloadField(p *Payload, name []byte) error {
	switch string(name) {
	case "event":
		return d.object(func(name []byte) error {
			switch string(name) {
			case "action":
				return d.str(&p.Event.Action)
			case "scope":
				return d.str(&p.Event.Scope)
			}
			return d.skip()
		})
	case "repo":
		return d.repo(&p.Repo)
	case "discussion":
		return d.ptr(func() error { p.Discussion = &d.parts.discussion; return d.discussion(p.Discussion) })
	case "comment":
		return d.ptr(func() error { p.Comment = &d.parts.comment; return d.comment(p.Comment) })
	case "webhook":
		return d.ref(&p.Webhook)
	case "movedTo":
		return d.ptr(func() error {
			m := new(MovedTo)
			p.MovedTo = m
			return d.object(func(name []byte) error {
				switch string(name) {
				case "name":
					return d.str(&m.Name)
				case "owner":
					return d.ref(&m.Owner)
				}
				return d.skip()
			})
		})
	case "updatedRefs":
		return d.updatedRefs(&p.UpdatedRefs)
	case "updatedConfig":
		d.peek()
		from := d.i
		if err := d.skip(); err != nil {
			return err
		}
		p.UpdatedConfig = append(p.UpdatedConfig[:0:0], d.b[from:d.i]...) // a copy, as json.RawMessage makes
		return nil
	}
	return d.skip()
}

// ptr reads a pointer to an object: alloc allocates it and reads the object, unless it is null.
func (d *payloadDecoder) ptr(alloc func() error) error {
	if d.literal("null") {
		return nil
	}
	if d.peek() != '{' {
		return errFallback
	}
	return alloc()
}

func (d *payloadDecoder) repo(r *Repo) error {
	return d.object(func(name []byte) error {
		switch string(name) {
		case "type":
			return d.str(&r.Type)
		case "name":
			return d.str(&r.Name)
		case "id":
			return d.str(&r.ID)
		case "private":
			return d.boolean(&r.Private)
		case "url":
			return d.url(&r.URL)
		case "owner":
			return d.ref(&r.Owner)
		case "headSha":
			return d.str(&r.HeadSha)
		case "subdomain":
			return d.str(&r.Subdomain)
		case "tags":
			var tags []string
			null, err := d.array(func() error {
				tags = append(tags, "")
				return d.str(&tags[len(tags)-1])
			})
			if err == nil && !null {
				r.Tags = nonNil(tags)
			}
			return err
		}
		return d.skip()
	})
}

func (d *payloadDecoder) url(u *URL) error {
	return d.object(func(name []byte) error {
		switch string(name) {
		case "web":
			return d.str(&u.Web)
		case "api":
			return d.str(&u.API)
		}
		return d.skip()
	})
}

func (d *payloadDecoder) ref(r *Ref) error {
	return d.object(func(name []byte) error {
		switch string(name) {
		case "id":
			return d.str(&r.ID)
		case "version":
			return d.integer(&r.Version)
		}
		return d.skip()
	})
}

func (d *payloadDecoder) discussion(x *Discussion) error {
	return d.object(func(name []byte) error {
		switch string(name) {
		case "id":
			return d.str(&x.ID)
		case "num":
			return d.integer(&x.Num)
		case "title":
			return d.str(&x.Title)
		case "url":
			return d.url(&x.URL)
		case "status":
			return d.str(&x.Status)
		case "author":
			return d.ref(&x.Author)
		case "isPullRequest":
			return d.boolean(&x.IsPullRequest)
		case "changes":
			return d.ptr(func() error {
				c := &d.parts.changes
				x.Changes = c
				return d.object(func(name []byte) error {
					switch string(name) {
					case "base":
						return d.str(&c.Base)
					case "mergeCommitId":
						return d.str(&c.MergeCommitID)
					}
					return d.skip()
				})
			})
		}
		return d.skip()
	})
}

func (d *payloadDecoder) comment(c *Comment) error {
	return d.object(func(name []byte) error {
		switch string(name) {
		case "id":
			return d.str(&c.ID)
		case "author":
			return d.ref(&c.Author)
		case "content":
			return d.str(&c.Content)
		case "hidden":
			return d.boolean(&c.Hidden)
		case "url":
			return d.url(&c.URL)
		}
		return d.skip()
	})
}

func (d *payloadDecoder) updatedRefs(dst *[]UpdatedRef) error {
	var refs []UpdatedRef
	null, err := d.array(func() error {
		refs = append(refs, UpdatedRef{})
		i := len(refs) - 1
		return d.object(func(name []byte) error {
			switch string(name) {
			case "ref":
				return d.str(&refs[i].Ref)
			case "oldSha":
				return d.optStr(&refs[i].OldSha)
			case "newSha":
				return d.optStr(&refs[i].NewSha)
			}
			return d.skip()
		})
	})
	if err == nil && !null {
		*dst = nonNil(refs)
	}
	return err
}

// nonNil is s, or an empty slice for an empty array: json.Unmarshal decodes [] as empty, not nil.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
