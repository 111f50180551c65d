package webhook

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/robothub/robothub/core/fault"
)

// ErrNotJSON is wrapped by Parse errors for a body that is not a JSON object at all. It is of kind
// fault.Invalid (400).
var ErrNotJSON error = &fault.Error{Kind: fault.Invalid, Msg: "body is not a JSON object"}

// FieldError is a JSON body that is not a valid payload: a required field is missing or a field has
// the wrong type. Field is the dotted path of the field, as the hub spells it ("event.action").
type FieldError struct {
	Field   string
	Problem string // "is missing", "must be a string", ...
}

func (e *FieldError) Error() string { return "payload field " + e.Field + " " + e.Problem }

// Parse decodes raw bytes into a Payload and checks that they are one: an object with event.action,
// event.scope, and a repo with a type and a name. Other fields are optional, so payloads from newer
// hub versions still parse; unknown fields stay available through Payload.Raw, which shares raw.
//
// The decoding is the encoding/json/v2 proposal's (github.com/go-json-experiment/json; the standard
// library's copy needs GOEXPERIMENT=jsonv2 in Go 1.26, which every build would have to set). Its
// defaults are the strictness a receiver wants: names match exactly, duplicate names, invalid UTF-8
// and trailing data are refused. A decoder of this package's own reads the payloads hubs send in
// half the time, to the same result (decode.go); json/v2 decodes whatever it does not take.
//
// The error wraps ErrNotJSON when raw is not a JSON object, and is a *FieldError when it is one but
// not a payload.
func Parse(raw []byte) (*Payload, error) {
	x := new(parsed)
	if err := parseInto(&x.payload, &x.parts, raw); err != nil {
		return nil, err
	}
	return &x.payload, nil
}

// parseInto is Parse into a zero Payload and zero parts that the caller allocated.
func parseInto(p *Payload, parts *payloadParts, raw []byte) error {
	if kind := firstByte(raw); kind != '{' {
		return fmt.Errorf("%w: it is %s", ErrNotJSON, describeJSON(kind))
	}
	if decodePayload(p, parts, raw) != nil {
		// The fast decoder refused it: json.Unmarshal decodes it again and says why, in its words
		// (decode.go). Were the two ever to disagree, the payload would still be json.Unmarshal's.
		*p = Payload{}
		if err := json.Unmarshal(raw, p); err != nil {
			return decodeError(raw, err)
		}
	}
	if err := p.validate(); err != nil {
		return err
	}
	p.Raw = raw
	return nil
}

// decodeError is json.Unmarshal's error on raw, a JSON object, as Parse reports it.
func decodeError(raw []byte, err error) error {
	fe := fieldError(err)
	if fe == nil {
		return fmt.Errorf("%w: %s", ErrNotJSON, syntaxProblem(err))
	}
	// The decoder stops at the first error, which may be a mistyped field before the document
	// breaks. A broken document is reported as such, not as a mistyped field: say where it breaks.
	var v jsontext.Value
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("%w: %s", ErrNotJSON, syntaxProblem(err))
	}
	return fe
}

// syntaxProblem says where and how a body stops being JSON, in the receiver's words rather than the
// decoder's ("invalid JSON at byte 9: unexpected end of input", not "jsontext: unexpected EOF within
// "/event" after offset 9"): the byte offset is what a sender needs to find the fault.
func syntaxProblem(err error) string {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		return err.Error()
	}
	why := strings.TrimPrefix(se.Err.Error(), "jsontext: ")
	switch {
	case errors.Is(se.Err, io.ErrUnexpectedEOF):
		why = "unexpected end of input"
	case strings.Contains(why, "after top-level value"):
		why = "data after the top-level value"
	case strings.Contains(why, "exceeded max depth"):
		why = "nested too deeply"
	case strings.HasPrefix(why, "invalid UTF-8"):
		why = "invalid UTF-8 in a string"
	case strings.HasPrefix(why, "invalid surrogate pair"):
		why = "invalid surrogate pair in a \\u escape"
	}
	return fmt.Sprintf("invalid JSON at byte %d: %s", se.ByteOffset, why)
}

// fieldError turns the decoder's error for a value of the wrong kind into a *FieldError naming the
// field as the hub spells it; it returns nil for any other error.
func fieldError(err error) *FieldError {
	var se *json.SemanticError
	if !errors.As(err, &se) || len(se.JSONPointer) == 0 || se.GoType == nil {
		return nil
	}
	return &FieldError{Field: fieldPath(se.JSONPointer), Problem: "must be " + jsonKind(se.GoType.Kind())}
}

// fieldPath turns the JSON pointer /updatedRefs/0/ref into updatedRefs[0].ref.
func fieldPath(ptr jsontext.Pointer) string {
	var b strings.Builder
	for tok := range ptr.Tokens() {
		switch _, err := strconv.Atoi(tok); {
		case b.Len() == 0:
		case err == nil:
			tok = "[" + tok + "]"
		default:
			tok = "." + tok
		}
		b.WriteString(tok)
	}
	return b.String()
}

// jsonKind names a Go kind the way a JSON author thinks of it.
func jsonKind(kind reflect.Kind) string {
	switch {
	case kind == reflect.String:
		return "a string"
	case kind == reflect.Bool:
		return "a boolean"
	case kind >= reflect.Int && kind <= reflect.Float64:
		return "a number"
	case kind == reflect.Slice || kind == reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

// firstByte is the first byte after JSON whitespace (a digit or '-' reads '0'), or 0.
func firstByte(raw []byte) byte { return byte(jsontext.Value(raw).Kind()) }

func describeJSON(c byte) string {
	switch {
	case c == 0:
		return "empty"
	case c == '[':
		return "a JSON array"
	case c == '"':
		return "a JSON string"
	case c == 'n':
		return "null"
	case c == 't' || c == 'f':
		return "a JSON boolean"
	case c == '-' || c >= '0' && c <= '9':
		return "a JSON number"
	default:
		return fmt.Sprintf("not JSON (it starts with %q)", c)
	}
}

func (p *Payload) validate() error {
	switch {
	case p.Event.Action == "" && p.Event.Scope == "":
		return &FieldError{Field: "event", Problem: "is missing"}
	case p.Event.Action == "":
		return &FieldError{Field: "event.action", Problem: "is missing"}
	case p.Event.Scope == "":
		return &FieldError{Field: "event.scope", Problem: "is missing"}
	case p.Repo.Type == "" && p.Repo.Name == "" && p.Repo.ID == "":
		return &FieldError{Field: "repo", Problem: "is missing"}
	case p.Repo.Type == "":
		return &FieldError{Field: "repo.type", Problem: "is missing"}
	case p.Repo.Name == "":
		return &FieldError{Field: "repo.name", Problem: "is missing"}
	}
	for i, r := range p.UpdatedRefs {
		if r.Ref == "" {
			return &FieldError{Field: fmt.Sprintf("updatedRefs[%d].ref", i), Problem: "is missing"}
		}
	}
	if len(p.UpdatedConfig) > 0 && p.UpdatedConfig[0] != '{' && string(p.UpdatedConfig) != "null" {
		return &FieldError{Field: "updatedConfig", Problem: "must be an object"}
	}
	return nil
}
